"""Calling operators from Python: schema-driven argument parsing, overload resolution,
results, Python kernels, and errors that name the operator and the argument."""
import gc
import re

import numpy as np
import pytest


@pytest.fixture
def t(opdispatch):
    return lambda values, dtype=None: opdispatch.tensor(values, dtype=dtype)


def _values(tensor):
    return tensor.numpy().tolist()


def test_define_impl_and_call_with_every_argument_style(opdispatch, make_lib, ns, t):
    lib = make_lib(ns, "DEF")
    assert lib.define("axpy(Tensor x, Tensor y, float alpha=1.0, *, bool negate=False) -> Tensor") == f"{ns}::axpy"
    seen = []

    def axpy(x, y, alpha=1.0, negate=False):
        seen.append((alpha, negate))
        out = alpha * x.numpy() + y.numpy()
        return opdispatch.tensor(-out if negate else out)

    lib.impl("axpy", "CPU", axpy, debug="axpy_cpu")
    op = getattr(opdispatch.ops, ns).axpy
    x, y = t([1.0, 2.0]), t([10.0, 20.0])
    assert _values(op(x, y)) == [11.0, 22.0]                       # positional, default alpha
    assert _values(op(x, y, 2.0)) == [12.0, 24.0]                  # positional alpha
    assert _values(op(x, y=y, alpha=3)) == [13.0, 26.0]            # keywords; int for float
    assert _values(op(x, y, negate=True)) == [-11.0, -22.0]        # keyword-only
    assert _values(op.default(y=y, x=x)) == [11.0, 22.0]           # named overload, keywords only
    assert seen == [(1.0, False), (2.0, False), (3.0, False), (1.0, True), (1.0, False)]
    assert isinstance(seen[2][0], float)  # converted by the schema type
    with pytest.raises(TypeError, match=rf"{ns}::axpy\(\): takes 3 positional argument\(s\) but 4 were given"):
        op.default(x, y, 1.0, True)  # negate is keyword-only
    with pytest.raises(TypeError, match="missing required argument 'y'"):
        op.default(x)
    with pytest.raises(TypeError, match="got multiple values for argument 'x'"):
        op.default(x, y, x=x)
    with pytest.raises(TypeError, match="unexpected keyword argument 'beta'"):
        op.default(x, y, beta=1.0)
    with pytest.raises(TypeError, match=rf"{ns}::axpy\(\): argument 'alpha' \(position 3\) must be float, not str"):
        op.default(x, y, "2")
    with pytest.raises(TypeError, match="argument 'negate' .* must be bool, not int"):
        op.default(x, y, negate=1)
    with pytest.raises(TypeError, match=rf"{ns}::axpy.*argument 'y' .* must be Tensor, not list"):
        op(x, [1.0])


def test_out_arguments_return_the_object_passed(opdispatch, make_lib, ns, t):
    lib = make_lib(ns, "DEF")
    lib.define("neg(Tensor x) -> Tensor")
    lib.define("neg.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)")
    lib.define("minmax.out(Tensor x, *, Tensor(a!) lo, Tensor(b!) hi) -> (Tensor(a!) lo, Tensor(b!) hi)")

    def neg_out(x, out):
        return out.copy_(opdispatch.tensor(-x.numpy()))  # writes through to the caller's tensor

    out = opdispatch.zeros([2])
    lib.impl("neg", "CPU", lambda x: opdispatch.tensor(-x.numpy()))
    lib.impl("neg.out", "CPU", neg_out)
    lib.impl("minmax.out", "CPU", lambda x, lo, hi: (lo, hi))
    ops = getattr(opdispatch.ops, ns)
    result = ops.neg(t([1.0, -2.0]), out=out)      # resolution picks neg.out: only it takes out=
    assert result is out and _values(out) == [-1.0, 2.0]
    assert _values(ops.neg(t([3.0]))) == [-3.0]
    lo, hi = t([0.0]), t([0.0])
    assert ops.minmax.out(t([1.0]), lo=lo, hi=hi) == (lo, hi)
    a, b = ops.minmax.out(t([1.0]), out=(lo, hi))   # several out= arguments as one tuple
    assert a is lo and b is hi
    with pytest.raises(TypeError, match="out= must be a tuple of 2 tensors"):
        ops.minmax.out(t([1.0]), out=lo)
    assert not hasattr(ops.neg, "bad name!")


def test_results_single_tuple_and_none(opdispatch, make_lib, ns, t):
    lib = make_lib(ns, "DEF")
    lib.define("nothing(Tensor x) -> ()")
    lib.define("two(Tensor x) -> (Tensor, int)")
    lib.define("count(Tensor[] xs) -> int")
    lib.impl("nothing", "CPU", lambda x: None)
    lib.impl("two", "CPU", lambda x: (x, 7))
    lib.impl("count", "CPU", lambda xs: len(xs))
    ops = getattr(opdispatch.ops, ns)
    x = t([1.0])
    assert ops.nothing(x) is None
    r = ops.two(x)
    assert isinstance(r, tuple) and len(r) == 2 and r[1] == 7 and r[0].is_alias_of(x)
    assert ops.count([x, x, x]) == 3 and ops.count((x,)) == 1


def test_argument_conversions_per_schema_type(opdispatch, make_lib, ns, t):
    lib = make_lib(ns, "DEF")
    lib.define("echo(Tensor? a, Tensor[] b, Tensor?[] c, int i, SymInt s, float f, bool flag, str name, "
               "Scalar sc, int[] dims, SymInt[] sym, int[2] pair, ScalarType dtype, Device dev, "
               "ScalarType? maybe_dtype=None, Device? maybe_dev=None, int[]? maybe_dims=None, "
               "float[] fs=[], bool[] bs=[]) -> ()")
    got = {}

    def echo(*args):
        got["args"] = args

    lib.impl("echo", "CPU", echo)
    x = t([1.0])
    op = getattr(opdispatch.ops, ns).echo
    op(None, [x], [None, x], 1, 2, 3.5, True, "hi", 2.5, [1, 2], (3,), 4, opdispatch.int64, "cpu", fs=[1, 2.5],
       bs=[True, False])
    a, b, c, i, s, f, flag, name, sc, dims, sym, pair, dtype, dev, md, mdev, mdims, fs, bs = got["args"]
    assert a is None and len(b) == 1 and b[0].is_alias_of(x) and c[0] is None and c[1].is_alias_of(x)
    assert (i, s, f, flag, name, sc) == (1, 2, 3.5, True, "hi", 2.5)
    assert dims == [1, 2] and sym == [3] and pair == [4, 4]  # one int fills a fixed-size list
    assert dtype is opdispatch.int64 and dev == "cpu" and md is None and mdev is None and mdims is None
    assert fs == [1.0, 2.5] and bs == [True, False]
    for scalar in (True, 3, 2.5):  # Scalar keeps its Python kind
        op(x, [], [], 1, 2, 3.5, True, "s", scalar, [], [], [1, 2], opdispatch.bool, "meta")
        assert type(got["args"][8]) is type(scalar) and got["args"][8] == scalar
    op(x, [], [], np.int64(1), 2, 3.5, True, "s", 1, [np.int32(5)], [], [1, 2], opdispatch.bool, "lazy:0")
    assert got["args"][3] == 1 and got["args"][9] == [5] and got["args"][13] == "lazy:0"
    base = [x, [], [], 1, 2, 3.5, True, "s", 1, [], [], [1, 2], opdispatch.bool, "cpu"]
    bad = {0: ("a", "Tensor?, not int", 3), 1: ("b", "Tensor[], not list (element 0 is int)", [1]),
           3: ("i", "int, not float", 1.5), 4: ("s", "SymInt, not bool", True), 5: ("f", "float, not str", "x"),
           8: ("sc", "Scalar, not str", "1"), 9: ("dims", "int[], not str", "ab"),
           11: ("pair", "int[2], not list (element 1 is float)", [1, 2.5]),
           12: ("dtype", "ScalarType, not str", "float32"), 13: ("dev", "Device, not str (unknown device type", "gpu")}
    for position, (name, message, value) in bad.items():
        args = list(base)
        args[position] = value
        with pytest.raises(TypeError, match=rf"{ns}::echo.*argument '{name}' .*must be {re.escape(message)}"):
            op(*args)


def test_overload_resolution_is_deterministic_and_lists_candidates(opdispatch, make_lib, ns, t):
    lib = make_lib(ns, "DEF")
    lib.define("add.Tensor(Tensor self, Tensor other) -> Tensor")
    lib.define("add.Scalar(Tensor self, Scalar other) -> Tensor")
    lib.define("add.list(Tensor self, int[] other) -> Tensor")
    lib.define("add(Tensor self, Tensor other, Tensor third) -> Tensor")
    ran = []
    for overload in ("Tensor", "Scalar", "list", ""):
        name = f"add.{overload}" if overload else "add"
        lib.impl(name, "CPU", lambda *a, _o=overload: ran.append(_o) or a[0])
    add = getattr(opdispatch.ops, ns).add
    assert add.overloads() == ["default", "Scalar", "Tensor", "list"]
    x = t([1.0])
    add(x, x)
    add(x, 2)
    add(x, [1, 2])
    add(x, x, x)
    add(x, other=True)
    assert ran == ["Tensor", "Scalar", "list", "", "Scalar"]
    assert add.Tensor.name == f"{ns}::add.Tensor" and add.default.overload_name == "default"
    assert add.Scalar.schema == f"{ns}::add.Scalar(Tensor self, Scalar other) -> Tensor"
    with pytest.raises(TypeError) as info:
        add(x, "nope")
    message = str(info.value)
    assert message.startswith(f"{ns}::add(): no overload accepts the arguments (Tensor, str)")
    for schema in ("add(Tensor self, Tensor other, Tensor third)", "add.Scalar(Tensor self, Scalar other)",
                   "add.Tensor(Tensor self, Tensor other)", "add.list(Tensor self, int[] other)"):
        assert f"{ns}::{schema}" in message
    with pytest.raises(AttributeError, match="has no overload 'nope'"):
        add.nope
    with pytest.raises(AttributeError, match=f"no operator named {ns}::sub"):
        getattr(opdispatch.ops, ns).sub


def test_kernel_exceptions_propagate_with_their_type(opdispatch, make_lib, ns, t):
    lib = make_lib(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    lib.define("g(Tensor x) -> Tensor")
    lib.define("h(Tensor x) -> (Tensor, Tensor)")

    class Custom(Exception):
        pass

    def raises(x):
        raise Custom("from the kernel")

    lib.impl("f", "CPU", raises)
    lib.impl("g", "CPU", lambda x: 3)
    lib.impl("h", "CPU", lambda x: x)
    ops = getattr(opdispatch.ops, ns)
    with pytest.raises(Custom, match="from the kernel"):
        ops.f(t([1.0]))
    with pytest.raises(TypeError, match=rf"{ns}::g: the Python kernel returned a bad value for result 0: expected Tensor, not int"):
        ops.g(t([1.0]))
    with pytest.raises(TypeError, match="must return a tuple of 2 values"):
        ops.h(t([1.0]))
    with pytest.raises(opdispatch.Error) as info:  # op::Error from C++ -> a RuntimeError
        ops.f(opdispatch.empty([1], device="meta"))
    assert isinstance(info.value, RuntimeError)


def test_missing_kernel_error_names_operator_key_and_kernels(opdispatch, make_lib, ns, t):
    lib = make_lib(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", "Meta")
    lib.impl("f", "Lazy")
    with pytest.raises(RuntimeError) as info:
        getattr(opdispatch.ops, ns).f(t([1.0]))
    message = str(info.value)
    assert f"could not run {ns}::f with dispatch key CPU" in message
    assert f"{ns}::f has kernels for: Lazy, Meta" in message


def test_identity_kernel_and_library_lifetime(opdispatch, ns, t, backend_fallbacks):
    lib = opdispatch.library.Library(ns, "DEF")
    lib.define("first(int n, Tensor x, Tensor y) -> Tensor")
    lib.define("count(int n) -> int")
    lib.impl("first", "CPU")
    lib.impl("count", "BackendSelect")
    x, y = t([1.0]), t([2.0])
    first = getattr(opdispatch.ops, ns).first.default
    assert first(3, x, y).is_alias_of(x)
    assert getattr(opdispatch.ops, ns).count(5) == 5  # no tensors: only BackendSelect is in the key set
    assert lib.num_registrations == 5  # the namespace claim, two defs, two impls
    del lib
    gc.collect()  # a collected library undoes its registrations
    assert opdispatch.dispatcher.dump_table(f"{ns}::first") == backend_fallbacks
    with pytest.raises(RuntimeError, match="has no definition"):
        first(3, x, y)
    with opdispatch.library.Library(ns, "DEF") as again:  # the namespace is free again
        again.define("first(int n, Tensor x, Tensor y) -> Tensor")
        again.impl("first", "CPU", lambda n, x, y: y)
        assert first(3, x, y).is_alias_of(y)  # the overload object sees the new definition
    assert f"{ns}::first" not in opdispatch.dispatcher.op_names()


def test_library_argument_errors(opdispatch, ns):
    with pytest.raises(ValueError, match="kind"):
        opdispatch.library.Library(ns, "IMPLEMENTATION")
    with opdispatch.library.Library(ns, "FRAGMENT") as lib:
        with pytest.raises(ValueError, match="unknown dispatch key 'GPU'"):
            lib.impl("f", "GPU")
        with pytest.raises(TypeError, match="fn must be callable"):
            lib.impl("f", "CPU", 3)
        with pytest.raises(TypeError, match="fallback needs"):
            lib.fallback("Lazy", fallthrough=False)
        with pytest.raises(RuntimeError, match="must look like"):
            lib.define("f(Tensor x -> Tensor")


def test_test_ops_add_one_element(opdispatch, test_ops, ns):
    lib = test_ops.register_test_ops(ns)
    add = getattr(opdispatch.ops, ns).add_one_element
    assert add(opdispatch.tensor([1.5]), opdispatch.tensor([2.0])).tolist() == [3.5]
    assert add(opdispatch.tensor([1, 2]), opdispatch.tensor([1.0, 1.0])).tolist() == [2.0, 3.0]
    with pytest.raises(RuntimeError, match="sizes"):
        add(opdispatch.tensor([1.0]), opdispatch.tensor([1.0, 2.0]))
    lib.close()
