"""``opgen init DIR``: a new project with operators of its own, ready for ``scons`` and
``python -m pytest``.  The files are templates under templates/init/, rendered with the
namespace only, so the same DIR and namespace always give the same bytes; opgen.json names the
project's yaml (project.py) for the commands run inside it."""
from __future__ import annotations

import keyword
import os
import re

from .errors import OpgenError
from .project import PROJECT_FILE, project_text

TEMPLATE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates", "init")
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# The runtime's own namespace: a project's operators of that name would clash with it.
RESERVED = {"aten"}


def files_of(namespace: str) -> tuple[tuple[str, str], ...]:
    """(template, path in the project) of every file a project gets."""
    return (
        ("SConstruct.j2", "SConstruct"),
        ("ops.yaml.j2", f"{namespace}.yaml"),
        ("kernel.cpp.j2", f"kernels/{namespace}.cpp"),
        ("test_ops.py.j2", f"tests/test_{namespace}.py"),
        ("conftest.py.j2", "tests/conftest.py"),
        ("pytest.ini.j2", "pytest.ini"),
        ("gitignore.j2", ".gitignore"),
        ("README.md.j2", "README.md"),
    )


def default_namespace(directory: str) -> str:
    """DIR's name as an identifier: lower case, other characters as '_', never a leading digit."""
    name = re.sub(r"\W", "_", os.path.basename(os.path.abspath(directory)).lower(), flags=re.ASCII).strip("_")
    if not name:
        return "myops"
    return f"ops_{name}" if name[0].isdigit() else name


def check_namespace(namespace: str) -> None:
    if not IDENTIFIER.match(namespace) or keyword.iskeyword(namespace):
        raise OpgenError(f"namespace '{namespace}' is not an identifier (it names C++ and Python "
                         "attributes: letters, digits and '_', not starting with a digit)")
    if namespace in RESERVED:
        raise OpgenError(f"namespace '{namespace}' is the runtime's own; pick another")


def render_files(namespace: str) -> dict[str, str]:
    """Path in the project -> text."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATE_DIR), undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, autoescape=False)
    files = {path: env.get_template(template).render(namespace=namespace) for template, path in files_of(namespace)}
    # The project's yaml, for `opgen ops` and `opgen select` run inside it.
    files[PROJECT_FILE] = project_text(f"{namespace}.yaml")
    return files


def scaffold(directory: str, namespace: str | None = None) -> list[str]:
    """Writes the project into ``directory`` (created; an existing one must be empty); returns
    the paths written, relative to it."""
    if os.path.exists(directory) and (not os.path.isdir(directory) or os.listdir(directory)):
        what = "is not empty" if os.path.isdir(directory) else "is a file"
        raise OpgenError(f"{directory} exists and {what}; opgen init writes into a new or empty directory")
    namespace = namespace if namespace is not None else default_namespace(directory)
    check_namespace(namespace)
    files = render_files(namespace)
    for path, text in files.items():
        target = os.path.join(directory, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
    return list(files)
