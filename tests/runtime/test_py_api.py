"""The torch-like Python API: opdispatch.<op> functions and Tensor methods exactly per the
yaml's variants, Python operators against numpy, out=, indexing, conversions, printing, and
errors that name the operator or function."""
import os

import numpy as np
import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPO_YAML = os.path.join(REPO_ROOT, "yaml", "native_functions.yaml")
RNG = np.random.default_rng(5)
NUMERIC = ["int32", "int64", "float32", "float64"]


def sample(shape, dtype):
    if dtype == "bool":
        return RNG.random(shape) > 0.5
    if dtype.startswith("int"):
        return RNG.integers(-5, 6, shape).astype(dtype)
    return (RNG.standard_normal(shape) * 3).astype(dtype)


def nonzero(shape, dtype):
    a = sample(shape, dtype)
    a[a == 0] = 1
    return a


# --- functions and methods are exactly the yaml's variants -------------------------------------


def test_functions_are_exactly_the_function_variants(opdispatch, yaml_variants_of):
    functions, _ = yaml_variants_of(REPO_YAML)
    overload_set = opdispatch._C._OverloadSet
    exposed = {name for name, value in vars(opdispatch).items() if isinstance(value, overload_set)}
    assert exposed == set(functions)
    for name, overloads in functions.items():
        assert getattr(opdispatch, name).overloads == sorted(overloads), name
    public = [n for n in functions if not n.startswith("_")]
    assert set(public) <= set(opdispatch.__all__) and "_to_copy" not in opdispatch.__all__
    assert all(hasattr(opdispatch, name) for name in opdispatch.__all__)


def test_methods_are_exactly_the_method_variants(opdispatch, yaml_variants_of):
    _, methods = yaml_variants_of(REPO_YAML)
    overload_set = opdispatch._C._OverloadSet
    exposed = {name for name, value in vars(opdispatch.Tensor).items()
               if isinstance(value, overload_set) and not name.startswith("__")}
    assert exposed | {"to"} == set(methods)  # `to` wraps its set to take torch's x.to("cpu")
    for name, overloads in methods.items():
        method = vars(opdispatch.Tensor)[name]
        if name != "to":
            assert method.overloads == sorted(overloads), name
    for function_only in ("zeros", "arange", "_to_copy", "view_copy", "empty_like"):
        assert not hasattr(opdispatch.Tensor, function_only)
    for method_only in ("add_", "view", "to", "copy_", "expand", "contiguous"):
        assert not hasattr(opdispatch, method_only)


def test_brief_examples(opdispatch):
    x = opdispatch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    y = opdispatch.tensor([10.0, 20.0, 30.0])
    np.testing.assert_array_equal(opdispatch.add(x, y, alpha=2).numpy(), x.numpy() + 2 * y.numpy())
    np.testing.assert_array_equal(opdispatch.sum(x, [1], True).numpy(), [[6.0], [15.0]])
    np.testing.assert_array_equal(x.sum([1], True).numpy(), [[6.0], [15.0]])
    assert x.sum().item() == 21.0
    z = opdispatch.zeros([2, 3], dtype=opdispatch.float64)
    assert z.dtype is opdispatch.float64 and z.shape == (2, 3) and not z.numpy().any()
    assert opdispatch.arange(5).tolist() == [0, 1, 2, 3, 4]
    r = opdispatch.rand(2, 3)
    assert r.shape == (2, 3) and r.dtype is opdispatch.float32 and ((r.numpy() >= 0) & (r.numpy() < 1)).all()
    np.testing.assert_array_equal(opdispatch.where(x > 2, x, opdispatch.zeros_like(x)).numpy(),
                                  np.where(x.numpy() > 2, x.numpy(), 0))
    np.testing.assert_array_equal(x.where(x > 2, opdispatch.zeros_like(x)).numpy(), np.where(x.numpy() > 2, x.numpy(), 0))
    np.testing.assert_array_equal(x.t().numpy(), x.numpy().T)
    assert x.t().is_alias_of(x)
    for view in (x.view([3, 2]), x.view(3, 2), x.reshape(3, 2)):
        np.testing.assert_array_equal(view.numpy(), x.numpy().reshape(3, 2))
    np.testing.assert_array_equal(x.permute(1, 0).numpy(), x.numpy().T)
    np.testing.assert_array_equal(y.expand(2, 3).numpy(), np.broadcast_to(y.numpy(), (2, 3)))
    assert opdispatch.zeros(2, 3).shape == (2, 3) and opdispatch.ones(4).tolist() == [1.0] * 4
    assert opdispatch.tensor([[1], [2]]).squeeze(0, 1).shape == (2,)  # squeeze.dims from varargs


def test_to_takes_torch_forms(opdispatch):
    x = opdispatch.tensor([1.5, 2.5])
    assert x.to(opdispatch.float64).dtype is opdispatch.float64
    assert x.to(dtype=opdispatch.int32).tolist() == [1, 2]
    assert x.to("cpu").tolist() == [1.5, 2.5] and x.to("cpu").is_alias_of(x)  # nothing changes: self
    meta = x.to("meta")
    assert meta.device == "meta" and meta.shape == (2,)
    assert x.to("cpu", opdispatch.int64).dtype is opdispatch.int64
    assert x.to(device="meta", dtype=opdispatch.float64).dtype is opdispatch.float64
    assert x.to(opdispatch.tensor([1], dtype=opdispatch.int32)).dtype is opdispatch.int32


def test_out_arguments_return_the_tensor_passed(opdispatch):
    x, y = opdispatch.tensor(sample((2, 3), "float32")), opdispatch.tensor(sample((3,), "float32"))
    out = opdispatch.empty([2, 3])
    result = opdispatch.add(x, y, alpha=3, out=out)
    assert result is out
    np.testing.assert_allclose(out.numpy(), x.numpy() + 3 * y.numpy(), rtol=1e-6)
    total = opdispatch.empty([0])
    assert opdispatch.sum(x, [0], out=total) is total and total.shape == (3,)
    with pytest.raises(TypeError, match=r"Tensor\.add\(\): no overload accepts"):
        x.add(y, out=out)  # methods have no out= overloads


def test_method_on_a_tensor_of_another_overload(opdispatch):
    x = opdispatch.tensor([1.0, 4.0])
    assert x.pow(2).tolist() == [1.0, 16.0] and x.pow(x).tolist() == [1.0, 256.0]
    assert opdispatch.pow(2, x).tolist() == [2.0, 16.0]  # pow.Scalar is a function only
    assert opdispatch.Tensor.add(x, x).tolist() == [2.0, 8.0]  # unbound method


# --- Python operators vs numpy ------------------------------------------------------------------

BINARY = {
    "+": (lambda a, b: a + b, np.add),
    "-": (lambda a, b: a - b, np.subtract),
    "*": (lambda a, b: a * b, np.multiply),
    "/": (lambda a, b: a / b, np.true_divide),
    "==": (lambda a, b: a == b, np.equal),
    "!=": (lambda a, b: a != b, np.not_equal),
    "<": (lambda a, b: a < b, np.less),
    "<=": (lambda a, b: a <= b, np.less_equal),
    ">": (lambda a, b: a > b, np.greater),
    ">=": (lambda a, b: a >= b, np.greater_equal),
}
COMPARISONS = {"==", "!=", "<", "<=", ">", ">="}


def expected_dtype(op, dtype):
    if op in COMPARISONS:
        return "bool"
    if op == "/" and dtype.startswith("int"):
        return "float32"
    return dtype


def check(result, expected, dtype, opdispatch):
    assert result.dtype is getattr(opdispatch, dtype)
    np.testing.assert_allclose(result.numpy().astype(np.float64), np.asarray(expected).astype(np.float64),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("op", list(BINARY))
def test_binary_operators_with_tensors_broadcast_and_transposed(opdispatch, op, dtype):
    python_op, numpy_op = BINARY[op]
    a = sample((4, 3), dtype)
    b = nonzero((3, 4), dtype).T  # non-contiguous
    c = nonzero((3,), dtype)      # broadcast
    ta, tb, tc = opdispatch.tensor(a), opdispatch.from_numpy(b), opdispatch.tensor(c)
    assert not tb.is_contiguous()
    check(python_op(ta, tb), numpy_op(a, b), expected_dtype(op, dtype), opdispatch)
    check(python_op(ta, tc), numpy_op(a, c), expected_dtype(op, dtype), opdispatch)


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("op", list(BINARY))
def test_binary_operators_with_python_numbers_both_sides(opdispatch, op, dtype):
    python_op, numpy_op = BINARY[op]
    a = nonzero((2, 3), dtype)
    t = opdispatch.tensor(a)
    number = 3
    check(python_op(t, number), numpy_op(a, np.array(number, dtype=dtype)), expected_dtype(op, dtype), opdispatch)
    check(python_op(number, t), numpy_op(np.array(number, dtype=dtype), a), expected_dtype(op, dtype), opdispatch)


@pytest.mark.parametrize("op", ["+", "-", "*", "/"])
def test_a_float_number_promotes_an_int_tensor_to_float32(opdispatch, op):
    python_op, numpy_op = BINARY[op]
    a = nonzero((5,), "int32")
    t = opdispatch.tensor(a)
    check(python_op(t, 2.5), numpy_op(a.astype(np.float32), np.float32(2.5)), "float32", opdispatch)
    check(python_op(2.5, t), numpy_op(np.float32(2.5), a.astype(np.float32)), "float32", opdispatch)
    # A number keeps a float64 tensor's precision (not rounded to float32 first).
    d = opdispatch.tensor([1.0, 2.0], dtype=opdispatch.float64)
    np.testing.assert_array_equal(python_op(0.1, d).numpy(), numpy_op(0.1, np.array([1.0, 2.0])))


@pytest.mark.parametrize("dtype", ["int64", "float32", "float64"])
def test_power_and_matmul(opdispatch, dtype):
    a = np.abs(nonzero((3, 3), dtype))
    t = opdispatch.tensor(a)
    check(t ** 2, a ** 2, dtype, opdispatch)
    check(2 ** t, np.array(2, dtype=dtype) ** a, dtype, opdispatch)
    check(t ** t, a ** a, dtype, opdispatch)
    check(t @ t.t(), a @ a.T, dtype, opdispatch)


@pytest.mark.parametrize("dtype", NUMERIC)
def test_unary_operators(opdispatch, dtype):
    a = sample((2, 3), dtype)
    t = opdispatch.tensor(a)
    check(-t, -a, dtype, opdispatch)
    check(abs(t), np.abs(a), dtype, opdispatch)
    assert +t is t


@pytest.mark.parametrize("dtype", ["int64", "float32", "float64"])
def test_in_place_operators_write_into_the_same_tensor(opdispatch, dtype):
    a, b = sample((2, 3), dtype), nonzero((3,), dtype)
    t, u = opdispatch.tensor(a), opdispatch.tensor(b)
    original = t
    t += u
    t -= 2
    t *= u
    assert t is original
    np.testing.assert_allclose(t.numpy(), ((a + b) - 2) * b, rtol=1e-6)
    if dtype != "int64":
        t /= u
        np.testing.assert_allclose(t.numpy(), (((a + b) - 2) * b) / b, rtol=1e-5)
    else:
        with pytest.raises(opdispatch.Error, match="^div"):
            t /= u  # a float result cannot go into an int tensor
    x = opdispatch.tensor([1.0, 2.0])
    assert x.add_(x) is x and x.tolist() == [2.0, 4.0]


def test_operators_on_meta_tensors_give_shapes(opdispatch):
    a = opdispatch.empty([2, 1, 3], device="meta")
    b = opdispatch.empty([4, 1], device="meta", dtype=opdispatch.float64)
    result = a * b + 1
    assert result.device == "meta" and result.shape == (2, 4, 3) and result.dtype is opdispatch.float64
    assert (a < 0).dtype is opdispatch.bool and (-a).shape == (2, 1, 3)


def test_unsupported_operands_raise_type_error(opdispatch):
    x = opdispatch.tensor([1.0])
    with pytest.raises(TypeError, match="unsupported operand"):
        x + "a"
    with pytest.raises(TypeError, match="unsupported operand"):
        "a" - x
    with pytest.raises(TypeError):
        x @ 2
    assert (x == None) is False and (x != "a") is True  # identity fallback, as for any object
    assert len({x, opdispatch.tensor([1.0])}) == 2  # hashing stays by identity


def test_empty_and_zero_dim_operands(opdispatch):
    e = opdispatch.tensor(np.zeros((0, 3), dtype=np.float32))
    assert (e + 1).shape == (0, 3) and (e * e).shape == (0, 3)
    s = opdispatch.tensor(2.0)
    assert (s + s).shape == () and (s * 3).item() == 6.0 and (1 - s).item() == -1.0


# --- conversions, indexing ----------------------------------------------------------------------


def test_one_element_conversions(opdispatch):
    assert bool(opdispatch.tensor([1])) and not bool(opdispatch.tensor(0.0))
    assert int(opdispatch.tensor([[3.7]])) == 3 and float(opdispatch.tensor(2)) == 2.0
    assert f"{opdispatch.tensor(2.5):.2f}" == "2.50"
    with pytest.raises(RuntimeError, match="bool\\(\\) of a tensor with 2 elements is ambiguous"):
        bool(opdispatch.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="ambiguous"):
        if opdispatch.tensor([1.0, 2.0]) > 0:
            pass


@pytest.mark.parametrize("index", [
    1, -1, (0, 2), (slice(None), 1), (slice(1, None), slice(None, None, 2)), (Ellipsis, 0), (None, 1),
    (1, None, slice(0, 2)), (slice(-3, -1),), Ellipsis, (slice(None, 10),),
])
def test_basic_indexing_matches_numpy_and_views(opdispatch, index):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = opdispatch.tensor(a)
    result = t[index]
    np.testing.assert_array_equal(result.numpy(), a[index])
    assert result.is_alias_of(t)


def test_indexing_errors_and_assignment(opdispatch):
    t = opdispatch.tensor(np.arange(6, dtype=np.int64).reshape(2, 3))
    with pytest.raises(IndexError, match="out of range for dimension 1 with size 3"):
        t[0, 3]
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0]
    with pytest.raises(ValueError, match="step must be positive"):
        t[::-1]
    with pytest.raises(TypeError, match="Tensor indices must be"):
        t[t]
    t[0] = 7
    t[1, 1:] = opdispatch.tensor([8, 9])
    t[:, 0] = [-1, -2]
    assert t.tolist() == [[-1, 7, 7], [-2, 8, 9]]
    assert [row.tolist() for row in t] == [[-1, 7, 7], [-2, 8, 9]]
    with pytest.raises(TypeError, match="0-d"):
        iter(opdispatch.tensor(1))


# --- printing -----------------------------------------------------------------------------------


@pytest.mark.parametrize("make, expected", [
    (lambda od: od.tensor([[1.0, 2.0], [3.0, 4.0]]), "tensor([[1., 2.],\n        [3., 4.]])"),
    (lambda od: od.tensor([1, 2], dtype=od.int32), "tensor([1, 2], dtype=int32)"),
    (lambda od: od.tensor([1, -20]), "tensor([  1, -20])"),
    (lambda od: od.tensor([0.5, 2.25]), "tensor([0.5000, 2.2500])"),
    (lambda od: od.tensor([1.0, 2.5], dtype=od.float64), "tensor([1.0000, 2.5000], dtype=float64)"),
    (lambda od: od.tensor([1e-5, 1.0, 1e5]), "tensor([1.0000e-05, 1.0000e+00, 1.0000e+05])"),
    (lambda od: od.tensor([float("nan"), 1.0, -float("inf")]), "tensor([ nan,   1., -inf])"),
    (lambda od: od.tensor([True, False]), "tensor([ True, False])"),
    (lambda od: od.tensor(7), "tensor(7)"),
    (lambda od: od.tensor(1.5), "tensor(1.5000)"),
    (lambda od: od.tensor([], dtype=od.int64), "tensor([], dtype=int64)"),
    (lambda od: od.tensor(np.zeros((0, 3), dtype=np.float32)), "tensor([], size=(0, 3))"),
    (lambda od: od.empty([2, 3], device="meta"), "tensor(..., device='meta', size=(2, 3))"),
    (lambda od: od.empty([2], dtype=od.int32, device="meta"), "tensor(..., device='meta', size=(2,), dtype=int32)"),
    (lambda od: od.tensor([1.0, 2.0], device="lazy"), "tensor([1., 2.], device='lazy')"),
    (lambda od: od.tensor(np.arange(8).reshape(2, 2, 2)),
     "tensor([[[0, 1],\n         [2, 3]],\n\n        [[4, 5],\n         [6, 7]]])"),
])
def test_printing(opdispatch, make, expected):
    t = make(opdispatch)
    assert repr(t) == expected and str(t) == expected


def test_printing_summarises_large_tensors(opdispatch):
    t = opdispatch.tensor(np.arange(2000).reshape(2, 1000))
    assert repr(t) == ("tensor([[   0,    1,    2,  ...,  997,  998,  999],\n"
                       "        [1000, 1001, 1002,  ..., 1997, 1998, 1999]])")
    tall = repr(opdispatch.tensor(np.ones((100, 100), dtype=np.float32)))
    assert tall.count("\n") == 6 and "        ...,\n" in tall


def test_long_rows_wrap_at_80_columns(opdispatch):
    text = repr(opdispatch.tensor(np.arange(30, dtype=np.float64) * 1.5))
    assert all(len(line) <= 80 for line in text.splitlines()) and text.count("\n") >= 1
    assert text.splitlines()[1].startswith("        ")  # continuation lines align after "tensor(["


# --- errors -------------------------------------------------------------------------------------


def test_operator_errors_name_the_operator(opdispatch):
    a, b = opdispatch.ones([2, 3]), opdispatch.ones([4])
    with pytest.raises(opdispatch.Error, match="^add: "):
        a + b
    with pytest.raises(opdispatch.Error, match="^mm: "):
        opdispatch.mm(a, a)
    with pytest.raises(opdispatch.Error, match="^mm: .*dtype"):
        opdispatch.mm(a, opdispatch.ones([3, 2], dtype=opdispatch.float64))
    with pytest.raises(opdispatch.Error, match="^add: .*device"):
        a + opdispatch.ones([2, 3]).to("meta")
    with pytest.raises(opdispatch.Error, match="^view: "):
        a.view(4, 2)


def test_errors_from_below_an_operator_get_its_name(opdispatch, make_lib, ns):
    lib = make_lib(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")  # no kernel anywhere
    f = opdispatch._C._overload_set("f", [f"{ns}::f"])
    with pytest.raises(opdispatch.Error, match=rf"^{ns}::f: could not run {ns}::f"):
        f(opdispatch.ones([1]))


def test_wrong_python_types_raise_type_error_naming_the_function(opdispatch):
    x = opdispatch.ones([2])
    with pytest.raises(TypeError, match=r"^add\(\): no overload accepts the arguments \(Tensor, str\); candidates:"):
        opdispatch.add(x, "a")
    with pytest.raises(TypeError, match=r"^Tensor\.view\(\): argument 'size' \(position 2\) must be SymInt\[\], not str"):
        x.view("a")
    with pytest.raises(TypeError, match=r"^zeros\(\): "):
        opdispatch.zeros("a")
    with pytest.raises(TypeError, match=r"^Tensor\.t\(\): takes 1 positional"):
        x.t(0)


def test_random_and_generators_are_reexported(opdispatch):
    for name in ("Generator", "manual_seed", "initial_seed", "default_generator"):
        if hasattr(opdispatch._C, name):
            assert getattr(opdispatch, name) is getattr(opdispatch._C, name) and name in opdispatch.__all__
    if hasattr(opdispatch._C, "Generator"):
        a = opdispatch.rand(3, generator=opdispatch.Generator().manual_seed(7))
        b = opdispatch.rand(3, generator=opdispatch.Generator().manual_seed(7))
        assert a.tolist() == b.tolist()


def test_numpy_scalars_are_numbers_on_either_side(opdispatch):
    x = opdispatch.tensor([1.0, 2.0])
    for result, expected in [(x * np.float32(2), [2.0, 4.0]), (np.float32(2) * x, [2.0, 4.0]),
                             (np.float64(2) - x, [1.0, 0.0]), (x + np.int32(1), [2.0, 3.0]),
                             (x + np.bool_(True), [2.0, 3.0]), (np.int64(1) < x, [False, True])]:
        assert isinstance(result, opdispatch.Tensor)
        assert result.tolist() == expected
    assert (opdispatch.tensor([1, 2], dtype=opdispatch.int32) * np.int64(3)).dtype == opdispatch.int32
