"""opgen/object_layout.py: what a selective link drops of a full build's objects, read from
small objects compiled as the library's are (one section per function and datum)."""
import shutil
import subprocess

import pytest

from opgen import object_layout

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")

# Two stubs' loops sharing a helper, and an exported function of the loop file (kept in every build).
LOOPS = """
extern "C" { extern __attribute__((visibility("hidden"))) void (*const op_stub_loop_add_stub_CPU)(int*);
             extern __attribute__((visibility("hidden"))) void (*const op_stub_loop_mul_stub_CPU)(int*); }
namespace {
__attribute__((noinline)) void shared(int* x) { for (int i = 0; i < 64; ++i) x[i] += i * 3; }
void add_loop(int* x) { shared(x); for (int i = 0; i < 64; ++i) x[i] += 7; }
void mul_loop(int* x) { shared(x); for (int i = 0; i < 64; ++i) x[i] *= 5; }
}
extern "C" { void (*const op_stub_loop_add_stub_CPU)(int*) = &add_loop;
             void (*const op_stub_loop_mul_stub_CPU)(int*) = &mul_loop; }
int exported_helper(int x) { return x * 11 + 3; }
"""
# The kernels calling them: add's and mul's, each referenced by its group's unit.
KERNELS = """
extern "C" { extern __attribute__((visibility("hidden"))) void (*const op_stub_loop_add_stub_CPU)(int*);
             extern __attribute__((visibility("hidden"))) void (*const op_stub_loop_mul_stub_CPU)(int*); }
void add_kernel(int* x) { op_stub_loop_add_stub_CPU(x); }
void mul_kernel(int* x) { op_stub_loop_mul_stub_CPU(x); }
"""
UNIT = "void {name}_kernel(int* x);\nvoid {name}_wrapper(int* x) {{ {name}_kernel(x); }}\n"


def _compile(tmp_path, name, text):
    source = tmp_path / f"{name}.cpp"
    source.write_text(text)
    obj = tmp_path / f"{name}.os"
    subprocess.run(["g++", "-O1", "-fPIC", "-ffunction-sections", "-fdata-sections", "-c", str(source), "-o", str(obj)],
                   check=True)
    return str(obj)


def test_loops_are_what_each_stub_pointer_alone_reaches_and_callers_are_the_groups_calling_them(tmp_path):
    loops = _compile(tmp_path, "loops", LOOPS)
    kernels = _compile(tmp_path, "kernels", KERNELS)
    units = {name: [_compile(tmp_path, f"{name}_unit", UNIT.format(name=name))] for name in ("add", "mul")}
    found = object_layout.loops(object_layout.read_elf(loops))
    assert set(found) == {"add_stub_CPU", "mul_stub_CPU", "add_stub_CPU,mul_stub_CPU"} and all(found.values())
    memo = str(tmp_path / "layout.json")
    layout = object_layout.analyze(units, {"csrc/native/cpu/loops.cpp": [loops], "csrc/native/k.cpp": [kernels]}, memo)
    assert layout.loops == {"csrc/native/cpu/loops.cpp": found}
    assert layout.stub_callers == {"add_stub_CPU": {"groups": ["add"], "sources": []},
                                   "mul_stub_CPU": {"groups": ["mul"], "sources": []}}
    # Remembered by size and mtime: read again from the memo, the same answers without reading the objects.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(object_layout, "read_elf", lambda path: pytest.fail(f"read {path} again"))
        again = object_layout.analyze(units, {"csrc/native/cpu/loops.cpp": [loops], "csrc/native/k.cpp": [kernels]}, memo)
    assert again == layout


def test_what_is_not_an_elf_object_holds_nothing(tmp_path):
    (tmp_path / "x.os").write_bytes(b"not an object")
    assert object_layout.read_elf(str(tmp_path / "x.os")) is None
    layout = object_layout.analyze({"add": [str(tmp_path / "x.os")]}, {"csrc/a.cpp": [str(tmp_path / "missing.os")]})
    assert layout == object_layout.Layout({"add": 0}, {"add": 0}, {}, {})


def test_a_truncated_object_reads_as_none(tmp_path):
    whole = open(_compile(tmp_path, "loops", LOOPS), "rb").read()
    (tmp_path / "cut.os").write_bytes(whole[:200])
    assert object_layout.read_elf(str(tmp_path / "cut.os")) is None
