"""An operator named like a namespace the generated code uses (PyTorch's aten::std) gets a handle
struct that does not hide it: op::ops::std would make every `std::optional` inside op::ops name the
struct. The group's unit must compile."""
import os
import shutil
import subprocess

import pytest

from generate_helpers import REPO_ROOT, run_generate

YAML = """\
- func: std(Tensor self, bool unbiased=True) -> Tensor
  variants: function, method
  dispatch:
    CPU: std_cpu

- func: std.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor
  variants: function, method
  dispatch:
    CPU: std_dim_cpu
"""


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_an_operator_named_std_compiles(tmp_path):
    (tmp_path / "native_functions.yaml").write_text(YAML)
    result = run_generate(tmp_path / "native_functions.yaml", tmp_path / "out", "--no-cache")
    assert result.returncode == 0, result.stderr
    handles = (tmp_path / "out" / "ops" / "std_ops.h").read_text()
    assert "struct std_ {" in handles and "struct std_dim {" in handles
    compile_ = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-I", os.path.join(REPO_ROOT, "csrc"),
                               "-I", str(tmp_path / "out"), str(tmp_path / "out" / "ops" / "std_unit.cpp")],
                              capture_output=True, text=True, timeout=300)
    assert compile_.returncode == 0, compile_.stderr[-3000:]
