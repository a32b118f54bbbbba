"""External backend codegen (``opgen generate --backend-yaml``): per-group declarations and
registrations under backends/<Key>/, derived out= / in-place wrappers, and in-tree files that
stay byte-identical."""
import os
import re
import shutil
import time

import pytest

from generate_helpers import GROUPS, REPO_ROOT, changed, generate, regenerated, run_generate
from helpers import snapshot

BACKEND_YAML = os.path.join(REPO_ROOT, "yaml", "xla_native_functions.yaml")
XLA = "backends/XLA"


def backend_group_count(path=BACKEND_YAML) -> int:
    from opgen.gen.layers.backend import backend_groups
    from opgen.model import load_model
    from opgen.model.backend_yaml import parse_backend_yaml
    model = load_model(os.path.join(REPO_ROOT, "yaml", "native_functions.yaml"), os.path.join(REPO_ROOT, "yaml", "tags.yaml"))
    return len(backend_groups(model.operator_groups, parse_backend_yaml(path, model)))


XLA_GROUPS = backend_group_count()


@pytest.fixture
def backend_copy(tmp_path):
    path = tmp_path / "xla_native_functions.yaml"
    shutil.copyfile(BACKEND_YAML, path)
    return path


def in_tree(tree: dict) -> dict:
    return {path: entry[0] for path, entry in tree.items() if not path.startswith(XLA)}


@pytest.fixture(scope="module")
def with_backend(tmp_path_factory):
    out = tmp_path_factory.mktemp("xla-gen")
    generate(os.path.join(REPO_ROOT, "yaml", "native_functions.yaml"), out, "--backend-yaml", BACKEND_YAML)
    return out


@pytest.mark.parametrize("keys", [None, "CPU,CUDA,Meta,BackendSelect,CompositeImplicitAutograd,CompositeExplicitAutograd,"
                                        "CompositeExplicitAutogradNonFunctional"])
def test_in_tree_files_are_byte_identical_with_a_backend(tmp_path, keys):
    yaml = os.path.join(REPO_ROOT, "yaml", "native_functions.yaml")
    extra = ("--keys", keys) if keys else ()
    generate(yaml, tmp_path / "plain", *extra)
    generate(yaml, tmp_path / "xla", *extra, "--backend-yaml", BACKEND_YAML)
    plain, xla = snapshot(tmp_path / "plain"), snapshot(tmp_path / "xla")
    assert in_tree(plain) == in_tree(xla)
    assert not any(p.startswith(XLA) for p in plain)
    assert sum(p.startswith(XLA + "/ops/") for p in xla) > 0
    if keys:
        assert "ops/add_CUDA.cpp" in plain


def test_declarations_follow_the_dispatcher_convention(with_backend):
    header = (with_backend / XLA / "ops" / "add_native.h").read_text()
    assert "namespace op::xla::XLANativeFunctions {" in header
    assert "TensorBase add(const TensorBase& self, const TensorBase& other, const Scalar& alpha);" in header
    assert "using namespace" not in header  # op::xla already sees op's types
    assert len(re.findall(r"^TensorBase add\(", header, re.M)) == 1  # add.Scalar is not listed: it falls back
    empty = (with_backend / XLA / "ops" / "empty_native.h").read_text()
    assert "TensorBase empty_symint(IntArrayRef size, std::optional<ScalarType> dtype" in empty  # listed under symint


def test_registrations_and_derived_variants(with_backend):
    source = (with_backend / XLA / "ops" / "add_XLA.cpp").read_text()
    registered = re.findall(r'm\.impl\("([^"]+)"', source)
    assert registered == ["add.Tensor", "add.out", "add_.Tensor"]
    assert "OP_LIBRARY_IMPL(aten, XLA, m)" in source
    assert "return ::op::xla::XLANativeFunctions::add(self, other, alpha);" in source
    # out= and in-place come from the functional kernel; the backend wrote neither.
    out_wrapper = source.split("wrapper_XLA_add_out(")[1].split("}")[0]
    assert "auto functional_result = ::op::xla::XLANativeFunctions::add(self, other, alpha);" in out_wrapper
    assert "impl::copy_to_out(out, functional_result);" in out_wrapper
    inplace = source.split("wrapper_XLA_add__Tensor(")[1].split("}")[0]
    assert "return impl::copy_to_self(self, result);" in inplace
    # fill_ is listed in-place only: nothing is derived from it.
    fill = (with_backend / XLA / "ops" / "fill_XLA.cpp").read_text()
    assert re.findall(r'm\.impl\("([^"]+)"', fill) == ["fill_.Scalar"]


def test_autograd_kernels_register_at_the_autograd_key_only(with_backend):
    ops = sorted(os.listdir(with_backend / XLA / "ops"))
    assert [p for p in ops if p.startswith("matmul")] == ["matmul_AutogradXLA.cpp", "matmul_native.h"]
    source = (with_backend / XLA / "ops" / "matmul_AutogradXLA.cpp").read_text()
    assert "OP_LIBRARY_IMPL(aten, AutogradXLA, m)" in source
    # matmul.out: the out= wrapper around the listed functional kernel, at the same key (torchgen's rule)
    assert re.findall(r'm\.impl\("([^"]+)"', source) == ["matmul", "matmul.out"]


def test_umbrella_is_sorted_and_lists_every_backend_group(with_backend):
    umbrella = (with_backend / XLA / "XLANativeFunctions.h").read_text()
    includes = [l for l in umbrella.splitlines() if l.startswith("#include")]
    assert includes == sorted(includes) and len(includes) == XLA_GROUPS
    headers = sorted(p for p in os.listdir(with_backend / XLA / "ops") if p.endswith("_native.h"))
    assert [f'#include "{XLA}/ops/{h}"' for h in headers] == includes


def first_build(yaml, backend, out):
    result = generate(yaml, out, "--backend-yaml", str(backend))
    assert regenerated(result.stdout) == (GROUPS + XLA_GROUPS,) * 2
    time.sleep(0.01)
    return snapshot(out)


def edit(path, old, new):
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def test_listing_a_new_operator_touches_only_its_group(yaml_copy, backend_copy, tmp_path):
    out = tmp_path / "gen"
    before = first_build(yaml_copy, backend_copy, out)
    edit(backend_copy, "  - tanh\n", "  - tanh\n  - cos\n")
    result = generate(yaml_copy, out, "--backend-yaml", str(backend_copy))
    assert regenerated(result.stdout) == (1, GROUPS + XLA_GROUPS + 1)
    assert "cos@XLA" in result.stdout
    delta = changed(before, snapshot(out))
    assert delta["added"] == {f"{XLA}/ops/cos_native.h", f"{XLA}/ops/cos_XLA.cpp"}
    assert delta["rewritten"] == delta["different"] == {f"{XLA}/XLANativeFunctions.h"}
    assert delta["removed"] == set()


def test_adding_an_overload_rewrites_that_groups_backend_files_only(yaml_copy, backend_copy, tmp_path):
    out = tmp_path / "gen"
    before = first_build(yaml_copy, backend_copy, out)
    edit(backend_copy, "  - mul.Tensor\n", "  - mul.Tensor\n  - mul.Scalar\n")
    result = generate(yaml_copy, out, "--backend-yaml", str(backend_copy))
    assert regenerated(result.stdout)[0] == 1 and "mul@XLA" in result.stdout
    delta = changed(before, snapshot(out))
    assert delta["rewritten"] == delta["different"] == {f"{XLA}/ops/mul_native.h", f"{XLA}/ops/mul_XLA.cpp"}
    assert delta["added"] == delta["removed"] == set()


def test_unlisting_an_operator_removes_its_files(yaml_copy, backend_copy, tmp_path):
    out = tmp_path / "gen"
    before = first_build(yaml_copy, backend_copy, out)
    edit(backend_copy, "  - exp\n", "")
    result = generate(yaml_copy, out, "--backend-yaml", str(backend_copy))
    assert regenerated(result.stdout)[0] == 0
    delta = changed(before, snapshot(out))
    assert delta["removed"] == {f"{XLA}/ops/exp_native.h", f"{XLA}/ops/exp_XLA.cpp"}
    assert delta["rewritten"] == {f"{XLA}/XLANativeFunctions.h"}


def test_reordering_the_backend_yaml_changes_nothing(yaml_copy, backend_copy, tmp_path):
    out = tmp_path / "gen"
    before = first_build(yaml_copy, backend_copy, out)
    text = backend_copy.read_text()
    edit(backend_copy, "  - add.Tensor\n  - sub.Tensor\n", "  - sub.Tensor\n  - add.Tensor\n")
    edit(backend_copy, "  - neg\n  - exp\n", "  - exp\n  - neg\n")
    assert backend_copy.read_text() != text
    result = generate(yaml_copy, out, "--backend-yaml", str(backend_copy))
    assert regenerated(result.stdout)[0] == 0 and "0 files written" in result.stdout
    assert changed(before, snapshot(out))["rewritten"] == set()


def test_renaming_the_namespace_regenerates_backend_groups_only(yaml_copy, backend_copy, tmp_path):
    out = tmp_path / "gen"
    before = first_build(yaml_copy, backend_copy, out)
    edit(backend_copy, "cpp_namespace: op::xla", "cpp_namespace: my_xla")
    result = generate(yaml_copy, out, "--backend-yaml", str(backend_copy))
    assert regenerated(result.stdout) == (XLA_GROUPS, GROUPS + XLA_GROUPS)
    delta = changed(before, snapshot(out))
    assert all(p.startswith(XLA) for p in delta["rewritten"])
    header = (out / XLA / "ops" / "add_native.h").read_text()
    assert "namespace my_xla::XLANativeFunctions {" in header
    assert "using namespace ::op;" in header  # a namespace outside op:: needs op's types


def test_backend_files_do_not_depend_on_hash_seed_or_checkout_path(tmp_path):
    yaml = os.path.join(REPO_ROOT, "yaml", "native_functions.yaml")
    trees = []
    for seed in ("1", "2"):
        out = tmp_path / f"gen{seed}"
        result = run_generate(yaml, out, "--backend-yaml", BACKEND_YAML, hashseed=seed)
        assert result.returncode == 0, result.stderr
        trees.append({p: e[0] for p, e in snapshot(out).items() if p.startswith(XLA)})
    assert trees[0] == trees[1]
    assert not any(str(tmp_path).encode() in text or REPO_ROOT.encode() in text for text in trees[0].values())


def test_bad_backend_yaml_exits_2_with_file_and_line(tmp_path, backend_copy):
    edit(backend_copy, "  - maximum\n", "  - maximun\n")
    result = run_generate(os.path.join(REPO_ROOT, "yaml", "native_functions.yaml"), tmp_path / "gen",
                          "--backend-yaml", str(backend_copy))
    assert result.returncode == 2
    line = backend_copy.read_text().splitlines().index("  - maximun") + 1
    assert f"xla_native_functions.yaml:{line}:" in result.stderr and "did you mean 'maximum'" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "gen").exists()  # nothing half-written


def test_pytorch_xla_declares_what_gen_backend_stubs_declares(real_data_dir, tmp_path):
    xla_yaml = os.path.join(os.path.dirname(real_data_dir), "pytorch-xla", "xla_native_functions.yaml")
    if not os.path.exists(xla_yaml):
        pytest.skip("pytorch-xla's backend yaml is not in ../shared/data")
    out = tmp_path / "gen"
    generate(os.path.join(real_data_dir, "native_functions.yaml"), out, "--tags",
             os.path.join(real_data_dir, "tags.yaml"), "--backend-yaml", xla_yaml)
    declarations = []
    for name in sorted(os.listdir(out / XLA / "ops")):
        if name.endswith("_native.h"):
            text = (out / XLA / "ops" / name).read_text()
            assert "namespace torch_xla::XLANativeFunctions {" in text
            declarations += [l for l in text.splitlines() if l.endswith(");") and not l.startswith("//")]
    assert len(declarations) == 389  # 289 supported + 95 full_codegen + 5 autograd, as gen_backend_stubs
    assert len(set(declarations)) == 389
    autograd = [n for n in os.listdir(out / XLA / "ops") if n.endswith("_AutogradXLA.cpp")]
    # the 5 listed, and the out= wrappers of native_layer_norm and native_group_norm, as torchgen
    assert sum(len(re.findall(r"m\.impl\(", (out / XLA / "ops" / n).read_text())) for n in autograd) == 7
