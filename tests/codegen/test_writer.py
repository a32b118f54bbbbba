"""writer.py: files are written only when their bytes change, and TreeWriter's directory listing
never makes it skip or clobber a file wrongly."""
import os
import threading

from opgen.writer import TreeWriter, write_if_changed


def read(path):
    with open(path, "rb") as handle:
        return handle.read()


def test_write_if_changed_keeps_unchanged_files_untouched(tmp_path):
    path = tmp_path / "deep" / "dir" / "a.h"
    assert write_if_changed(str(path), "int a;\n")
    os.utime(path, (1, 1))
    assert not write_if_changed(str(path), "int a;\n")
    assert os.stat(path).st_mtime == 1
    assert write_if_changed(str(path), "int b;\n")
    assert read(path) == b"int b;\n" and os.stat(path).st_mtime != 1


def test_tree_writer_creates_rewrites_and_skips(tmp_path):
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "same.h").write_bytes("// ✓\n".encode())
    (tmp_path / "ops" / "old.h").write_bytes(b"old\n")
    os.utime(tmp_path / "ops" / "same.h", (1, 1))
    writer = TreeWriter(str(tmp_path))
    assert writer.write("ops/new.h", "new\n")
    assert not writer.write("ops/same.h", "// ✓\n")
    assert writer.write("ops/old.h", "changed\n")
    assert writer.write("fresh/dir/x.cpp", "x\n")
    assert not writer.write("ops/new.h", "new\n")  # listed as new once; now it exists
    assert writer.write("ops/new.h", "newer\n")
    assert read(tmp_path / "ops" / "new.h") == b"newer\n"
    assert read(tmp_path / "ops" / "old.h") == b"changed\n"
    assert read(tmp_path / "fresh" / "dir" / "x.cpp") == b"x\n"
    assert os.stat(tmp_path / "ops" / "same.h").st_mtime == 1
    assert sorted(os.listdir(tmp_path / "ops")) == ["new.h", "old.h", "same.h"]  # no temp left behind


def test_a_file_created_after_the_listing_is_compared_not_clobbered_blindly(tmp_path):
    writer = TreeWriter(str(tmp_path))
    writer.write("ops/a.h", "a\n")  # lists ops/ while b.h does not exist
    (tmp_path / "ops" / "b.h").write_bytes(b"b\n")
    os.utime(tmp_path / "ops" / "b.h", (1, 1))
    assert not writer.write("ops/b.h", "b\n")
    assert os.stat(tmp_path / "ops" / "b.h").st_mtime == 1
    assert writer.write("ops/b.h", "b2\n") and read(tmp_path / "ops" / "b.h") == b"b2\n"


def test_one_writer_shared_by_threads(tmp_path):
    writer = TreeWriter(str(tmp_path))
    results = {}

    def write_group(group):
        results[group] = [writer.write(f"ops/{group}_{i}.h", f"{group} {i}\n") for i in range(50)]

    threads = [threading.Thread(target=write_group, args=(f"g{n}",)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(all(written) for written in results.values())
    assert len(os.listdir(tmp_path / "ops")) == 400
    assert read(tmp_path / "ops" / "g3_17.h") == b"g3 17\n"
