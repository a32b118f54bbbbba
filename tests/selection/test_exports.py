"""A selective library's version script (opgen/selection/exports.py): the kernels of the groups it
does not register are made local, so --gc-sections drops those nothing in the library calls."""
import os
import shutil
import subprocess

import pytest

from opgen.gen.engine.config import DEFAULT_KEYS, CodegenConfig
from opgen.model import load_model
from opgen.scons.flags import COMMON_CXXFLAGS
from opgen.selection.exports import unregistered_groups, unregistered_kernels, version_script

from helpers import REPO_ROOT

YAML = os.path.join(REPO_ROOT, "yaml")


@pytest.fixture(scope="module")
def model():
    return load_model(os.path.join(YAML, "native_functions.yaml"), os.path.join(YAML, "tags.yaml"))


def test_the_kernels_of_the_groups_left_out_exactly(model):
    everything = [g.name for g in model.operator_groups]
    assert unregistered_groups(model, everything) == []
    assert unregistered_kernels(model, CodegenConfig(DEFAULT_KEYS), everything) == []
    patterns = unregistered_kernels(model, CodegenConfig(DEFAULT_KEYS), [g for g in everything if g not in ("arange", "mm")])
    # arange's plain kernels by their signatures; mm's structured class whole.
    assert "op::native::arange_out(op::Scalar const&, op::TensorBase&)" in patterns
    assert {"op::native::structured_mm_out::*", "vtable for op::native::structured_mm_out",
            "typeinfo for op::native::structured_mm_out", "op::meta::structured_mm::*"} <= set(patterns)
    assert not [p for p in patterns if "addmm" in p]


def test_exact_names_are_quoted_and_globs_bare():
    script = version_script(["op::native::f(long)", "op::native::structured_g_out::*"])
    assert '"op::native::f(long)";' in script and "      op::native::structured_g_out::*;" in script
    assert script.startswith("{\n  local:\n") and version_script([]) == "{ };\n"


@pytest.mark.skipif(shutil.which("g++") is None or shutil.which("nm") is None, reason="needs g++ and nm")
def test_a_hidden_kernel_nothing_calls_leaves_the_library_and_a_called_one_stays_local(tmp_path):
    source = tmp_path / "family.cpp"
    source.write_text("namespace op { namespace native {\n"
                      "int used_cpu(long x) { return int(x) + 1; }\n"
                      "int unused_cpu(long x) { return int(x) * 7; }\n"
                      "int exported(long x) { return used_cpu(x); }\n"
                      "} }\n")
    obj = tmp_path / "family.os"
    subprocess.run(["g++", *COMMON_CXXFLAGS, "-O2", "-c", str(source), "-o", str(obj)], check=True)
    script = tmp_path / "hidden.ver"
    script.write_text(version_script(["op::native::unused_cpu(long)", "op::native::used_cpu(long)"]))
    library = tmp_path / "libfamily.so"
    subprocess.run(["g++", "-shared", "-Wl,--no-undefined", "-Wl,--gc-sections", f"-Wl,--version-script={script}",
                    str(obj), "-o", str(library)], check=True)
    everything = subprocess.run(["nm", "-C", str(library)], capture_output=True, text=True, check=True).stdout
    exported = subprocess.run(["nm", "-C", "-D", "--defined-only", str(library)], capture_output=True, text=True,
                              check=True).stdout
    assert "unused_cpu" not in everything          # hidden and called by nothing: collected
    assert "exported(long)" in exported            # default visibility: a root
    assert "used_cpu" not in exported              # hidden: not exported (inlined or kept local)
