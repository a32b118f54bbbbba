"""IR for a backend key other than Lazy (issue 38, item 2): a backend yaml's full_codegen /
ir_gen operators get IR node classes per group, named as torchgen names them, for whatever key
the yaml names; the lowerings and shape functions the backend writes are declared together in
backends/<Key>/<Key>IrFunctions.h (torchgen's compute_shape_<kernel> names), and again in
their group's _ir.h so a yaml edit recompiles that group only. Our xla sample and pytorch/xla's
real yaml."""
import os
import re
import shutil
import subprocess
import time

import pytest

from generate_helpers import REPO_ROOT, changed, generate, ir_classes, read, regenerated, run_generate
from helpers import snapshot

NATIVE = os.path.join(REPO_ROOT, "yaml", "native_functions.yaml")
XLA_YAML = os.path.join(REPO_ROOT, "yaml", "xla_native_functions.yaml")
XLA = "backends/XLA"


@pytest.fixture(scope="module")
def xla_tree(tmp_path_factory):
    out = tmp_path_factory.mktemp("xla-ir-gen")
    generate(NATIVE, out, "--backend-yaml", XLA_YAML)
    return out


def test_full_codegen_operators_of_the_xla_sample_get_ir_classes(xla_tree):
    umbrella = re.findall(r'#include "(.*)"', read(xla_tree, f"{XLA}/XLAIr.h"))
    assert umbrella == [f"{XLA}/ops/{g}_ir.h" for g in ("abs", "clamp", "relu", "sigmoid")] + [f"{XLA}/XLANonNativeIr.h"]
    assert ir_classes(read(xla_tree, f"{XLA}/ops/clamp_ir.h")) == ["Clamp"]
    relu = read(xla_tree, f"{XLA}/ops/relu_ir.h")
    assert '#include "backends/xla/ir.h"' in relu and "namespace op::xla {" in relu
    assert "return ::op::xla::lower_relu(self);" in relu  # the backend's lowering, not an eager call


def test_the_functions_the_backend_writes_are_declared_in_one_header(xla_tree):
    text = read(xla_tree, f"{XLA}/XLAIrFunctions.h")
    declared = re.findall(r"^std::vector<\S+> (\w+)\(", text, re.M)
    # relu is neither structured nor a view_copy: it needs a shape function (torchgen's rule)
    assert declared == ["lower_abs", "lower_sigmoid", "compute_shape_relu", "lower_relu", "lower_clamp"]
    assert ("std::vector<::op::TensorBase> lower_clamp(const ::op::TensorBase& self, const std::optional<::op::Scalar>& min, "
            "const std::optional<::op::Scalar>& max);") in text
    # each group declares its own again, so editing another entry leaves it alone
    assert "std::vector<::op::lazy::Shape> compute_shape_relu(const ::op::TensorBase& self);" in read(xla_tree, f"{XLA}/ops/relu_ir.h")


def test_generated_kernels_take_shapes_from_meta_or_the_shape_function(xla_tree):
    relu = read(xla_tree, f"{XLA}/ops/relu_XLA.cpp")
    assert "auto ::op::xla::XLANativeFunctions::relu(const TensorBase& self) -> TensorBase {" in relu
    assert "std::vector<::op::lazy::Shape> shapes = ::op::xla::compute_shape_relu(self);" in relu
    abs_ = read(xla_tree, f"{XLA}/ops/abs_XLA.cpp")
    assert "::op::lazy::shapes_of(::op::ops::abs::call(::op::lazy::to_meta(self)))" in abs_  # structured: meta
    clamp = read(xla_tree, f"{XLA}/ops/clamp_XLA.cpp")
    assert "auto min_ir = ::op::xla::scalar_operand(min);" in clamp
    assert 'm.impl("clamp_",' in clamp and 'm.impl("clamp.out",' in clamp  # derived from the generated kernel
    # declared beside the hand-written kernels, as gen_backend_stubs declares them
    assert "TensorBase relu(const TensorBase& self);" in read(xla_tree, f"{XLA}/ops/relu_native.h")


def test_generated_xla_code_compiles_against_the_backends_ir_runtime(xla_tree, tmp_path):
    """Every XLA registration file and IR header, and the backend's lowerings, type-check against
    csrc/backends/xla/ir.h and the library's headers (g++ -fsyntax-only, one TU)."""
    compiler = shutil.which("g++")
    if compiler is None:
        pytest.skip("g++ not found")
    in_tree = tmp_path / "in-tree"
    generate(NATIVE, in_tree)  # ops/<g>_ops.h, ops/<g>.h the lowerings call
    root = os.path.join(xla_tree, XLA, "ops")
    unit = tmp_path / "all_xla.cpp"
    unit.write_text("".join(f'#include "{XLA}/ops/{name}"\n' for name in sorted(os.listdir(root)) if name.endswith("_XLA.cpp"))
                    + f'#include "{XLA}/XLAIr.h"\n#include "backends/xla/ir_lowerings.cpp"\n')
    run = subprocess.run([compiler, "-std=c++17", "-fsyntax-only", "-DOP_ASSERT_NO_TENSOR_METHODS",
                          "-I", os.path.join(REPO_ROOT, "csrc"), "-I", str(xla_tree), "-I", str(in_tree), str(unit)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-4000:]


def test_moving_an_operator_to_full_codegen_regenerates_its_group_and_the_backend_headers(tmp_path):
    backend = tmp_path / "xla_native_functions.yaml"
    shutil.copyfile(XLA_YAML, backend)
    out = tmp_path / "gen"
    generate(NATIVE, out, "--backend-yaml", str(backend))
    time.sleep(0.01)
    before = snapshot(out)
    text = backend.read_text()
    backend.write_text(text.replace("  - tanh\n", "", 1).replace("full_codegen:\n", "full_codegen:\n  - tanh\n", 1))
    result = generate(NATIVE, out, "--backend-yaml", str(backend))
    assert regenerated(result.stdout)[0] == 1 and "tanh@XLA" in result.stdout
    delta = changed(before, snapshot(out))
    assert delta["added"] == {f"{XLA}/ops/tanh_ir.h"} and not delta["removed"]
    assert delta["different"] == {f"{XLA}/ops/tanh_native.h", f"{XLA}/ops/tanh_XLA.cpp", f"{XLA}/XLAIr.h",
                                  f"{XLA}/XLAIrFunctions.h"}


def test_ir_files_do_not_depend_on_hash_seed(tmp_path):
    generate(NATIVE, tmp_path / "a", "--backend-yaml", XLA_YAML, "--no-cache")
    result = run_generate(NATIVE, tmp_path / "b", "--backend-yaml", XLA_YAML, "--no-cache", hashseed="4242")
    assert result.returncode == 0, result.stderr
    a, b = snapshot(tmp_path / "a"), snapshot(tmp_path / "b")
    assert {p: e[0] for p, e in a.items() if p.startswith(XLA)} == {p: e[0] for p, e in b.items() if p.startswith(XLA)}


def test_pytorch_xla_yaml_gets_its_105_ir_classes_and_function_declarations(real_data_dir, tmp_path):
    xla_yaml = os.path.join(os.path.dirname(real_data_dir), "pytorch-xla", "xla_native_functions.yaml")
    if not os.path.isfile(xla_yaml):
        pytest.skip("pytorch/xla's backend yaml is not in ../shared/data")
    out = tmp_path / "gen"
    generate(os.path.join(real_data_dir, "native_functions.yaml"), out, "--backend-yaml", xla_yaml,
             "--tags", os.path.join(real_data_dir, "tags.yaml"), "--keys", "CPU")
    from opgen.model import load_model, parse_backend_yaml
    model = load_model(os.path.join(real_data_dir, "native_functions.yaml"), os.path.join(real_data_dir, "tags.yaml"))
    backend = parse_backend_yaml(xla_yaml, model)
    root = out / XLA
    declared = [c for name in sorted(os.listdir(root / "ops")) if name.endswith("_ir.h")
                for c in ir_classes((root / "ops" / name).read_text())]
    assert sorted(declared) == sorted(n.class_name for n in backend.ir_nodes) and len(declared) == 105
    functions = (root / "XLAIrFunctions.h").read_text()
    assert len(re.findall(r"^std::vector<::op::TensorBase> lower_\w+\(", functions, re.M)) == 105
    shape_functions = re.findall(r"^std::vector<::op::lazy::Shape> (compute_shape_\w+)\(", functions, re.M)
    expected = sorted(str(model.by_name[n].func.name.name) for n in backend.full_codegen
                      if not model.by_name[n].part_of_structured_group and "view_copy" not in model.by_name[n].tags)
    assert sorted(s[len("compute_shape_"):] for s in shape_functions) == expected
    assert "compute_shape_binary_cross_entropy" in shape_functions  # torchgen's name for one pytorch/xla defines
    assert "namespace torch_xla {" in functions
