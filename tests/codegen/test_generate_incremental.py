"""``python -m opgen generate``: only changed groups regenerate, only changed bytes are written."""
import os
import time

from generate_helpers import GROUPS, changed, regenerated, run_generate
from helpers import snapshot


def edit(path, old, new, count=1):
    text = path.read_text()
    assert text.count(old) >= count, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, count))


def generate(yaml, out):
    result = run_generate(yaml, out)
    assert result.returncode == 0, result.stderr
    return result


def first_build(yaml, out):
    result = generate(yaml, out)
    n, m = regenerated(result.stdout)
    assert n == m == GROUPS
    time.sleep(0.01)  # distinct mtimes for anything rewritten later
    return snapshot(out)


def test_noop_regenerates_nothing_and_writes_nothing(yaml_copy, tmp_path):
    out = tmp_path / "gen"
    before = first_build(yaml_copy, out)
    result = generate(yaml_copy, out)
    assert regenerated(result.stdout) == (0, GROUPS)
    assert "0 files written" in result.stdout
    assert changed(before, snapshot(out)) == {"added": set(), "removed": set(), "rewritten": set(), "different": set()}


def test_default_edit_rewrites_only_that_groups_files(yaml_copy, tmp_path):
    out = tmp_path / "gen"
    before = first_build(yaml_copy, out)
    edit(yaml_copy, "- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1)",
         "- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=2)")
    result = generate(yaml_copy, out)
    assert regenerated(result.stdout) == (1, GROUPS)
    delta = changed(before, snapshot(out))
    assert delta["added"] == delta["removed"] == set()
    # The default lives in the free function, the method overloads' definitions (inside class
    # op::Tensor, so only code calling methods recompiles) and the schema; the unit names the
    # schema's digest.
    assert delta["rewritten"] == delta["different"] == {
        "ops/add.h", "ops/add_methods.h", "ops/add_schema.cpp", "ops/add_unit.cpp"}


def test_adding_an_operator_adds_files_and_touches_only_umbrellas(yaml_copy, tmp_path):
    out = tmp_path / "gen"
    before = first_build(yaml_copy, out)
    with open(yaml_copy, "a", encoding="utf-8") as handle:
        handle.write("\n- func: frac(Tensor self) -> Tensor\n  variants: function, method\n  dispatch:\n    CPU: frac\n")
    result = generate(yaml_copy, out)
    assert regenerated(result.stdout) == (1, GROUPS + 1)
    delta = changed(before, snapshot(out))
    assert delta["added"] == {"ops/frac.h", "ops/frac_ops.h", "ops/frac_native.h", "ops/frac_schema.cpp",
                              "ops/frac_methods.h", "ops/frac_CPU.cpp", "ops/frac_unit.cpp"}
    assert delta["removed"] == set()
    assert delta["rewritten"] == {"Functions.h", "MethodOperators.h", "NativeFunctions.h", "Operators.h", "TensorMethods.h"}


def test_removing_an_operator_deletes_its_files(yaml_copy, tmp_path):
    out = tmp_path / "gen"
    before = first_build(yaml_copy, out)
    text = yaml_copy.read_text()
    start = text.index("- func: reshape(")
    end = text.index("- func:", start + 1)
    yaml_copy.write_text(text[:start] + text[end:])
    result = generate(yaml_copy, out)
    assert regenerated(result.stdout) == (0, GROUPS - 1)
    delta = changed(before, snapshot(out))
    assert delta["removed"] == {p for p in before if p.startswith("ops/reshape")}
    assert len(delta["removed"]) >= 5
    assert delta["added"] == set()
    assert delta["rewritten"] == {"Functions.h", "MethodOperators.h", "NativeFunctions.h", "Operators.h", "TensorMethods.h"}
    assert not any(name.startswith("reshape") for name in os.listdir(out / "ops"))


def test_comments_and_entry_order_change_nothing(yaml_copy, tmp_path):
    out = tmp_path / "gen"
    before = first_build(yaml_copy, out)
    text = yaml_copy.read_text()
    header, _, body = text.partition("\n- func:")
    entries = ("- func:" + body).split("\n- func:")
    entries = [entries[0]] + ["- func:" + e for e in entries[1:]]
    reordered = header + "\n# a comment that shifts every line\n\n" + "\n".join(reversed([e.rstrip("\n") + "\n" for e in entries]))
    yaml_copy.write_text(reordered)
    result = generate(yaml_copy, out)
    assert regenerated(result.stdout) == (0, GROUPS)
    assert changed(before, snapshot(out))["rewritten"] == set()


def test_deleted_output_file_is_restored(yaml_copy, tmp_path):
    out = tmp_path / "gen"
    first_build(yaml_copy, out)
    os.unlink(out / "ops" / "mm_CPU.cpp")
    result = generate(yaml_copy, out)
    assert regenerated(result.stdout) == (1, GROUPS)
    assert (out / "ops" / "mm_CPU.cpp").is_file()
