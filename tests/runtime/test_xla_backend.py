"""The sample external backend (scons --backend=xla): tensors on device "xla" run its kernels
(counted per operator), operators it has no kernel for run on the CPU through its boxed
fallback, and matmul passes its AutogradXLA kernel first. Values are checked against numpy."""
import os
import subprocess
import sys

import numpy as np
import pytest

A = np.array([[0.5, 1.0, 2.0], [3.0, 4.0, 5.5]], dtype=np.float32)
B = np.array([1.5, -0.25, 2.0], dtype=np.float32)
SQUARE = np.array([[1.0, 2.0], [3.0, 4.0]])


def _sigmoid(a):
    return 1 / (1 + np.exp(-a))


# (operator name counted, call on opdispatch tensors (a, b), the same on numpy arrays)
SUPPORTED = [
    ("aten::add.Tensor", lambda od, a, b: od.add(a, b, alpha=2), lambda a, b: a + 2 * b),
    ("aten::sub.Tensor", lambda od, a, b: od.sub(a, b), lambda a, b: a - b),
    ("aten::mul.Tensor", lambda od, a, b: a * b, lambda a, b: a * b),
    ("aten::div.Tensor", lambda od, a, b: a / b, lambda a, b: a / b),
    ("aten::maximum", lambda od, a, b: od.maximum(a, b), np.maximum),
    ("aten::minimum", lambda od, a, b: od.minimum(a, b), np.minimum),
    ("aten::neg", lambda od, a, b: -a, lambda a, b: -a),
    ("aten::abs", lambda od, a, b: od.abs(b), lambda a, b: np.abs(b)),
    ("aten::exp", lambda od, a, b: od.exp(a), lambda a, b: np.exp(a)),
    ("aten::log", lambda od, a, b: od.log(a), lambda a, b: np.log(a)),
    ("aten::sqrt", lambda od, a, b: od.sqrt(a), lambda a, b: np.sqrt(a)),
    ("aten::tanh", lambda od, a, b: od.tanh(a), lambda a, b: np.tanh(a)),
    ("aten::sigmoid", lambda od, a, b: od.sigmoid(a), lambda a, b: _sigmoid(a)),
    # full_codegen: IR nodes run at once through the backend's lowerings (csrc/backends/xla/ir.h)
    ("aten::relu", lambda od, a, b: od.relu(b), lambda a, b: np.maximum(b, 0)),  # shapes: compute_shape_relu
    ("aten::clamp", lambda od, a, b: od.clamp(b, -0.1, 1.75), lambda a, b: np.clip(b, -0.1, 1.75)),  # Scalar operands
    ("aten::sum", lambda od, a, b: a.sum(), lambda a, b: a.sum()),
    ("aten::sum.dim_IntList", lambda od, a, b: a.sum([1], True), lambda a, b: a.sum(1, keepdims=True)),
]

# Operators without an XLA kernel: (fallback counted, call on (od, x), numpy result for A).
UNSUPPORTED = [
    ("aten::cos", lambda od, x: od.cos(x), lambda a: np.cos(a)),
    ("aten::pow.Tensor_Tensor", lambda od, x: x ** x, lambda a: a ** a),
    ("aten::amax", lambda od, x: x.amax([1]), lambda a: a.max(1)),
    ("aten::mean.dim", lambda od, x: x.mean(), lambda a: a.mean()),
    ("aten::gt.Tensor", lambda od, x: x > od.ones([3], device="xla"), lambda a: a > 1),
]


@pytest.fixture(autouse=True)
def fresh_metrics(xla):
    xla.reset_metrics()


def _on_xla(od, xla, array):
    """array as an xla tensor, with the metrics of the move forgotten."""
    t = od.tensor(array).to("xla")
    xla.reset_metrics()
    return t


def _values(t):
    assert t.device == "xla"
    return t.to("cpu").numpy()


def test_round_trip_keeps_values_and_dtypes(opdispatch, xla):
    od = opdispatch
    for array in (np.array([True, False]), np.arange(6, dtype=np.int32).reshape(2, 3), np.arange(3),
                  A, SQUARE):
        cpu = od.tensor(array)
        x = cpu.to("xla")
        assert x.device == "xla" and x.dtype is cpu.dtype and x.shape == cpu.shape
        back = x.to("cpu")
        assert back.device == "cpu" and back.dtype is cpu.dtype
        np.testing.assert_array_equal(back.numpy(), array)
    counts = xla.metrics()["kernels"]
    # Both directions convert at XLA: BackendSelect joins the target device's key to self's (as
    # PyTorch's does), so cpu->xla reaches XLA's _to_copy, which allocates on xla.
    assert counts["aten::empty.memory_format"] == 5 and counts["aten::_to_copy"] == 10
    assert xla.metrics()["fallbacks"] == {}
    converted = od.tensor(A).to("xla").to(od.float64)  # a dtype change on the device
    assert converted.device == "xla" and converted.dtype is od.float64
    np.testing.assert_array_equal(converted.to("cpu").numpy(), A.astype(np.float64))
    assert xla.device() == "xla" and od.tensor([1.0], device=xla.device()).device == "xla"


@pytest.mark.parametrize("name,op,reference", SUPPORTED, ids=[s[0] for s in SUPPORTED])
def test_supported_operator_runs_its_kernel(opdispatch, xla, name, op, reference):
    a, b = _on_xla(opdispatch, xla, A), _on_xla(opdispatch, xla, B)
    result = op(opdispatch, a, b)
    metrics = xla.metrics()
    assert metrics["kernels"] == {name: 1} and metrics["fallbacks"] == {}
    np.testing.assert_allclose(_values(result), reference(A, B), rtol=1e-6)
    assert result.dtype is opdispatch.float32


def test_kernels_promote_and_take_wrapped_numbers(opdispatch, xla):
    od = opdispatch
    ints = _on_xla(od, xla, np.array([1, 2, 3], dtype=np.int32))
    floats = _on_xla(od, xla, B.astype(np.float64))
    mixed = ints + floats
    assert mixed.dtype is od.float64
    np.testing.assert_allclose(_values(mixed), np.array([1, 2, 3]) + B.astype(np.float64))
    halved = ints / 2  # a Python number: a 0-d cpu tensor joins the xla operands
    assert halved.dtype is od.float32
    np.testing.assert_allclose(_values(halved), [0.5, 1.0, 1.5])
    scalar = od.add(ints, od.tensor(10))  # so does an explicit 0-d cpu tensor
    assert scalar.dtype is od.int32
    np.testing.assert_array_equal(_values(scalar), [11, 12, 13])
    assert od.tensor([True]).to("xla").sum().to("cpu").tolist() == 1  # bool sums to int64


def test_inplace_and_out_variants_use_the_functional_kernel(opdispatch, xla):
    od = opdispatch
    x, y = _on_xla(od, xla, A.copy()), _on_xla(od, xla, B)
    returned = x.add_(y)
    assert returned.is_alias_of(x) and x.device == "xla"
    # the generated in-place wrapper: the functional kernel, then copy_ into self
    assert xla.metrics()["kernels"] == {"aten::add.Tensor": 1, "aten::copy_": 1}
    np.testing.assert_allclose(_values(x), A + B)
    out = od.empty([0], device="xla")
    xla.reset_metrics()
    assert od.mul(x, y, out=out).is_alias_of(out)
    assert out.shape == (2, 3)  # resized by the generated out= wrapper
    assert xla.metrics()["kernels"] == {"aten::mul.Tensor": 1, "aten::copy_": 1}
    np.testing.assert_allclose(_values(out), (A + B) * B)
    xla.reset_metrics()
    x.abs_()  # abs comes from full_codegen: its in-place variant is generated too
    total = od.empty([0], device="xla")
    od.sum(x, [0], out=total)
    counts = xla.metrics()["kernels"]
    assert counts["aten::abs"] == 1 and counts["aten::sum.dim_IntList"] == 1 and xla.metrics()["fallbacks"] == {}
    np.testing.assert_allclose(_values(total), np.abs(A + B).sum(0), rtol=1e-6)


@pytest.mark.parametrize("name,op,reference", UNSUPPORTED, ids=[u[0] for u in UNSUPPORTED])
def test_unsupported_operator_falls_back_to_cpu(opdispatch, xla, name, op, reference):
    x = _on_xla(opdispatch, xla, A)
    result = op(opdispatch, x)
    assert xla.metrics()["fallbacks"] == {name: 1}
    np.testing.assert_allclose(_values(result), reference(A), rtol=1e-6)


def test_fallback_runs_mm_with_both_operands_moved(opdispatch, xla):
    od = opdispatch
    a, b = _on_xla(od, xla, A), _on_xla(od, xla, A.T.copy())
    result = od.mm(a, b)
    assert xla.metrics()["fallbacks"] == {"aten::mm": 1} and xla.metrics()["kernels"] == {}
    np.testing.assert_allclose(_values(result), A @ A.T, rtol=1e-6)


def test_fallback_writes_inplace_results_into_the_xla_tensor(opdispatch, xla):
    od = opdispatch
    x = _on_xla(od, xla, A.copy())
    returned = x.cos_()
    assert returned.is_alias_of(x)
    np.testing.assert_allclose(_values(x), np.cos(A), rtol=1e-6)
    row = x[1]  # a view: the write lands in x's memory
    row.sin_()
    expected = np.cos(A)
    expected[1] = np.sin(expected[1])
    np.testing.assert_allclose(_values(x), expected, rtol=1e-6)
    same = _on_xla(od, xla, SQUARE.copy())
    same.pow_(same)  # the same tensor twice: one cpu copy, aliased as on the cpu
    np.testing.assert_allclose(_values(same), SQUARE ** SQUARE)
    assert xla.metrics()["fallbacks"] == {"aten::pow_.Tensor": 1}


def test_fallback_resizes_and_fills_out_tensors(opdispatch, xla):
    od = opdispatch
    x = _on_xla(od, xla, A)
    out = od.empty([0], device="xla")
    returned = od.cos(x, out=out)
    assert returned.is_alias_of(out) and out.shape == (2, 3) and out.device == "xla"
    np.testing.assert_allclose(_values(out), np.cos(A), rtol=1e-6)
    grid = od.zeros([2, 3], device="xla")
    od.exp(x[0], out=grid[1])  # exp has an XLA kernel: its out= wrapper writes through the view
    od.amax(x, [1], out=grid[0][:2])  # amax falls back: the copy back lands in the view
    expected = np.zeros((2, 3), dtype=np.float32)
    expected[1], expected[0, :2] = np.exp(A[0]), A.max(1)
    np.testing.assert_allclose(_values(grid), expected, rtol=1e-6)
    assert xla.metrics()["fallbacks"] == {"aten::cos.out": 1, "aten::amax.out": 1}


def test_composite_operators_reach_xla_kernels_and_the_fallback(opdispatch, xla):
    od = opdispatch
    x = _on_xla(od, xla, A.copy())
    x.zero_()  # CompositeExplicitAutograd: fill_ at XLA, no fallback
    assert _values(x).tolist() == [[0.0] * 3] * 2
    assert xla.metrics()["kernels"]["aten::fill_.Scalar"] == 1 and xla.metrics()["fallbacks"] == {}
    seed = 1234
    on_xla = od.rand([4], generator=od.Generator().manual_seed(seed), device="xla")
    on_cpu = od.rand([4], generator=od.Generator().manual_seed(seed))
    np.testing.assert_array_equal(_values(on_xla), on_cpu.numpy())  # uniform_ fell back
    assert xla.metrics()["fallbacks"] == {"aten::uniform_": 1}


def test_matmul_runs_autograd_kernel_then_falls_back_for_mm(opdispatch, xla):
    od = opdispatch
    a, b = _on_xla(od, xla, SQUARE), _on_xla(od, xla, SQUARE.T.copy())
    result = a @ b
    metrics = xla.metrics()
    assert metrics["autograd"] == {"aten::matmul": 1} and metrics["fallbacks"] == {"aten::mm": 1}
    assert metrics["trace"] == [("autograd", "aten::matmul"), ("fallback", "aten::mm")]
    np.testing.assert_allclose(_values(result), SQUARE @ SQUARE.T)
    vector = _on_xla(od, xla, np.array([1.0, -1.0]))
    np.testing.assert_allclose(_values(od.matmul(a, vector)), SQUARE @ [1.0, -1.0])
    assert xla.metrics()["trace"][:2] == [("autograd", "aten::matmul"), ("fallback", "aten::mm")]
    od.matmul(od.tensor(SQUARE), od.tensor(SQUARE))  # on the cpu: nothing of xla's runs
    assert xla.metrics()["autograd"] == {"aten::matmul": 1}


def test_matmul_out_is_the_autograd_kernel_then_a_copy(opdispatch, xla):
    """matmul.out at AutogradXLA: derived from the listed matmul, as torchgen derives
    native_layer_norm.out for pytorch/xla."""
    od = opdispatch
    a, out = _on_xla(od, xla, SQUARE), _on_xla(od, xla, np.zeros_like(SQUARE))
    xla.reset_metrics()
    returned = od.matmul(a, a, out=out)
    assert xla.metrics()["trace"][:2] == [("autograd", "aten::matmul"), ("fallback", "aten::mm")]
    np.testing.assert_allclose(_values(out), SQUARE @ SQUARE)
    np.testing.assert_allclose(_values(returned), SQUARE @ SQUARE)
    assert opdispatch.dispatcher.dump_table("aten::matmul.out")["AutogradXLA"] == "AutogradXLA kernel"


def test_copy_between_devices_converts_and_broadcasts(opdispatch, xla):
    od = opdispatch
    x = od.zeros([2, 3], dtype=od.float64, device="xla")
    xla.reset_metrics()
    x.copy_(od.tensor(B))  # cpu float32 -> xla float64, broadcast over rows
    assert xla.metrics()["kernels"] == {"aten::copy_": 1}
    np.testing.assert_array_equal(_values(x), np.broadcast_to(B, (2, 3)))
    cpu = od.zeros([2, 3], dtype=od.int64)
    cpu.copy_(_on_xla(od, xla, np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32)))  # xla -> cpu
    assert xla.metrics()["kernels"] == {"aten::copy_": 1}
    assert cpu.tolist() == [[1, 2, 3], [4, 5, 6]]
    square = _on_xla(od, xla, SQUARE.copy())
    square.copy_(square.t())  # overlapping source: read before written, as on the cpu
    assert xla.metrics()["kernels"] == {"aten::copy_": 1} and xla.metrics()["fallbacks"] == {}
    np.testing.assert_array_equal(_values(square), SQUARE.T)


def test_factories_allocate_on_xla(opdispatch, xla):
    od = opdispatch
    cases = [
        (od.zeros([2, 3], device="xla"), np.zeros((2, 3), np.float32)),
        (od.ones([3], dtype=od.int32, device="xla"), np.ones(3, np.int32)),
        (od.full([2], 7, device="xla"), np.full(2, 7)),
        (od.full([2], 2.5, dtype=od.float64, device="xla"), np.full(2, 2.5)),
        (od.arange(5, device="xla"), np.arange(5)),
        (od.arange(1, 2, 0.25, device="xla"), np.arange(1, 2, 0.25, dtype=np.float32)),
        (od.zeros_like(od.ones([2], device="xla")), np.zeros(2, np.float32)),
    ]
    for tensor, expected in cases:
        got = _values(tensor)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)
    strided = od.empty_strided([2, 3], [1, 2], device="xla")
    assert strided.device == "xla" and strided.strides == (1, 2)
    metrics = xla.metrics()
    assert metrics["kernels"]["aten::empty_strided"] == 1
    assert metrics["fallbacks"] == {"aten::arange.start_out": 2}  # arange fills its out= tensor on the cpu
    with pytest.raises(od.Error, match="empty: pin_memory=True is not supported on xla"):
        od.empty([2], device="xla", pin_memory=True)
    with od.dispatcher.include_keys("XLA"):  # sends a cpu request to the XLA kernel
        with pytest.raises(od.Error, match="empty \\(XLA kernel\\): cannot allocate on device cpu"):
            od.empty([2], device="cpu")


def test_mixing_devices_and_bad_dtypes_raise(opdispatch, xla):
    od = opdispatch
    x = _on_xla(od, xla, A)
    cpu = od.tensor(A)
    with pytest.raises(od.Error, match="add: expected all tensors on the same device, but self is on xla and other is on cpu"):
        x + cpu
    with pytest.raises(od.Error, match="add: expected all tensors on the same device, but self is on cpu and other is on xla"):
        cpu + x
    with pytest.raises(od.Error, match="mm: expected all tensors on the same device, but found tensors on xla and on cpu"):
        od.mm(x, cpu.t())
    with pytest.raises(od.Error, match="add: expected all tensors on the same device, but self is on xla and other is on xla:1"):
        x + od.tensor(A, device="xla:1")
    ints = _on_xla(od, xla, np.array([1, 2, 3]))
    with pytest.raises(od.Error, match="can't be cast to the desired output type int64"):
        ints.add_(od.tensor([0.5, 1.5, 2.5]).to("xla"))  # XLA kernel, in-place
    with pytest.raises(od.Error, match="cos: result type float32 can't be cast to the desired output type int64"):
        ints.cos_()  # fallback, in-place
    with pytest.raises(od.Error, match="Expected out tensor to have dtype float32, but got int64"):
        od.add(x, x, out=od.empty([2, 3], dtype=od.int64, device="xla"))
    with pytest.raises(od.Error, match="The size of tensor a \\(3\\) must match the size of tensor b \\(2\\)"):
        x + od.ones([2], device="xla")
    np.testing.assert_array_equal(_values(ints), [1, 2, 3])  # failed in-place calls left it alone


def test_reset_metrics_empties_counters_and_trace(opdispatch, xla):
    x = _on_xla(opdispatch, xla, A)
    opdispatch.cos(x + x)
    metrics = xla.metrics()
    assert metrics["kernels"] == {"aten::add.Tensor": 1} and metrics["fallbacks"] == {"aten::cos": 1}
    assert metrics["trace"] == [("kernel", "aten::add.Tensor"), ("fallback", "aten::cos")]
    xla.reset_metrics()
    assert xla.metrics() == {"kernels": {}, "fallbacks": {}, "autograd": {}, "trace": []}


def test_dispatch_table_shows_kernels_and_fallback(opdispatch, xla):
    table = opdispatch.dispatcher.dump_table
    assert table("aten::add.Tensor")["XLA"] == "XLA kernel"
    assert table("aten::cos")["XLA"] == "xla cpu fallback"
    assert table("aten::matmul")["AutogradXLA"] == "AutogradXLA kernel"
    assert table("aten::zero_")["XLA"] == "CompositeExplicitAutograd kernel"  # composites beat the fallback
    assert repr(opdispatch.ones([2], device="xla")) == "tensor([1., 1.], device='xla')"


def test_module_without_the_backend_says_how_to_build_it(python_tree_without):
    # A build without --backend=xla has no opdispatch/_xla (the test once blocked its import in
    # sys.modules instead, and so missed that a real build without it failed to import).
    script = (
        "import opdispatch.xla as xla\n"
        "assert not xla.is_built() and xla.device() == 'xla'\n"
        "try:\n"
        "    xla.metrics()\n"
        "except RuntimeError as e:\n"
        "    print(e)\n"
    )
    env = dict(os.environ, PYTHONPATH=python_tree_without("_xla"))
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    assert "build it with scons --backend=xla" in run.stdout


def test_full_codegen_operators_run_as_ir_nodes_lowered_by_the_backend(opdispatch, xla):
    """abs, sigmoid, relu and clamp are full_codegen: the generated kernel makes an IR node (clamp's
    min and max as constant operands) and the sample's runtime lowers it at once through the
    hand-written lower_<kernel> (ir_lowerings.cpp); the derived in-place and out= variants too."""
    od = opdispatch
    x = _on_xla(od, xla, A - 2)
    for low in (0.0, 0.5, 1.25):  # a new value each call: an operand, read by the lowering
        np.testing.assert_allclose(_values(od.clamp(x, low, None)), np.clip(A - 2, low, None))
    xla.reset_metrics()
    y = od.relu(x)
    y.clamp_(max=0.5)
    assert xla.metrics()["kernels"] == {"aten::clamp": 1, "aten::relu": 1, "aten::copy_": 1}
    assert xla.metrics()["fallbacks"] == {}
    np.testing.assert_allclose(_values(y), np.clip(np.maximum(A - 2, 0), None, 0.5))
