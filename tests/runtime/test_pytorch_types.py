"""Every C++ type of PyTorch 2.13's yaml has a runtime type: for each parameter and return
type, the smallest operator group using it compiles against csrc/ (one shared build of the
sample, ~35 units, g++ -fsyntax-only with the generated objects' flags), and a value of each
parameter type makes a boxed round trip through the dispatcher and Python: Python value ->
IValue -> the typed (unboxed) C++ kernel echo_<type> (csrc/tests/python/test_ops.cpp, opdispatch_test_ops), which returns
the value and the repr of what it saw -> IValue -> Python. csrc/tests/test_boxing.cpp covers
the C++ side (typed calls through boxed kernels); tests/bench/check_pytorch_units.py compiles
all 1,342 groups."""
import os
import subprocess
import sys
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor

import pytest

from opgen.api import dispatcher, types as cpp_types
from opgen.model.loader import load_model
from opgen.scons.flags import COMMON_CXXFLAGS, DEFAULTS

KEYS = ("CPU,Meta,BackendSelect,CompositeImplicitAutograd,CompositeExplicitAutograd,"
        "CompositeExplicitAutogradNonFunctional,Functionalize,Autograd,ADInplaceOrView")
# Groups whose generated code has a shape no type above selects (autograd layer included):
# in-place _foreach_ functions recording with the per-tensor operator's formulas, a formula passing
# grad_input_mask where an operator takes bool[N], formulas using <cmath>, a precomputed DimVector,
# tangents of a list output.
SHAPES = {"_foreach_exp": "in-place _foreach_ with per-tensor formulas", "matmul": "grad_input_mask as bool[2]",
          "erf": "a formula using std::sqrt and M_PI", "index": "a structured meta class precomputing DimVector",
          "split": "a list output's forward tangents (auto_linear)"}
# A generated group's object: opgen/scons/flags.py.
FLAGS = [*COMMON_CXXFLAGS, "-DOP_ASSERT_NO_TENSOR_METHODS", *DEFAULTS["OPGEN_GENERATED_CXXFLAGS"]]
NAMESPACE = "pttypes"


def _tensor(od):
    return od.tensor([1.0, 2.0])


# C++ parameter type (opgen/api/types.py's spelling) -> echo operator, then a function of
# (opdispatch, tensor) giving (value passed, value expected back, repr the kernel sees). The
# extra rows (Dimname, QScheme, float[]) are types opgen maps that PyTorch 2.13's yaml does not use.
ECHOES = {
    "const TensorBase&": ("Tensor", lambda od, t: (t, t, "Tensor(float32[2] on cpu)")),
    "const std::optional<TensorBase>&": ("Tensor_optional", lambda od, t: (None, None, "None")),
    "ArrayRef<TensorBase>": ("Tensor_list", lambda od, t: ([t, t], [t, t], "[Tensor(float32[2] on cpu), Tensor(float32[2] on cpu)]")),
    "ArrayRef<std::optional<TensorBase>>": ("Tensor_optional_list", lambda od, t: ([None, t], [None, t], "[None, Tensor(float32[2] on cpu)]")),
    "int64_t": ("SymInt", lambda od, t: (-4, -4, "-4")),
    "std::optional<int64_t>": ("int_optional", lambda od, t: (5, 5, "5")),
    "IntArrayRef": ("SymInt_list", lambda od, t: (3, [3, 3], "[3, 3]")),  # SymInt[2]: one int is two
    "std::optional<IntArrayRef>": ("int_list_optional", lambda od, t: ([1, 2], [1, 2], "[1, 2]")),
    "double": ("float", lambda od, t: (2, 2.0, "2.0")),
    "std::optional<double>": ("float_optional", lambda od, t: (None, None, "None")),
    "ArrayRef<double>": ("float_list", lambda od, t: ([0.5, 1], [0.5, 1.0], "[0.5, 1.0]")),
    "std::optional<ArrayRef<double>>": ("float_list_optional", lambda od, t: ([0.25], [0.25], "[0.25]")),
    "bool": ("bool", lambda od, t: (True, True, "True")),
    "std::optional<bool>": ("bool_optional", lambda od, t: (False, False, "False")),
    "const std::vector<bool>&": ("bool_list", lambda od, t: ([True, False, True], [True, False, True], "[True, False, True]")),
    "std::string_view": ("str", lambda od, t: ("linear", "linear", "'linear'")),
    "std::optional<std::string_view>": ("str_optional", lambda od, t: (None, None, "None")),
    "const Scalar&": ("Scalar", lambda od, t: (2.5, 2.5, "2.5")),
    "const std::optional<Scalar>&": ("Scalar_optional", lambda od, t: (True, True, "True")),
    "ArrayRef<Scalar>": ("Scalar_list", lambda od, t: ([1, 2.5, False], [1, 2.5, False], "[1, 2.5, False]")),
    "ScalarType": ("ScalarType", lambda od, t: (od.float64, od.float64, "float64")),
    "std::optional<ScalarType>": ("ScalarType_optional", lambda od, t: (od.int32, od.int32, "int32")),
    "Layout": ("Layout", lambda od, t: (0, 0, "0")),
    "std::optional<Layout>": ("Layout_optional", lambda od, t: (None, None, "None")),
    "MemoryFormat": ("MemoryFormat", lambda od, t: (2, 2, "2")),
    "std::optional<MemoryFormat>": ("MemoryFormat_optional", lambda od, t: (1, 1, "1")),
    "QScheme": ("QScheme", lambda od, t: (3, 3, "3")),
    "Device": ("Device", lambda od, t: ("meta", "meta", "meta")),
    "std::optional<Device>": ("Device_optional", lambda od, t: ("cpu", "cpu", "cpu")),
    "int8_t": ("DeviceIndex", lambda od, t: (-1, -1, "-1")),
    "const std::optional<Generator>&": ("Generator_optional", lambda od, t: _generator(od)),
    "const Storage&": ("Storage", lambda od, t: (t.untyped_storage(), t.untyped_storage(), "Storage(8 bytes on cpu)")),
    "Stream": ("Stream", lambda od, t: (od.Stream("cpu", 7), od.Stream("cpu", 7), "Stream(device=cpu, id=7)")),
    "Dimname": ("Dimname", lambda od, t: ("N", "N", "N")),
    "ArrayRef<Dimname>": ("Dimname_list", lambda od, t: (["N", "*"], ["N", "*"], "[N, *]")),
    "TensorBase&": ("tensor_", None),  # echo_tensor_(Tensor(a!) self) -> Tensor(a!)
}


# C++ return types (besides those of ECHOES, which the echoes return): a written self passed as
# `const TensorBase&` (resize_, as_strided_; csrc/tests/test_boxing.cpp round-trips it) and
# the results of plain values.
RETURN_TYPES = ("TensorBase", "TensorBase&", "const TensorBase&", "std::vector<TensorBase>", "Scalar", "ScalarType",
                "QScheme", "bool", "int64_t", "double")


def _generator(od):
    g = od.Generator().manual_seed(3)
    return g, g, "Generator(cpu)"


def _same(got, want) -> bool:
    """Equal values; tensors (also inside lists) compare by identity of their storage."""
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(_same(g, w) for g, w in zip(got, want))
    if want is None or got is None:
        return got is want
    if hasattr(want, "is_alias_of"):
        return got.is_alias_of(want) and got.shape == want.shape
    return type(got) is type(want) and got == want


@pytest.fixture(scope="module")
def pytorch_types(real_data_dir):
    """(parameters, returns): C++ type -> the groups of PyTorch's yaml using it, smallest first
    (fewest functions, then name)."""
    model = load_model(os.path.join(real_data_dir, "native_functions.yaml"), os.path.join(real_data_dir, "tags.yaml"))
    params, returns = defaultdict(set), defaultdict(set)
    for group in model.operator_groups:
        size = (len(group.functions), group.name)
        for f in group.functions:
            for b in dispatcher.bindings(f):
                params[b.type].add(size)
            for t in cpp_types.return_types(f.func, mutable_is_const=f.use_const_ref_for_mutable_tensors):
                returns[t].add(size)
    smallest_first = lambda by_type: {t: [name for _, name in sorted(gs)] for t, gs in by_type.items()}  # noqa: E731
    return smallest_first(params), smallest_first(returns)


@pytest.fixture(scope="module")
def sample_build(pytorch_types, real_data_dir, repo_root, tmp_path_factory):
    """The smallest group of each type generated and compiled once, two at a time: {group: errors}."""
    out = tmp_path_factory.mktemp("pytorch-types")
    generate = subprocess.run(
        [sys.executable, "-m", "opgen", "generate", os.path.join(real_data_dir, "native_functions.yaml"),
         "--tags", os.path.join(real_data_dir, "tags.yaml"), "--derivatives", os.path.join(real_data_dir, "derivatives.yaml"),
         "--keys", KEYS, "--out", str(out)],
        cwd=repo_root, capture_output=True, text=True)
    assert generate.returncode == 0, generate.stderr
    groups = sorted({names[0] for by_type in pytorch_types for names in by_type.values()} | set(SHAPES))

    def compile_unit(group):
        unit = out / "ops" / f"{group}_unit.cpp"
        run = subprocess.run(["g++", *FLAGS, "-fsyntax-only", "-I" + os.path.join(repo_root, "csrc"), "-I" + str(out),
                              str(unit)], capture_output=True, text=True)
        return group, run.stderr if run.returncode else ""

    with ThreadPoolExecutor(2) as pool:
        return dict(pool.map(compile_unit, groups))


@pytest.fixture(scope="module")
def echoes(opdispatch, test_ops):
    library = test_ops.register_type_echoes(NAMESPACE)
    yield getattr(opdispatch.ops, NAMESPACE)
    library.close()


def test_every_type_of_pytorchs_yaml_is_covered(pytorch_types, sample_build):
    params, returns = pytorch_types
    missing = sorted(set(params) - set(ECHOES))
    assert not missing, f"C++ parameter types of PyTorch's yaml with no round-trip case here: {missing}"
    missing = sorted(set(returns) - set(RETURN_TYPES))
    assert not missing, f"C++ return types of PyTorch's yaml not in RETURN_TYPES: {missing}"
    assert 30 <= len(sample_build) <= 60 + len(SHAPES), sorted(sample_build)


@pytest.mark.parametrize("cpp_type", [("param", t) for t in sorted(ECHOES)] + [("return", t) for t in RETURN_TYPES],
                         ids=lambda kind_type: " ".join(kind_type))
def test_smallest_group_using_the_type_compiles(cpp_type, pytorch_types, sample_build):
    kind, name = cpp_type
    by_type = pytorch_types[0 if kind == "param" else 1]
    if name not in by_type:
        pytest.skip(f"{name}: no operator of PyTorch 2.13's yaml uses it as a {kind}")
    group = by_type[name][0]
    assert not sample_build[group], f"group {group} ({kind} {name}) does not compile:\n{sample_build[group][:4000]}"


@pytest.mark.parametrize("group", sorted(SHAPES))
def test_group_of_each_code_shape_compiles(group, sample_build):
    assert not sample_build[group], f"group {group} ({SHAPES[group]}) does not compile:\n{sample_build[group][:4000]}"


@pytest.mark.parametrize("cpp_type", sorted(ECHOES))
def test_boxed_round_trip_through_the_dispatcher(cpp_type, opdispatch, echoes):
    name, case = ECHOES[cpp_type]
    t = _tensor(opdispatch)
    if case is None:  # Tensor(a!): the in-place echo returns its self
        assert echoes.echo_tensor_(t) is t
        return
    value, expected, seen_repr = case(opdispatch, t)
    got, seen = getattr(echoes, f"echo_{name}")(t, value)
    assert seen == seen_repr, f"the {cpp_type} kernel saw {seen}"
    assert _same(got, expected), f"echo_{name} returned {got!r} for {value!r}"


def test_python_values_that_do_not_fit_are_type_errors(opdispatch, echoes):
    t = _tensor(opdispatch)
    with pytest.raises(TypeError, match="invalid dimension name '1x'"):
        echoes.echo_Dimname(t, "1x")
    with pytest.raises(TypeError, match=r"element 1 is str"):
        echoes.echo_Scalar_list(t, [1, "a"])
    with pytest.raises(TypeError, match="Stream"):
        echoes.echo_Stream(t, 0)
    with pytest.raises(opdispatch.Error, match=r"DeviceIndex \(an int in \[-128, 127\]\)"):
        echoes.echo_DeviceIndex(t, 300)
