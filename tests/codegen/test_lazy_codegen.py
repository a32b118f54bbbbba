"""Lazy backend codegen (``opgen generate --backend-yaml yaml/lazy_native_functions.yaml``): IR node
classes per group (ops/<g>_ir.h), generated Lazy kernels in ops/<g>_Lazy.cpp, the umbrellas, and
one yaml entry edited -> that group's lazy files only."""
import os
import re
import shutil
import time

import pytest

from generate_helpers import GROUPS, REPO_ROOT, changed, generate, ir_classes, read, regenerated, run_generate
from helpers import snapshot

LAZY_YAML = os.path.join(REPO_ROOT, "yaml", "lazy_native_functions.yaml")
NATIVE = os.path.join(REPO_ROOT, "yaml", "native_functions.yaml")
LAZY = "backends/Lazy"


def lazy_group_count(path=LAZY_YAML) -> int:
    from opgen.gen.layers.backend import backend_groups
    from opgen.model import load_model
    from opgen.model.backend_yaml import parse_backend_yaml
    model = load_model(NATIVE, os.path.join(REPO_ROOT, "yaml", "tags.yaml"))
    return len(backend_groups(model.operator_groups, parse_backend_yaml(path, model)))


LAZY_GROUPS = lazy_group_count()


@pytest.fixture(scope="module")
def lazy_tree(tmp_path_factory):
    out = tmp_path_factory.mktemp("lazy-gen")
    generate(NATIVE, out, "--backend-yaml", LAZY_YAML)
    return out


def test_ir_headers_declare_one_class_per_operator_named_as_torchgen(lazy_tree):
    assert ir_classes(read(lazy_tree, f"{LAZY}/ops/add_ir.h")) == ["AddScalar", "AddTensor"]
    assert ir_classes(read(lazy_tree, f"{LAZY}/ops/sum_ir.h")) == ["Sum", "SumDimIntlist"]
    assert ir_classes(read(lazy_tree, f"{LAZY}/ops/view_copy_ir.h")) == ["ViewCopy"]
    assert not os.path.exists(os.path.join(lazy_tree, f"{LAZY}/ops/copy__ir.h"))  # supported: no IR


def test_nodes_own_their_arguments_and_hash_print_compare_and_lower_them(lazy_tree):
    text = read(lazy_tree, f"{LAZY}/ops/view_copy_ir.h")
    assert "std::vector<int64_t> size_;" in text
    assert 'static constexpr const char* kOp = "aten::view_copy";' in text
    assert "hash_of(kOp, size)" in text
    assert 'print_attribute(out, "size", size_);' in text
    assert "bool can_be_reused(const Value& self, std::vector<int64_t> size) const" in text
    assert "return {::op::ops::view_copy::call(self, size_)};" in text
    slice_ = read(lazy_tree, f"{LAZY}/ops/slice_copy_ir.h")
    # slice_copy.Tensor is listed under symint: its SymInts are operands, read back in lower()
    assert "const std::optional<Value>& start, const std::optional<Value>& end, const Value& step, int64_t dim" in slice_
    assert "if (has_start_) start = ::op::lazy::symint_of(data[at++]);" in slice_ and "int64_t dim_;" in slice_
    for path in os.listdir(os.path.join(lazy_tree, LAZY, "ops")):
        if path.endswith("_ir.h"):
            members = re.findall(r"^  (\S.*) \w+_;$", read(lazy_tree, f"{LAZY}/ops/{path}"), re.M)
            assert not [m for m in members if "ArrayRef" in m or "string_view" in m], path


def test_full_codegen_kernels_are_generated_and_registered(lazy_tree):
    text = read(lazy_tree, f"{LAZY}/ops/add_Lazy.cpp")
    assert '#include "backends/Lazy/ops/add_ir.h"' in text and '#include "backends/lazy/ir.h"' in text
    # defined as gen_backend_stubs declares it, LazyNativeFunctions::add; alpha is an operand
    assert ("auto ::op::lazy::LazyNativeFunctions::add(const TensorBase& self, const TensorBase& other, "
            "const Scalar& alpha) -> TensorBase {") in text
    assert "auto alpha_ir = ::op::lazy::scalar_operand(alpha);" in text
    assert "::op::lazy::shapes_of(::op::ops::add_Tensor::call(::op::lazy::to_meta(self), ::op::lazy::to_meta(other), alpha))" in text
    assert "::op::lazy::reuse_or_make<::op::lazy::AddTensor>(self_ir, other_ir, alpha_ir, std::move(shapes))" in text
    assert "auto functional_result = ::op::lazy::LazyNativeFunctions::add(self, other, alpha);" in text  # add.out from it
    for name in ("add.Tensor", "add.Scalar", "add_.Tensor", "add.out"):
        assert f'm.impl("{name}",' in text
    # declared, marked generated: nothing of it is left for a person to write
    native = read(lazy_tree, f"{LAZY}/ops/add_native.h")
    assert native.index("// Generated from the backend's IR (full_codegen)") < native.index("TensorBase add(")


def test_scalars_are_operands_lowered_from_their_constants(lazy_tree):
    text = read(lazy_tree, f"{LAZY}/ops/clamp_ir.h")
    assert "Clamp(const Value& self, const std::optional<Value>& min, const std::optional<Value>& max, std::vector<Shape> shapes)" in text
    assert "if (has_min_) min = ::op::lazy::scalar_of(data[at++]);" in text
    assert "::op::Scalar> min_;" not in text and "hash_of(kOp)" in text  # no attribute: the value is not the node's identity
    assert 'static constexpr OpKind kOpKind{"aten", "clamp"};' in text


def test_supported_kernels_stay_hand_written(lazy_tree):
    text = read(lazy_tree, f"{LAZY}/ops/copy_Lazy.cpp")
    assert "return ::op::lazy::LazyNativeFunctions::copy_(self, src, non_blocking);" in text
    assert "copy_(TensorBase& self" in read(lazy_tree, f"{LAZY}/ops/copy_native.h")


def test_umbrellas_and_non_native_nodes(lazy_tree):
    umbrella = read(lazy_tree, f"{LAZY}/LazyIr.h")
    headers = re.findall(r'#include "(.*)"', umbrella)
    assert headers[:-1] == sorted(headers[:-1]) and headers[-1] == f"{LAZY}/LazyNonNativeIr.h"
    assert f"{LAZY}/ops/add_ir.h" in headers and f"{LAZY}/ops/copy_ir.h" not in headers
    non_native = read(lazy_tree, f"{LAZY}/LazyNonNativeIr.h")
    assert ir_classes(non_native) == ["Scalar", "Cast"]
    assert 'static constexpr OpKind kOpKind{"prim", "Constant"};' in non_native and "lower(const std::vector<TensorBase>& data) const override;  // by hand" in non_native
    assert os.path.exists(os.path.join(lazy_tree, f"{LAZY}/LazyNativeFunctions.h"))


def test_every_ir_class_of_the_yaml_is_declared_once(lazy_tree):
    from opgen.model import load_model, parse_backend_yaml
    model = load_model(NATIVE, os.path.join(REPO_ROOT, "yaml", "tags.yaml"))
    backend = parse_backend_yaml(LAZY_YAML, model)
    declared = []
    root = os.path.join(lazy_tree, LAZY)
    for directory, _, files in os.walk(root):
        for name in sorted(files):
            if name.endswith("Ir.h") and name != "LazyNonNativeIr.h" or not name.endswith(".h"):
                continue
            declared += ir_classes(read(directory, name))
    assert sorted(declared) == sorted(n.class_name for n in backend.ir_nodes)


def test_in_tree_files_do_not_change_with_the_lazy_backend(tmp_path):
    generate(NATIVE, tmp_path / "plain")
    generate(NATIVE, tmp_path / "lazy", "--backend-yaml", LAZY_YAML)
    plain = snapshot(tmp_path / "plain")
    lazy = {p: e for p, e in snapshot(tmp_path / "lazy").items() if not p.startswith(LAZY)}
    assert {p: e[0] for p, e in plain.items()} == {p: e[0] for p, e in lazy.items()}


@pytest.fixture
def lazy_copy(tmp_path):
    path = tmp_path / "lazy_native_functions.yaml"
    shutil.copyfile(LAZY_YAML, path)
    return path


def edit(path, old, new):
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def first_build(backend, out):
    result = generate(NATIVE, out, "--backend-yaml", str(backend))
    assert regenerated(result.stdout) == (GROUPS + LAZY_GROUPS,) * 2
    time.sleep(0.01)
    return snapshot(out)


def test_moving_one_entry_to_supported_regenerates_that_groups_lazy_files_only(lazy_copy, tmp_path):
    out = tmp_path / "gen"
    before = first_build(lazy_copy, out)
    edit(lazy_copy, "  - neg\n", "")
    edit(lazy_copy, "supported:\n", "supported:\n  - neg\n")
    result = generate(NATIVE, out, "--backend-yaml", str(lazy_copy))
    assert regenerated(result.stdout)[0] == 1 and "neg@Lazy" in result.stdout
    delta = changed(before, snapshot(out))
    assert delta["removed"] == {f"{LAZY}/ops/neg_ir.h"}
    assert delta["different"] == {f"{LAZY}/ops/neg_native.h", f"{LAZY}/ops/neg_Lazy.cpp", f"{LAZY}/LazyIr.h"}
    assert delta["added"] == set()


def test_editing_a_non_native_node_rewrites_its_file_only(lazy_copy, tmp_path):
    out = tmp_path / "gen"
    before = first_build(lazy_copy, out)
    edit(lazy_copy, "      - TreatScalarsAsConstants\n", "      - TreatScalarsAsConstants\n      - ShapeCompute\n")
    edit(lazy_copy, "ScalarType type) -> Tensor", "ScalarType dtype) -> Tensor")
    result = generate(NATIVE, out, "--backend-yaml", str(lazy_copy))
    assert regenerated(result.stdout)[0] == 0
    delta = changed(before, snapshot(out))
    assert delta["different"] == {f"{LAZY}/LazyNonNativeIr.h"} and not delta["added"] and not delta["removed"]


def test_lazy_files_do_not_depend_on_hash_seed(tmp_path):
    generate(NATIVE, tmp_path / "a", "--backend-yaml", LAZY_YAML, "--no-cache")
    result = run_generate(NATIVE, tmp_path / "b", "--backend-yaml", LAZY_YAML, "--no-cache", hashseed="12345")
    assert result.returncode == 0, result.stderr
    a, b = snapshot(tmp_path / "a"), snapshot(tmp_path / "b")
    assert {p: e[0] for p, e in a.items()} == {p: e[0] for p, e in b.items()}


def test_pytorch_lazy_yaml_declares_gen_lazy_tensors_178_classes(real_data_dir, tmp_path):
    ts_yaml = os.path.join(os.path.dirname(real_data_dir), "pytorch-lazy", "ts_native_functions.yaml")
    if not os.path.isfile(ts_yaml):
        pytest.skip(f"PyTorch's lazy backend yaml not found at {ts_yaml}")
    out = tmp_path / "gen"
    generate(os.path.join(real_data_dir, "native_functions.yaml"), out, "--backend-yaml", ts_yaml,
             "--tags", os.path.join(real_data_dir, "tags.yaml"), "--keys", "CPU")
    root = out / LAZY
    native = [c for name in sorted(os.listdir(root / "ops")) if name.endswith("_ir.h")
              for c in ir_classes((root / "ops" / name).read_text())]
    non_native = ir_classes((root / "LazyNonNativeIr.h").read_text())
    assert (len(native), len(set(native)), len(non_native)) == (162, 162, 16)
    gelu = (root / "ops" / "gelu_ir.h").read_text()
    assert "std::string approximate_;" in gelu  # strings owned, never a string_view (PR 75527)
    assert "std::optional<std::string> rounding_mode_;" in (root / "ops" / "div_ir.h").read_text()
    assert "size_t tensors_count_;" in (root / "ops" / "cat_ir.h").read_text()
    assert "namespace torch::lazy {" in gelu and "using namespace ::op::lazy;" in gelu


def test_generated_lazy_code_compiles_against_the_library_and_the_runtime_interface(lazy_tree, tmp_path):
    """Every ops/<g>_Lazy.cpp and IR header type-checks (g++ -fsyntax-only, one TU) against the
    operator library's headers and the lazy runtime's interface (csrc/backends/lazy/ir.h), without
    building anything: a codegen change that breaks the runtime's contract fails here first."""
    compiler = shutil.which("g++")
    if compiler is None:
        pytest.skip("g++ not found")
    root = os.path.join(lazy_tree, LAZY, "ops")
    sources = sorted(name for name in os.listdir(root) if name.endswith("_Lazy.cpp"))
    assert len(sources) >= 50  # one per group the yaml lists
    unit = tmp_path / "all_lazy.cpp"
    unit.write_text("".join(f'#include "{LAZY}/ops/{name}"\n' for name in sources) + f'#include "{LAZY}/LazyIr.h"\n')
    import subprocess
    run = subprocess.run([compiler, "-std=c++17", "-fsyntax-only", "-DOP_ASSERT_NO_TENSOR_METHODS",
                          "-I", os.path.join(REPO_ROOT, "csrc"), "-I", str(lazy_tree), str(unit)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-4000:]
