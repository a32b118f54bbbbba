"""The pointwise operators (add, sub, mul, div, maximum, minimum, pow, the comparisons, where,
the unary functions, clamp, relu) called through opdispatch.ops.aten and compared with numpy
on random inputs: every dtype pair, broadcasting, non-contiguous inputs, 0-d and empty
tensors, functional / in-place / out= / Scalar overloads, PyTorch's type promotion, Meta
tensors and error messages that name the operator."""
import zlib

import numpy as np
import pytest

DTYPES = ["bool", "int32", "int64", "float32", "float64"]
CATEGORY = {"bool": 0, "int32": 1, "int64": 1, "float32": 2, "float64": 2}
NUMBER_DTYPE = {bool: "bool", int: "int64", float: "float32"}  # Python numbers: float32 is the default float
TOLERANCE = {"float32": dict(rtol=2e-6, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-12)}


# ----- the reference: PyTorch's promotion rule and numpy's values -----

def _promote(*dtypes):
    return max(dtypes, key=DTYPES.index) if dtypes else None


def _combine(higher, lower):
    """A lower-priority tier only counts when it is of a higher category."""
    if higher is None:
        return lower
    if lower is None or CATEGORY[lower] <= CATEGORY[higher]:
        return higher
    return _promote(higher, lower)


def result_dtype(*operands):
    """Tensors with dimensions decide; 0-d tensors, then Python numbers, only from a higher category."""
    arrays = [a for a in operands if isinstance(a, np.ndarray)]
    dimmed = _promote(*[a.dtype.name for a in arrays if a.ndim > 0])
    zero_d = _promote(*[a.dtype.name for a in arrays if a.ndim == 0])
    numbers = _promote(*[NUMBER_DTYPE[type(x)] for x in operands if not isinstance(x, np.ndarray)])
    return _combine(dimmed, _combine(zero_d, numbers))


def sample(rng, dtype, shape, kind="any"):
    """Random values: small integers (kind 'exponent': 0..3), normal floats; 0-d gives a 0-d array."""
    if dtype == "bool":
        values = rng.random(shape) < 0.5
    elif CATEGORY[dtype] == 1:
        lo, hi = (0, 4) if kind == "exponent" else (-5, 6)
        values = rng.integers(lo, hi, size=shape)
    elif kind == "exponent":
        values = rng.uniform(-2, 2, size=shape)
    else:
        values = rng.standard_normal(shape) * 2
    return np.asarray(values, dtype=dtype)


def check_close(tensor, expected, dtype, computed_in=None):
    """tensor has `dtype` and the expected values (within the tolerance of the dtype they were computed in)."""
    assert tensor.dtype.name == dtype
    got = tensor.numpy()
    assert got.shape == np.shape(expected)
    expected = np.asarray(expected).astype(dtype)
    if dtype in TOLERANCE:
        np.testing.assert_allclose(got, expected, **TOLERANCE[computed_in or dtype])
    else:
        np.testing.assert_array_equal(got, expected)


@pytest.fixture(scope="module")
def A(opdispatch):
    return opdispatch.ops.aten


@pytest.fixture(scope="module")
def od(opdispatch):
    return opdispatch


@pytest.fixture
def rng(request):
    return np.random.default_rng(zlib.crc32(request.node.name.encode()))  # reproducible per test


def T(od, array):
    """A tensor with a copy of the array (0-d arrays give 0-d tensors)."""
    return od.tensor(np.asarray(array))


# ----- binary arithmetic -----

def _bool_numpy(logical, arithmetic):
    return lambda a, b: logical(a, b) if a.dtype == np.bool_ else arithmetic(a, b)


class Binary:
    def __init__(self, name, numpy_fn, float_result=False, has_inplace=True, rejects=None, exponent=False,
                 functional="Tensor", out="out"):
        self.name, self.numpy_fn, self.float_result = name, numpy_fn, float_result
        self.has_inplace, self.rejects, self.exponent = has_inplace, rejects, exponent
        self.functional, self.out = functional, out

    def __repr__(self):
        return self.name

    def supports(self, da, db):
        return not (self.rejects and self.rejects(da, db))

    def dtype(self, a, b):
        d = result_dtype(a, b)
        return "float32" if self.float_result and CATEGORY[d] < 2 else d

    def expected(self, a, b, dtype=None):
        dtype = dtype or self.dtype(a, b)
        with np.errstate(all="ignore"):
            return self.numpy_fn(np.asarray(a, dtype=dtype), np.asarray(b, dtype=dtype))

    def call(self, A, x, y):
        return getattr(getattr(A, self.name), self.functional)(x, y)

    def second(self, rng, dtype, shape):
        return sample(rng, dtype, shape, "exponent" if self.exponent else "any")


BINARY = [
    Binary("add", _bool_numpy(np.logical_or, np.add)),
    Binary("sub", np.subtract, rejects=lambda a, b: "bool" in (a, b)),
    Binary("mul", _bool_numpy(np.logical_and, np.multiply)),
    Binary("div", np.true_divide, float_result=True),
    Binary("maximum", np.maximum, has_inplace=False, functional="default"),
    Binary("minimum", np.minimum, has_inplace=False, functional="default"),
    Binary("pow", np.power, rejects=lambda a, b: a == b == "bool", exponent=True, functional="Tensor_Tensor",
           out="Tensor_Tensor_out"),
]
BINARY_IDS = [op.name for op in BINARY]


@pytest.mark.parametrize("db", DTYPES)
@pytest.mark.parametrize("da", DTYPES)
@pytest.mark.parametrize("op", BINARY, ids=BINARY_IDS)
def test_binary_every_dtype_pair(A, od, rng, op, da, db):
    a, b = sample(rng, da, (2, 3)), op.second(rng, db, (3,))
    if not op.supports(da, db):
        with pytest.raises(od.Error, match=f"^{op.name}: .*bool"):
            op.call(A, T(od, a), T(od, b))
        return
    check_close(op.call(A, T(od, a), T(od, b)), op.expected(a, b), op.dtype(a, b))


SHAPES = [((2, 3), (3,)), ((4, 1), (1, 5)), ((2, 1, 3), (4, 1)), ((), (3,)), ((3,), ()), ((), ()),
          ((0, 3), (3,)), ((2, 0), (1,)), ((33,), (33,)), ((3, 70), (70,)), ((70, 3), (70, 1))]


@pytest.mark.parametrize("shapes", SHAPES, ids=[f"{a}-{b}" for a, b in SHAPES])
@pytest.mark.parametrize("dtype", ["int64", "float32"])
@pytest.mark.parametrize("op", BINARY, ids=BINARY_IDS)
def test_binary_broadcasting(A, od, rng, op, dtype, shapes):
    a, b = sample(rng, dtype, shapes[0]), op.second(rng, dtype, shapes[1])
    check_close(op.call(A, T(od, a), T(od, b)), op.expected(a, b), op.dtype(a, b))


@pytest.mark.parametrize("op", BINARY, ids=BINARY_IDS)
def test_binary_non_contiguous_inputs(A, od, rng, op):
    base = sample(rng, "float64", (6, 8))
    other = op.second(rng, "float64", (8, 12))
    cases = [
        (base.T, other[:, ::2]),           # transposed, and every other column
        (base[::2], other[1:2, 2:10]),     # every other row, a broadcast row
        (base.T[:, 1:2], other[::2, 0]),   # a column, broadcast against a strided vector
    ]
    for a, b in cases:
        x, y = od.from_numpy(a), od.from_numpy(b)  # views: the tensors share the arrays' strides
        check_close(op.call(A, x, y), op.expected(a, b), "float64")


@pytest.mark.parametrize("op", BINARY, ids=BINARY_IDS)
def test_binary_out_and_inplace(A, od, rng, op):
    a, b = sample(rng, "float32", (3, 4)), op.second(rng, "float32", (4,))
    out = od.empty([7], dtype=od.float32)  # wrong shape: resized
    result = getattr(getattr(A, op.name), op.out)(T(od, a), T(od, b), out=out)
    assert result is out and out.shape == (3, 4)
    check_close(out, op.expected(a, b), "float32")
    wide = od.empty([3, 4], dtype=od.float64)  # same category, wider: allowed
    getattr(getattr(A, op.name), op.out)(T(od, a), T(od, b), out=wide)
    check_close(wide, op.expected(a, b), "float64", computed_in="float32")
    narrow = od.empty([3, 4], dtype=od.int64)
    with pytest.raises(od.Error, match=rf"^{op.name}: result type float32 can't be cast to the desired output type int64"):
        getattr(getattr(A, op.name), op.out)(T(od, a), T(od, b), out=narrow)
    if not op.has_inplace:
        return
    inplace = getattr(A, op.name + "_").Tensor if op.name != "pow" else A.pow_.Tensor
    x = T(od, a)
    r = inplace(x, T(od, b))
    assert r.is_alias_of(x) and r.shape == (3, 4)
    check_close(x, op.expected(a, b), "float32")
    # In place on a transposed view writes through to the base array.
    base = a.T.copy()
    view = od.from_numpy(base).transpose(0, 1)
    inplace(view, T(od, b))
    np.testing.assert_allclose(base.T, op.expected(a, b).astype(np.float32), rtol=2e-6, atol=1e-6)
    ints = T(od, sample(rng, "int32", (3, 4)))
    with pytest.raises(od.Error, match=rf"^{op.name}: result type float32 can't be cast to the desired output type int32"):
        inplace(ints, T(od, b))
    with pytest.raises(od.Error, match=rf"^{op.name}: output with shape \[4\] doesn't match the broadcast shape \[3, 4\]"):
        inplace(T(od, b), T(od, a))


# (operator, Tensor-Scalar overload, in-place Scalar overload)
SCALAR_OVERLOADS = [("add", "Scalar", "Scalar"), ("sub", "Scalar", "Scalar"), ("mul", "Scalar", "Scalar"),
                    ("div", "Scalar", "Scalar"), ("pow", "Tensor_Scalar", "Scalar")]
NUMBERS = [2, 3.5, True, -1]


@pytest.mark.parametrize("number", NUMBERS, ids=repr)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,functional,inplace", SCALAR_OVERLOADS, ids=[s[0] for s in SCALAR_OVERLOADS])
def test_binary_scalar_overloads(A, od, rng, name, functional, inplace, dtype, number):
    op = next(o for o in BINARY if o.name == name)
    a = sample(rng, dtype, (2, 3))
    if not op.supports(dtype, NUMBER_DTYPE[type(number)]):
        with pytest.raises(od.Error, match=f"^{name}: .*bool"):
            getattr(getattr(A, name), functional)(T(od, a), number)
        return
    if name == "pow" and CATEGORY[dtype] < 2 and not isinstance(number, float) and number < 0:
        with pytest.raises(od.Error, match="^pow: integers to negative integer powers are not allowed"):
            getattr(getattr(A, name), functional)(T(od, a), number)
        return
    expected_dtype = op.dtype(a, number)
    # The number joins in the computed dtype (like PyTorch, unlike numpy's value-based rules).
    expected = op.expected(a, np.asarray(number, dtype=expected_dtype), expected_dtype)
    check_close(getattr(getattr(A, name), functional)(T(od, a), number), expected, expected_dtype)
    x = T(od, a)
    if CATEGORY[expected_dtype] > CATEGORY[dtype]:
        with pytest.raises(od.Error, match=f"^{name}: result type {expected_dtype} can't be cast"):
            getattr(getattr(A, name + "_"), inplace)(x, number)
    else:
        r = getattr(getattr(A, name + "_"), inplace)(x, number)
        assert r.is_alias_of(x)
        check_close(x, expected, dtype)
    # 0-d tensors of the same category do not promote either.
    zero_d = T(od, sample(rng, dtype, ()))
    r = getattr(getattr(A, name), functional)(zero_d, number)
    assert r.shape == () and r.dtype.name == op.dtype(np.zeros((), dtype), number)


def test_pow_scalar_base(A, od, rng):
    e = sample(rng, "int32", (5,), "exponent")
    check_close(A.pow.Scalar(2, T(od, e)), np.power(np.int32(2), e), "int32")
    check_close(A.pow.Scalar(1.5, T(od, e)), np.power(np.float32(1.5), e.astype(np.float32)), "float32")
    f = sample(rng, "float64", (2, 2), "exponent")
    check_close(A.pow.Scalar(3, T(od, f)), np.power(3.0, f), "float64")


def test_add_sub_alpha(A, od, rng):
    for dtype, alpha in [("int32", 3), ("int64", -2), ("float32", 0.5), ("float64", 2.5)]:
        a, b = sample(rng, dtype, (4, 3)), sample(rng, dtype, (3,))
        ref_alpha = np.asarray(alpha, dtype=dtype)
        check_close(A.add.Tensor(T(od, a), T(od, b), alpha=alpha), a + ref_alpha * b, dtype)
        check_close(A.sub.Tensor(T(od, a), T(od, b), alpha=alpha), a - ref_alpha * b, dtype)
        check_close(A.add.Scalar(T(od, a), 2, alpha=alpha), a + ref_alpha * np.asarray(2, dtype), dtype)
    bools = sample(rng, "bool", (5,))
    check_close(A.add.Tensor(T(od, bools), T(od, ~bools), alpha=False), bools, "bool")
    with pytest.raises(od.Error, match="^add: alpha 1.5 is a floating point number"):
        A.add.Tensor(T(od, a.astype("int32")), T(od, b.astype("int32")), alpha=1.5)
    with pytest.raises(od.Error, match="^sub: a bool alpha is only allowed when the result is bool"):
        A.sub.Tensor(T(od, a), T(od, b), alpha=True)


def test_integer_arithmetic_wraps_and_pow_rules(A, od):
    big = np.array([2**31 - 1, -2**31], dtype=np.int32)
    check_close(A.add.Tensor(T(od, big), T(od, np.array([1, -1], np.int32))), np.array([-2**31, 2**31 - 1]), "int32")
    check_close(A.mul.Tensor(T(od, big), T(od, np.array([2], np.int32))), big * np.int32(2), "int32")
    base = np.array([2, 1, -1, -1, 0, 3], np.int64)
    exponent = np.array([-1, -3, -3, -2, 2, 3], np.int64)
    check_close(A.pow.Tensor_Tensor(T(od, base), T(od, exponent)), [0, 1, -1, 1, 0, 27], "int64")
    with pytest.raises(od.Error, match="^pow: integers to negative integer powers are not allowed"):
        A.pow.Tensor_Scalar(T(od, base), -2)
    with pytest.raises(od.Error, match="^pow: not supported for bool tensors"):
        A.pow.Tensor_Tensor(T(od, np.array([True])), T(od, np.array([True])))
    check_close(A.pow.Tensor_Scalar(T(od, np.array([True, False])), 2), [1, 0], "int64")


def test_maximum_minimum_propagate_nan(A, od):
    a = np.array([1.0, np.nan, 3.0, -np.inf], np.float32)
    b = np.array([np.nan, 2.0, 1.0, 0.0], np.float32)
    check_close(A.maximum.default(T(od, a), T(od, b)), np.maximum(a, b), "float32")
    check_close(A.minimum.default(T(od, a), T(od, b)), np.minimum(a, b), "float32")


def test_type_promotion_table(A, od):
    def dtype_of(x, y):
        return A.add.Tensor(x, y).dtype.name

    def t(dtype, shape=(2,)):
        return od.zeros(list(shape), dtype=getattr(od, dtype))

    assert dtype_of(t("int32"), t("int64")) == "int64"
    assert dtype_of(t("int64"), t("float32")) == "float32"
    assert dtype_of(t("int32"), t("float64")) == "float64"
    assert dtype_of(t("bool"), t("int32")) == "int32"
    assert dtype_of(t("float32"), t("float64", ())) == "float32"  # 0-d: same category, no promotion
    assert dtype_of(t("int32"), t("int64", ())) == "int32"
    assert dtype_of(t("int32"), t("float64", ())) == "float64"    # 0-d of a higher category counts
    assert dtype_of(t("int32", ()), t("float32", ())) == "float32"
    assert dtype_of(t("bool"), t("bool")) == "bool"
    assert A.add.Scalar(t("int32"), 2).dtype.name == "int32"      # numbers: int stays int32
    assert A.add.Scalar(t("int32"), 2.5).dtype.name == "float32"  # float number: the default float
    assert A.add.Scalar(t("int32", ()), 2).dtype.name == "int32"  # a 0-d tensor beats a number
    assert A.add.Scalar(t("bool"), 2).dtype.name == "int64"
    assert A.add.Scalar(t("float64"), 0.1).numpy()[0] == 0.1      # the number keeps double precision
    assert A.div.Tensor(t("int32"), t("int64")).dtype.name == "float32"


# ----- comparisons -----

COMPARISONS = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
               "ge": np.greater_equal}


def _compare(name, a, b):
    d = result_dtype(a, b)
    return COMPARISONS[name](np.asarray(a, dtype=d), np.asarray(b, dtype=d))


@pytest.mark.parametrize("db", DTYPES)
@pytest.mark.parametrize("da", DTYPES)
@pytest.mark.parametrize("name", COMPARISONS)
def test_comparisons_every_dtype_pair(A, od, rng, name, da, db):
    a, b = sample(rng, da, (3, 4)), sample(rng, db, (4,))
    b[:2] = a[0, :2]  # some equal elements
    check_close(getattr(A, name).Tensor(T(od, a), T(od, b)), _compare(name, a, b), "bool")


@pytest.mark.parametrize("name", COMPARISONS)
def test_comparison_variants(A, od, rng, name):
    a, b = sample(rng, "float32", (3, 4)), sample(rng, "int64", (3, 1))
    b[0, 0] = 0
    a[0, 0] = 0.0
    expected = _compare(name, a, b)
    # Layouts: transposed inputs and 0-d.
    check_close(getattr(A, name).Tensor(od.from_numpy(a.T.copy()).transpose(0, 1), T(od, b)), expected, "bool")
    a0, b0 = np.asarray(a[0, 0]), np.asarray(b[0, 0])
    check_close(getattr(A, name).Tensor(T(od, a0), T(od, b0)), _compare(name, a0, b0), "bool")
    # out=: any dtype takes the bool result; a wrong shape is resized.
    out = od.empty([1], dtype=od.float64)
    assert getattr(A, name).Tensor_out(T(od, a), T(od, b), out=out) is out
    check_close(out, expected, "float64")
    # In place: the result in self's dtype.
    x = T(od, a)
    r = getattr(A, name + "_").Tensor(x, T(od, b))
    assert r.is_alias_of(x)
    check_close(x, expected, "float32")
    # Scalar overloads: the number promotes like a Python number.
    ints = sample(rng, "int32", (5,))
    check_close(getattr(A, name).Scalar(T(od, ints), 1), COMPARISONS[name](ints, 1), "bool")
    check_close(getattr(A, name).Scalar(T(od, ints), 0.5), COMPARISONS[name](ints.astype(np.float32), 0.5), "bool")
    x = T(od, ints)
    getattr(A, name + "_").Scalar(x, 2)
    check_close(x, COMPARISONS[name](ints, 2), "int32")
    with pytest.raises(od.Error, match=f"^{name}: The size of tensor a"):
        getattr(A, name).Tensor(T(od, a), T(od, sample(rng, "float32", (5,))))


# ----- where -----

@pytest.mark.parametrize("db", DTYPES)
@pytest.mark.parametrize("da", DTYPES)
def test_where_every_dtype_pair(A, od, rng, da, db):
    c, a, b = sample(rng, "bool", (2, 1, 4)), sample(rng, da, (3, 1)), sample(rng, db, (4,))
    d = result_dtype(a, b)
    check_close(A.where.self(T(od, c), T(od, a), T(od, b)), np.where(c, a.astype(d), b.astype(d)), d)


def test_where_variants(A, od, rng):
    c, a, b = sample(rng, "bool", (3, 4)), sample(rng, "float32", (4, 3)), sample(rng, "int32", ())
    expected = np.where(c, a.T, b.astype(np.float32))
    check_close(A.where.self(T(od, c), od.from_numpy(a).transpose(0, 1), T(od, b)), expected, "float32")
    out = od.empty([0], dtype=od.float32)
    assert A.where.self_out(T(od, c), od.from_numpy(a.T), T(od, b), out=out) is out
    check_close(out, expected, "float32")
    check_close(A.where.ScalarOther(T(od, c), T(od, a.T), 2), np.where(c, a.T, np.float32(2)), "float32")
    ints = sample(rng, "int64", (3, 4))
    check_close(A.where.ScalarOther(T(od, c), T(od, ints), 7), np.where(c, ints, 7), "int64")
    check_close(A.where.ScalarOther(T(od, c), T(od, ints), 0.5), np.where(c, ints.astype(np.float32), 0.5), "float32")
    check_close(A.where.ScalarSelf(T(od, c), 1.5, T(od, ints)), np.where(c, 1.5, ints.astype(np.float32)), "float32")
    check_close(A.where.self(T(od, c[0, 0]), T(od, a[0, 0]), T(od, b)), np.where(c[0, 0], a[0, 0], b), "float32")
    empty = A.where.self(T(od, np.zeros((0, 4), bool)), T(od, ints[0]), T(od, b))
    assert empty.shape == (0, 4) and empty.dtype.name == "int64"
    with pytest.raises(od.Error, match="^where: expected condition to be a bool tensor, but got a tensor with dtype int32"):
        A.where.self(T(od, ints.astype(np.int32)), T(od, a.T), T(od, a.T))
    with pytest.raises(od.Error, match="^where: The size of tensor"):
        A.where.self(T(od, c), T(od, a), T(od, a))
    narrow = od.empty([3, 4], dtype=od.int32)
    with pytest.raises(od.Error, match="^where: result type float32 can't be cast to the desired output type int32"):
        A.where.self_out(T(od, c), T(od, a.T), T(od, b), out=narrow)


# ----- unary -----

def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


# name -> (numpy function, is a float function, dtypes rejected)
UNARY = {
    "neg": (np.negative, False, {"bool"}),
    "abs": (np.abs, False, {"bool"}),
    "exp": (np.exp, True, set()),
    "log": (np.log, True, set()),
    "sqrt": (np.sqrt, True, set()),
    "sin": (np.sin, True, set()),
    "cos": (np.cos, True, set()),
    "tanh": (np.tanh, True, set()),
    "sigmoid": (_sigmoid, True, set()),
}


def _unary_dtype(name, dtype):
    return "float32" if UNARY[name][1] and CATEGORY[dtype] < 2 else dtype


def _unary_expected(name, a):
    d = _unary_dtype(name, a.dtype.name)
    with np.errstate(all="ignore"):
        return UNARY[name][0](a.astype(d))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", UNARY)
def test_unary_every_dtype(A, od, rng, name, dtype):
    a = sample(rng, dtype, (4, 5))
    if dtype in UNARY[name][2]:
        with pytest.raises(od.Error, match=f"^{name}: bool tensors"):
            getattr(A, name).default(T(od, a))
        return
    check_close(getattr(A, name).default(T(od, a)), _unary_expected(name, a), _unary_dtype(name, dtype))


@pytest.mark.parametrize("name", UNARY)
def test_unary_variants(A, od, rng, name):
    a = sample(rng, "float64", (5, 6))
    check_close(getattr(A, name).default(od.from_numpy(a.T)), _unary_expected(name, a.T), "float64")
    check_close(getattr(A, name).default(od.from_numpy(a[::2, 1::3])), _unary_expected(name, a[::2, 1::3]), "float64")
    check_close(getattr(A, name).default(T(od, a[0, 0])), _unary_expected(name, a[0, 0]), "float64")
    assert getattr(A, name).default(od.empty([0, 2], dtype=od.float32)).shape == (0, 2)
    out = od.empty([2], dtype=od.float32)
    assert getattr(A, name).out(T(od, a), out=out) is out
    check_close(out, _unary_expected(name, a), "float32")
    x = T(od, a.astype(np.float32))
    r = getattr(A, name + "_").default(x)
    assert r.is_alias_of(x)
    check_close(x, _unary_expected(name, a.astype(np.float32)), "float32")
    ints = T(od, sample(rng, "int32", (3,)))
    if UNARY[name][1]:
        with pytest.raises(od.Error, match=f"^{name}: result type float32 can't be cast to the desired output type int32"):
            getattr(A, name + "_").default(ints)
        with pytest.raises(od.Error, match=f"^{name}: result type float32 can't be cast to the desired output type int64"):
            getattr(A, name).out(ints, out=od.empty([3], dtype=od.int64))
    else:
        expected = _unary_expected(name, ints.numpy())
        getattr(A, name + "_").default(ints)
        check_close(ints, expected, "int32")


def test_float_functions_special_values(A, od):
    a = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-30, 88.7, 89.0, -87.5, -103.0, -104.0, 710.0],
                 np.float64)
    for name in UNARY:
        if UNARY[name][1]:
            for dtype in ("float32", "float64"):
                values = a.astype(dtype)
                check_close(getattr(A, name).default(T(od, values)), _unary_expected(name, values), dtype)


def test_exp_float32_accuracy_on_every_path(A, od):
    # Long contiguous rows take the vectorized row function; a strided view of the same values
    # takes the element function. Both stay within 2 ulp of the correctly rounded result,
    # subnormal results included.
    x = np.linspace(-104.5, 89.5, 20011).astype(np.float32)
    with np.errstate(over="ignore"):
        exact = np.exp(x.astype(np.float64)).astype(np.float32)
    contiguous = A.exp.default(T(od, x)).numpy()
    strided = A.exp.default(od.from_numpy(np.repeat(x, 2)[::2])).numpy()
    for got in (contiguous, strided):
        ulps = np.abs(got.view(np.int32).astype(np.int64) - exact.view(np.int32).astype(np.int64))
        assert ulps.max() <= 2, x[np.argmax(ulps)]
    sig = A.sigmoid.default(T(od, x / 4)).numpy()
    np.testing.assert_allclose(sig, _sigmoid((x / 4).astype(np.float64)), rtol=1e-6, atol=1e-37)


def test_clamp_and_relu(A, od, rng):
    for dtype in ("int32", "int64", "float32", "float64"):
        a = sample(rng, dtype, (4, 6))
        check_close(A.clamp.default(T(od, a), -1, 2), np.clip(a, -1, 2), dtype)
        check_close(A.clamp.default(T(od, a), min=0), np.maximum(a, 0), dtype)
        check_close(A.clamp.default(T(od, a), max=1), np.minimum(a, 1), dtype)
        check_close(A.relu.default(T(od, a)), np.maximum(a, 0), dtype)
        check_close(A.clamp.default(od.from_numpy(a.T), 3, 1), np.full(a.T.shape, 1), dtype)  # min > max: max
        x = T(od, a)
        r = A.relu_.default(x)
        assert r.is_alias_of(x)
        check_close(x, np.maximum(a, 0), dtype)
    ints = sample(rng, "int32", (5,))
    check_close(A.clamp.default(T(od, ints), 0.5), np.maximum(ints.astype(np.float32), 0.5), "float32")
    check_close(A.clamp.default(T(od, np.array([True, False])), 0.25, 0.5), [0.5, 0.25], "float32")
    check_close(A.clamp.default(T(od, np.array([True, False])), 0, 1), [1, 0], "int64")  # bool with ints: int64
    with pytest.raises(od.Error, match="^clamp: result type float32 can't be cast to the desired output type int32"):
        A.clamp_.default(T(od, ints), 0.5)
    out = od.empty([1], dtype=od.float64)
    assert A.clamp.out(T(od, ints), None, 2, out=out) is out
    check_close(out, np.minimum(ints, 2), "float64")
    f = np.array([np.nan, -1.0, 5.0], np.float32)
    check_close(A.clamp.default(T(od, f), 0, 1), np.clip(f, 0, 1), "float32")
    check_close(A.relu.default(T(od, f)), [np.nan, 0, 5], "float32")
    check_close(A.clamp.default(T(od, np.float64(3.5)), 0, 1), np.float64(1), "float64")
    with pytest.raises(od.Error, match="^clamp: at least one of 'min' or 'max' must not be None"):
        A.clamp.default(T(od, f))
    with pytest.raises(od.Error, match="^clamp: bool tensors are not supported"):
        A.clamp.default(T(od, np.array([True])), False, True)
    with pytest.raises(od.Error, match="^relu: bool tensors are not supported"):
        A.relu.default(T(od, np.array([True])))


# ----- Meta tensors: shapes and dtypes, no data -----

def _meta(od, shape, dtype="float32"):
    return od.empty(list(shape), dtype=getattr(od, dtype), device="meta")


META_CALLS = [  # a: [4, 1] float64, b: [3] int32, c: [4, 3] int32, m(shape): a new meta tensor
    ("add", lambda A, a, b, c, m: A.add.Tensor(a, b), "float64", (4, 3)),
    ("sub", lambda A, a, b, c, m: A.sub.Scalar(c, 1), "int32", (4, 3)),
    ("mul", lambda A, a, b, c, m: A.mul.Tensor(a, b), "float64", (4, 3)),
    ("div", lambda A, a, b, c, m: A.div.Tensor(b, c), "float32", (4, 3)),
    ("maximum", lambda A, a, b, c, m: A.maximum.default(a, b), "float64", (4, 3)),
    ("minimum", lambda A, a, b, c, m: A.minimum.default(b, c), "int32", (4, 3)),
    ("pow", lambda A, a, b, c, m: A.pow.Tensor_Tensor(a, b), "float64", (4, 3)),
    ("pow.Scalar", lambda A, a, b, c, m: A.pow.Scalar(2.5, b), "float32", (3,)),
    ("eq", lambda A, a, b, c, m: A.eq.Tensor(a, b), "bool", (4, 3)),
    ("lt.Scalar", lambda A, a, b, c, m: A.lt.Scalar(a, 2.5), "bool", (4, 1)),
    ("where", lambda A, a, b, c, m: A.where.ScalarOther(A.gt.Tensor(a, b), a, 0.5), "float64", (4, 3)),
    ("exp", lambda A, a, b, c, m: A.exp.default(b), "float32", (3,)),
    ("neg", lambda A, a, b, c, m: A.neg.default(c), "int32", (4, 3)),
    ("clamp", lambda A, a, b, c, m: A.clamp.default(b, 0.5), "float32", (3,)),
    ("add_", lambda A, a, b, c, m: A.add_.Tensor(c, b), "int32", (4, 3)),
    ("exp.out", lambda A, a, b, c, m: A.exp.out(c, out=m((1,))), "float32", (4, 3)),
]


@pytest.mark.parametrize("name,call,dtype,shape", META_CALLS, ids=[c[0] for c in META_CALLS])
def test_meta_tensors_give_shapes_and_dtypes(A, od, name, call, dtype, shape):
    a, b, c = _meta(od, (4, 1), "float64"), _meta(od, (3,), "int32"), _meta(od, (4, 3), "int32")
    result = call(A, a, b, c, lambda shape: _meta(od, shape))
    assert result.device == "meta" and result.dtype.name == dtype and result.shape == shape


def test_meta_devices(A, od):
    r = A.mul.Tensor(_meta(od, (2, 3)), T(od, np.float64(2.0)))  # a 0-d cpu tensor joins, like a number
    assert r.device == "meta" and r.shape == (2, 3) and r.dtype.name == "float32"
    with pytest.raises(od.Error, match="^add: expected all tensors on the same device, but tensor a is on meta "
                                       "and tensor b is on cpu"):
        A.add.Tensor(_meta(od, (2,)), od.zeros([2]))


# ----- error messages name the operator -----

def test_errors_name_the_operator(A, od):
    two, three = od.zeros([2]), od.zeros([3])
    for name, call in [("add", lambda: A.add.Tensor(two, three)), ("mul", lambda: A.mul.Tensor(two, three)),
                       ("div", lambda: A.div.Tensor(two, three)), ("pow", lambda: A.pow.Tensor_Tensor(two, three)),
                       ("maximum", lambda: A.maximum.default(two, three)), ("ge", lambda: A.ge.Tensor(two, three))]:
        with pytest.raises(od.Error, match=rf"^{name}: The size of tensor a \(2\) must match the size of tensor b \(3\)"):
            call()
    b = od.zeros([2], dtype=od.bool)
    with pytest.raises(od.Error, match="^sub: subtraction with bool tensors is not supported"):
        A.sub.Tensor(b, b)
    with pytest.raises(od.Error, match="^sub: subtraction with bool tensors is not supported"):
        A.sub.Scalar(b, 1)
    with pytest.raises(od.Error, match="^neg: bool tensors cannot be negated"):
        A.neg.default(b)
    with pytest.raises(od.Error, match="^abs: bool tensors are not supported"):
        A.abs_.default(b)
