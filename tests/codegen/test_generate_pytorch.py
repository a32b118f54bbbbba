"""PyTorch 2.13's whole yaml goes through ``python -m opgen generate``."""
import os

import pytest

from generate_helpers import regenerated, run_generate
from helpers import snapshot


@pytest.fixture(scope="module")
def generated(real_data_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("pytorch-gen")
    yaml = os.path.join(real_data_dir, "native_functions.yaml")
    result = run_generate(yaml, out, "--tags", os.path.join(real_data_dir, "tags.yaml"))
    assert result.returncode == 0, result.stderr
    return yaml, out, result


def test_every_group_is_generated(generated):
    _, out, result = generated
    assert regenerated(result.stdout) == (1342, 1342)
    names = os.listdir(out / "ops")
    assert len([n for n in names if n.endswith("_schema.cpp")]) == 1342
    assert len([n for n in names if n.endswith("_ops.h")]) == 1342
    functions_h = (out / "Functions.h").read_text()
    assert functions_h.count('#include "ops/') == 1342
    lines = [l for l in functions_h.splitlines() if l.startswith("#include")]
    assert lines == sorted(lines)


def test_structured_and_factory_kernels(generated):
    _, out, _ = generated
    cpu = (out / "ops" / "add_CPU.cpp").read_text()
    assert "structured_add_Tensor_CPU_functional final : public native::structured_ufunc_add_CPU" in cpu
    assert "kernel.meta(self, other, alpha);" in cpu
    assert "impl::resize_out" in cpu and "impl::check_inplace" in cpu
    meta = (out / "ops" / "add_Meta.cpp").read_text()
    assert "kernel.impl(" not in meta
    select = (out / "ops" / "empty_BackendSelect.cpp").read_text()
    assert "redispatch(impl::backend_key_set(device)" in select
    schema = (out / "ops" / "add_schema.cpp").read_text()
    assert 'm.def("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");' in schema


def test_second_run_is_a_noop(generated):
    yaml, out, _ = generated
    before = snapshot(out)
    result = run_generate(yaml, out, "--tags", os.path.join(os.path.dirname(yaml), "tags.yaml"))
    assert result.returncode == 0, result.stderr
    assert regenerated(result.stdout) == (0, 1342)
    assert snapshot(out) == before
