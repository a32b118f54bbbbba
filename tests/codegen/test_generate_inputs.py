"""Bad input to ``python -m opgen generate`` and codegen changes (templates) end to end."""
import os
import shutil

from opgen.model import load_model

from generate_helpers import GROUPS, REPO_ROOT, REPO_TAGS, changed, regenerated, run_generate
from helpers import snapshot

IGNORE = shutil.ignore_patterns("build", "__pycache__", "*.pyc", ".sconsign*", "tests")


def test_bad_yaml_names_file_and_line_and_leaves_the_tree(yaml_copy, tmp_path):
    out = tmp_path / "gen"
    assert run_generate(yaml_copy, out).returncode == 0
    before = snapshot(out)
    text = yaml_copy.read_text()
    yaml_copy.write_text(text.replace("- func: mm(Tensor self, Tensor mat2) -> Tensor", "- func: mm(Tensor self, Tensr mat2) -> Tensor"))
    line = text[: text.index("- func: mm(Tensor self")].count("\n") + 1
    result = run_generate(yaml_copy, out)
    assert result.returncode == 2
    assert f"native_functions.yaml:{line}:" in result.stderr and "Tensr" in result.stderr
    assert "Traceback" not in result.stderr
    assert snapshot(out) == before


def test_unknown_dispatch_key_is_a_usage_error(yaml_copy, tmp_path):
    result = run_generate(yaml_copy, tmp_path / "gen", "--keys", "CPU,Bogus")
    assert result.returncode == 2
    assert "unknown dispatch key 'Bogus'" in result.stderr
    assert not (tmp_path / "gen").exists()


def test_template_edit_rerenders_every_group_but_rewrites_only_changed_bytes(yaml_copy, tmp_path):
    checkout = tmp_path / "checkout"
    shutil.copytree(os.path.join(REPO_ROOT, "opgen"), checkout / "opgen", ignore=IGNORE)
    out = tmp_path / "gen"
    first = run_generate(yaml_copy, out, cwd=tmp_path, python_path=str(checkout))
    assert first.returncode == 0, first.stderr
    before = snapshot(out)
    template = checkout / "opgen" / "templates" / "meta_declarations.h.j2"
    template.write_text(template.read_text().replace("namespace op::meta {", "namespace op::meta {\n// meta classes"))
    result = run_generate(yaml_copy, out, cwd=tmp_path, python_path=str(checkout))
    assert result.returncode == 0, result.stderr
    assert regenerated(result.stdout) == (GROUPS, GROUPS)
    delta = changed(before, snapshot(out))
    assert delta["rewritten"] == delta["different"] == {p for p in before if p.endswith("_meta.h") and p.startswith("ops/")}
    structured_groups = {f.root_name for f in load_model(yaml_copy, REPO_TAGS).functions if f.structured}
    assert len(delta["rewritten"]) == len(structured_groups) > 20
