"""Fixtures for the operator-model tests: the real PyTorch model, and tiny yaml files in tmp_path."""
import os
import shutil
import textwrap

import pytest
import yaml

from opgen.errors import OpgenError
from opgen.model import load_model

# A small tags.yaml: what the rule snippets use, and nothing else (so 'cor' is unknown).
SMALL_TAGS = "".join(f"- tag: {t}\n  desc: test tag\n" for t in (
    "core", "pointwise", "generated", "nondeterministic_seeded", "inplace_view", "view_copy", "inplace", "out",
))


REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def inputs(tmp_path):
    """A private copy of the repo's yaml and tags.yaml, free to edit."""
    for name in ("native_functions.yaml", "tags.yaml"):
        shutil.copy(os.path.join(REPO_ROOT, "yaml", name), tmp_path / name)
    return str(tmp_path / "native_functions.yaml"), str(tmp_path / "tags.yaml")


@pytest.fixture
def cache_dir(tmp_path):
    return str(tmp_path / "cache")


@pytest.fixture(scope="session")
def real_paths(real_data_dir):
    return os.path.join(real_data_dir, "native_functions.yaml"), os.path.join(real_data_dir, "tags.yaml")


@pytest.fixture(scope="session")
def real_model(real_paths):
    """PyTorch 2.13's model, parsed once per session without the parse cache."""
    return load_model(*real_paths)


@pytest.fixture(scope="session")
def real_schemas(real_paths):
    """Every 'func:' of the real file (PyTorch's has no 'ns::' prefixes), in file order."""
    with open(real_paths[0], encoding="utf-8") as handle:
        entries = yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return [e["func"] for e in entries]


class YamlFiles:
    """Writes native_functions.yaml (+ a small tags.yaml) into one directory and loads it."""

    def __init__(self, directory):
        self.dir = directory
        self.yaml = str(directory / "native_functions.yaml")
        self.tags = str(directory / "tags.yaml")
        (directory / "tags.yaml").write_text(SMALL_TAGS, encoding="utf-8")

    def write(self, text: str, dedent: bool = True) -> str:
        with open(self.yaml, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(textwrap.dedent(text) if dedent else text)
        return self.yaml

    def load(self, text: str):
        self.write(text)
        return load_model(self.yaml, self.tags)

    def errors(self, text: str) -> OpgenError:
        """The OpgenError that loading ``text`` must raise."""
        with pytest.raises(OpgenError) as info:
            self.load(text)
        return info.value


@pytest.fixture
def yaml_files(tmp_path):
    return YamlFiles(tmp_path)
