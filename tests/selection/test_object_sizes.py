"""object_sizes.json: written by a full build, read by the size report; the estimate from it."""
import dataclasses
import json
import shutil
import subprocess

import pytest

from opgen.object_symbols import SymbolMemo
from opgen.selection.sizes import (Measured, ObjectSizes, estimate, object_sizes_path, read_object_sizes,
                                   recorded_sizes, write_object_sizes)

SIZES = ObjectSizes(groups={"mm": 3000, "add": 1000, "relu": 2000}, sources={"csrc/a.cpp": 4000},
                    library_bytes=20000, yaml="yaml/native_functions.yaml")


def test_round_trip_and_format(tmp_path):
    assert read_object_sizes(str(tmp_path)) is None
    assert write_object_sizes(str(tmp_path), SIZES)
    assert not write_object_sizes(str(tmp_path), SIZES)  # same bytes: left alone
    assert read_object_sizes(str(tmp_path)) == SIZES
    with open(object_sizes_path(str(tmp_path)), encoding="utf-8") as handle:
        text = handle.read()
    data = json.loads(text)
    assert data == {"version": 2, "yaml": "yaml/native_functions.yaml", "library_bytes": 20000,
                    "groups": {"add": 1000, "mm": 3000, "relu": 2000}, "sources": {"csrc/a.cpp": 4000},
                    "autograd": {}, "handles": {}, "loops": {}, "stub_callers": {}}
    assert list(data["groups"]) == ["add", "mm", "relu"] and text.endswith("\n")


@pytest.mark.parametrize("text", [
    "not json", "[]", '{"version": 1, "groups": {}, "sources": {}}', '{"version": 3, "groups": {}, "sources": {}}',
    '{"version": 2, "groups": {"add": -1}, "sources": {}}', '{"version": 2, "groups": {"add": true}, "sources": {}}',
    '{"version": 2, "groups": {}, "sources": []}', '{"version": 2, "groups": {}, "sources": {}, "library_bytes": "big"}',
    '{"version": 2, "groups": {}, "sources": {}, "loops": {"csrc/a.cpp": {"x_stub_CPU": -3}}}',
    '{"version": 2, "groups": {}, "sources": {}, "stub_callers": {"x_stub_CPU": {"groups": "add"}}}',
])
def test_unreadable_files_read_as_unknown(tmp_path, text):
    (tmp_path / "object_sizes.json").write_text(text)
    assert read_object_sizes(str(tmp_path)) is None


def test_estimate_scales_the_full_library_by_the_objects_share():
    result = estimate(["add", "mm"], ["csrc/a.cpp"], SIZES)
    assert (result.objects_bytes, result.full_objects_bytes) == (8000, 10000)
    assert (result.library_bytes, result.full_library_bytes) == (16000, 20000)
    assert result.unknown_groups == result.unknown_sources == ()


# A full build whose loop file holds the loops of three stubs: add's alone, mul's alone, and a
# helper both reach; binary.cpp calls them for the add and mul groups; addmm's unit has an
# autograd layer and handles.
LINKED = ObjectSizes(groups={"add": 1000, "mul": 1000, "addmm": 2000}, library_bytes=40000, yaml="y.yaml",
                     sources={"csrc/native/binary.cpp": 1000, "csrc/native/cpu/loops.cpp": 5000, "csrc/core/a.cpp": 10000},
                     autograd={"add": 300, "mul": 300, "addmm": 800}, handles={"add": 100, "mul": 100, "addmm": 200},
                     loops={"csrc/native/cpu/loops.cpp": {"add_stub_CPU": 2000, "add_stub_CPU,mul_stub_CPU": 500,
                                                          "mul_stub_CPU": 1500}},
                     stub_callers={"add_stub_CPU": {"groups": ["add"], "sources": []},
                                   "mul_stub_CPU": {"groups": ["mul"], "sources": []}})
LOOP_SOURCES = ["csrc/native/binary.cpp", "csrc/native/cpu/loops.cpp", "csrc/core/a.cpp"]


def test_the_estimate_leaves_out_the_loops_of_stubs_no_kept_group_calls():
    assert estimate(["add", "mul", "addmm"], LOOP_SOURCES, LINKED).objects_bytes == 20000  # everything
    # mul out: its loop alone goes, the helper add's loop shares stays.
    assert estimate(["add", "addmm"], LOOP_SOURCES, LINKED).objects_bytes == 20000 - 1000 - 1500
    # neither: every loop goes, the loop file's other bytes stay.
    result = estimate(["addmm"], LOOP_SOURCES, LINKED)
    assert result.objects_bytes == 2000 + 1000 + 1000 + 10000 and result.library_bytes == 28000
    # A source calling a stub keeps it whatever the groups.
    callers = {**LINKED.stub_callers, "mul_stub_CPU": {"groups": ["mul"], "sources": ["csrc/core/a.cpp"]}}
    assert estimate(["addmm"], LOOP_SOURCES, dataclasses.replace(LINKED, stub_callers=callers)).objects_bytes == \
        14000 + 500 + 1500


def test_the_estimate_takes_the_autograd_layer_of_inference_groups_and_adds_handles():
    whole = estimate(["add", "mul", "addmm"], LOOP_SOURCES, LINKED).objects_bytes
    assert estimate(["add", "mul", "addmm"], LOOP_SOURCES, LINKED, inference=["addmm", "relu"]).objects_bytes == whole - 800
    assert estimate(["addmm"], LOOP_SOURCES, LINKED, inference=["addmm"], handles=["add", "mul"]).objects_bytes == \
        14000 - 800 + 200


def test_groups_without_a_recorded_size_count_at_the_mean():
    result = estimate(["add", "new_op"], [], SIZES)
    assert result.objects_bytes == 1000 + 2000 and result.unknown_groups == ("new_op",)
    assert estimate(["add"], [], ObjectSizes(groups={"add": 10})).library_bytes is None


def test_a_full_build_replaces_the_figures_and_a_selective_one_merges_into_them():
    full = ObjectSizes(groups={"mm": 10, "add": 20}, sources={"csrc/a.cpp": 5}, library_bytes=100, yaml="y.yaml")
    assert recorded_sizes(None, full) == full
    # The full build's figures stay (an object's share of a library depends on what else is linked);
    # objects it did not have are added.
    selective = ObjectSizes(groups={"mm": 12, "new": 4}, sources={"csrc/b.cpp": 7}, library_bytes=60, yaml="y.yaml")
    merged = recorded_sizes(full, selective, "ops.txt")
    assert merged == ObjectSizes(groups={"mm": 10, "add": 20, "new": 4}, sources={"csrc/a.cpp": 5, "csrc/b.cpp": 7},
                                 library_bytes=100, yaml="y.yaml", selections={"ops.txt": 60})
    # A later full build keeps the selections' libraries (of its yaml) and drops groups it no longer has.
    again = recorded_sizes(merged, ObjectSizes(groups={"mm": 11}, sources={}, library_bytes=90, yaml="y.yaml"))
    assert again == ObjectSizes(groups={"mm": 11}, sources={}, library_bytes=90, yaml="y.yaml",
                                selections={"ops.txt": 60})
    # Another yaml's figures are not merged into.
    other = recorded_sizes(full, ObjectSizes(groups={"scale": 3}, library_bytes=9, yaml="myops.yaml"), "ops.txt")
    assert other == ObjectSizes(groups={"scale": 3}, library_bytes=None, yaml="myops.yaml", selections={"ops.txt": 9})


def test_selections_round_trip(tmp_path):
    sizes = ObjectSizes(groups={"mm": 1}, sources={}, library_bytes=5, yaml="y.yaml", selections={"ops.txt": 3})
    write_object_sizes(str(tmp_path), sizes)
    assert read_object_sizes(str(tmp_path)) == sizes
    assert json.loads((tmp_path / "object_sizes.json").read_text())["selections"] == {"ops.txt": 3}


def test_measured_figures_round_trip_and_follow_their_selections_library(tmp_path):
    measured = Measured(groups={"mm": 2}, sources={"csrc/a.cpp": 1}, linker_bytes=4, library_bytes=7)
    full = ObjectSizes(groups={"mm": 3}, sources={"csrc/a.cpp": 2}, library_bytes=9, yaml="y.yaml")
    selective = recorded_sizes(full, ObjectSizes(groups={"mm": 3}, library_bytes=7, yaml="y.yaml"), "ops.txt", measured)
    assert selective.measured == {"ops.txt": measured} and selective.selections == {"ops.txt": 7}
    write_object_sizes(str(tmp_path), selective)
    assert read_object_sizes(str(tmp_path)) == selective
    assert recorded_sizes(selective, full).measured == {"ops.txt": measured}  # a full build keeps them
    # Linked again without a map (another linker): the old figures are not this library's.
    assert recorded_sizes(selective, ObjectSizes(groups={"mm": 3}, library_bytes=8, yaml="y.yaml"), "ops.txt").measured == {}
    (tmp_path / "object_sizes.json").write_text(json.dumps({**json.loads(object_sizes_json_text(selective)),
                                                            "measured": {"ops.txt": {"groups": {}}}}))
    assert read_object_sizes(str(tmp_path)) is None


def object_sizes_json_text(sizes):
    from opgen.selection.sizes import object_sizes_json
    return object_sizes_json(sizes)


INLINE_USER = """
inline int shared_inline(int x) { int s = 0; for (int i = 0; i < x; ++i) s += i * x; return s; }
int {name}(int x) {{ return shared_inline(x) + {n}; }}
"""


def _compile(tmp_path, name, n):
    source = tmp_path / f"{name}.cpp"
    source.write_text(INLINE_USER.replace("{name}", name).replace("{n}", str(n)).replace("{{", "{").replace("}}", "}"))
    obj = tmp_path / f"{name}.os"
    subprocess.run(["g++", "-O0", "-fPIC", "-c", str(source), "-o", str(obj)], check=True)
    return str(obj)


@pytest.mark.skipif(shutil.which("g++") is None or shutil.which("nm") is None, reason="needs g++ and nm")
def test_linked_bytes_give_an_inline_function_to_the_first_object_in_link_order(tmp_path):
    first, second = _compile(tmp_path, "first_user", 1), _compile(tmp_path, "second_user", 2)
    memo_path = str(tmp_path / "symbols.json")
    forward = SymbolMemo(memo_path).linked_bytes([first, second])
    backward = SymbolMemo(memo_path).linked_bytes([second, first])
    assert forward[first] > forward[second] > 0 and backward[second] > backward[first] > 0
    assert forward[first] - forward[second] == backward[second] - backward[first]  # the inline copy, counted once
    memo = SymbolMemo(memo_path)
    memo.linked_bytes([first, second])
    memo.save()
    # Remembered: an object whose size and mtime are unchanged is not read again (nm is not asked).
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("opgen.object_symbols.nm", lambda *a, **k: pytest.fail("nm ran for remembered objects"))
        assert SymbolMemo(memo_path).linked_bytes([first, second]) == forward
