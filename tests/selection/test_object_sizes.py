"""object_sizes.json: written by a full build, read by the size report; the estimate from it."""
import json

import pytest

from opgen.selection.sizes import (ObjectSizes, estimate, linked_bytes, object_sizes_path, read_object_sizes,
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
    assert data == {"version": 1, "yaml": "yaml/native_functions.yaml", "library_bytes": 20000,
                    "groups": {"add": 1000, "mm": 3000, "relu": 2000}, "sources": {"csrc/a.cpp": 4000}}
    assert list(data["groups"]) == ["add", "mm", "relu"] and text.endswith("\n")


@pytest.mark.parametrize("text", [
    "not json", "[]", '{"version": 2, "groups": {}, "sources": {}}',
    '{"version": 1, "groups": {"add": -1}, "sources": {}}', '{"version": 1, "groups": {"add": true}, "sources": {}}',
    '{"version": 1, "groups": {}, "sources": []}', '{"version": 1, "groups": {}, "sources": {}, "library_bytes": "big"}',
])
def test_unreadable_files_read_as_unknown(tmp_path, text):
    (tmp_path / "object_sizes.json").write_text(text)
    assert read_object_sizes(str(tmp_path)) is None


def test_estimate_scales_the_full_library_by_the_objects_share():
    result = estimate(["add", "mm"], ["csrc/a.cpp"], SIZES)
    assert (result.objects_bytes, result.full_objects_bytes) == (8000, 10000)
    assert (result.library_bytes, result.full_library_bytes) == (16000, 20000)
    assert result.unknown_groups == result.unknown_sources == ()


def test_groups_without_a_recorded_size_count_at_the_mean():
    result = estimate(["add", "new_op"], [], SIZES)
    assert result.objects_bytes == 1000 + 2000 and result.unknown_groups == ("new_op",)
    assert estimate(["add"], [], ObjectSizes(groups={"add": 10})).library_bytes is None


# What GNU ld's -Map writes, cut down: discarded sections first (not counted), then each output
# section with the input sections placed in it, a long input section name on a line of its own.
LINK_MAP = """Archive member included to satisfy reference by file (symbol)

Discarded input sections

 .text._ZN2op3fooEv
                0x0000000000000000       0x99 build/obj/b.os

Memory Configuration

Linker script and memory map

.text           0x0000000000001000      0x200
 *(.text.unlikely .text.*_unlikely .text.unlikely.*)
 .text          0x0000000000001000       0x40 build/obj/a.os
 .text._ZN2op3fooEv
                0x0000000000001040       0x10 build/obj/a.os
 .text          0x0000000000001050       0x30 build/obj/gen/libopgen_shard03.a(mm_unit.os)
                                         0x38 (size before relaxing)

.rodata         0x0000000000002000       0x20
 .rodata        0x0000000000002000        0x8 build/obj/gen/libopgen_shard03.a(mm_unit.os)

.comment        0x0000000000000000       0x27
 .comment       0x0000000000000000       0x27 build/obj/a.os

.debug_info     0x0000000000000000      0x500
 .debug_info    0x0000000000000000      0x500 build/obj/a.os
"""


def test_linked_bytes_count_what_each_object_puts_in_allocated_sections():
    assert linked_bytes(LINK_MAP) == {"build/obj/a.os": 0x50, "build/obj/gen/libopgen_shard03.a(mm_unit.os)": 0x38}
    assert linked_bytes("not a link map") == {}


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
