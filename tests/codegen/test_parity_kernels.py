"""The registrations torchgen parity adds, as generated text: the default-backend structured
wrappers at CompositeExplicitAutogradNonFunctional, Meta kernels of in-place operators and
BackendSelect for functions with tensor options and tensor arguments. Each is registered at its
own key (the runtime has CompositeExplicitAutogradNonFunctional) and lives in its group's files."""
from opgen.gen.engine.config import CodegenConfig
from opgen.gen.group import GroupCodegen
from opgen.model.loader import build_model
from opgen.yamlio import load_located

YAML = """
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  structured_delegate: add.out
  variants: function, method
- func: add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
  structured_delegate: add.out
  variants: method
- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
  structured: True
  structured_inherits: TensorIteratorBase
  dispatch:
    CPU: add_out
- func: fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)
  dispatch:
    CPU: fill_
- func: zero_(Tensor(a!) self) -> Tensor(a!)
  dispatch:
    CompositeExplicitAutograd: zero_
- func: _to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor
  dispatch:
    CompositeExplicitAutograd: _to_copy
- func: empty_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
  dispatch:
    CompositeExplicitAutograd: empty_like
"""


def render_group(name):
    model = build_model(load_located(YAML.encode(), "test.yaml"), "test.yaml", frozenset())
    group = next(g for g in model.operator_groups if g.name == name)
    return GroupCodegen(group, model.indices, CodegenConfig()).render()


def test_default_backend_wrappers_run_meta_then_out_through_the_dispatcher():
    source = render_group("add")["ops/add_CompositeExplicitAutogradNonFunctional.cpp"]
    assert "OP_LIBRARY_IMPL(aten, CompositeExplicitAutogradNonFunctional, m) {" in source
    assert 'm.impl("add.Tensor",' in source and 'm.impl("add_.Tensor",' in source
    assert 'm.impl("add.out",' not in source  # out= is what a backend writes
    assert ": public meta::structured_add_Tensor {" in source
    assert "ops::add_out::call(self, other, alpha, kernel.outputs_[0]);" in source  # functional: fresh output
    assert "ops::add_out::call(self, other, alpha, self);" in source  # in-place: into self
    assert "kernel.impl(" not in source


def test_inplace_without_meta_kernel_gets_one_that_returns_self():
    files = render_group("fill")
    source = files["ops/fill_Meta.cpp"]
    assert "OP_CHECK(self.is_meta()," in source and "return self;" in source
    assert "OP_LIBRARY_IMPL(aten, Meta, m)" in source and 'm.impl("fill_.Scalar",' in source
    assert not any(path.endswith("_Meta.cpp") for path in render_group("zero"))  # a composite runs on meta


def test_backend_select_joins_the_device_and_the_tensor_arguments():
    source = render_group("_to_copy")["ops/_to_copy_BackendSelect.cpp"]
    assert "redispatch(impl::backend_key_set(device, impl::key_set_of(self)), self, dtype," in source
    assert not any(path.endswith("_BackendSelect.cpp") for path in render_group("empty_like"))  # options from self


def test_an_edit_regenerates_one_group_with_its_generated_meta_kernel(yaml_copy, tmp_path):
    """Giving masked_fill_ a Meta kernel of its own replaces the generated one: one group
    regenerates, and only its Meta source and kernel declarations change."""
    from generate_helpers import GROUPS, changed, regenerated, run_generate
    from helpers import snapshot

    out = tmp_path / "gen"
    assert run_generate(yaml_copy, out).returncode == 0
    before = snapshot(out)
    generated_meta = (out / "ops" / "masked_fill_Meta.cpp").read_text()
    assert "OP_CHECK(self.is_meta()," in generated_meta
    text = yaml_copy.read_text()
    assert text.count("    CPU, CUDA: masked_fill_\n") == 1
    yaml_copy.write_text(text.replace("    CPU, CUDA: masked_fill_\n", "    CPU, CUDA: masked_fill_\n    Meta: masked_fill_meta_\n"))
    result = run_generate(yaml_copy, out)
    assert result.returncode == 0, result.stderr
    assert regenerated(result.stdout) == (1, GROUPS)
    delta = changed(before, snapshot(out))
    assert delta["added"] == delta["removed"] == set()
    assert delta["rewritten"] == {"ops/masked_fill_Meta.cpp", "ops/masked_fill_native.h", "ops/masked_fill_unit.cpp"}
    assert "return native::masked_fill_meta_(self, mask, value);" in (out / "ops" / "masked_fill_Meta.cpp").read_text()
