"""object_sizes.json: written by a full build, read by the size report; the estimate from it."""
import json

import pytest

from opgen.selection.sizes import (ObjectSizes, estimate, object_sizes_path, read_object_sizes,
                                   write_object_sizes)

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
