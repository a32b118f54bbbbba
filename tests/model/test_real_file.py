"""PyTorch 2.13's native_functions.yaml: every schema round-trips and the model has torchgen's counts."""
import pytest

from opgen.model import FunctionSchema, VariantGroup


def test_every_real_schema_parses_and_round_trips(real_schemas):
    assert len(real_schemas) == 2584
    mismatches = [s for s in real_schemas if str(FunctionSchema.parse(s)) != s]
    assert mismatches == []


def test_real_model_counts_match_torchgen(real_model):
    functions = real_model.functions
    assert len(functions) == 3101
    assert sum(f.generated for f in functions) == 517
    assert sum(not f.generated for f in functions) == 2584
    groups = real_model.variant_groups
    assert sum(isinstance(g, VariantGroup) for g in groups) == 1105
    assert sum(not isinstance(g, VariantGroup) for g in groups) == 586
    assert len(real_model.operator_groups) == 1342
    assert sum(f.structured for f in functions) == 275
    assert sum(f.structured_delegate is not None for f in functions) == 385


def test_real_model_generated_functions_come_last_and_have_a_kernel(real_model):
    flags = [f.generated for f in real_model.functions]
    assert flags == sorted(flags)  # yaml order first, then everything autogen derived
    for f in real_model.functions:
        if f.generated:
            assert "CompositeExplicitAutograd" in {str(k) for k in real_model.kernels_of(f)}, f.func.name


def test_real_operator_groups_partition_the_functions(real_model):
    grouped = [f for g in real_model.operator_groups for f in g.functions]
    assert len(grouped) == len(real_model.functions)
    assert {id(f) for f in grouped} == {id(f) for f in real_model.functions}
    names = [g.name for g in real_model.operator_groups]
    assert names == sorted(names) and len(set(names)) == len(names)
    for g in real_model.operator_groups:
        assert all(f.root_name == g.name for f in g.functions)


@pytest.mark.parametrize("name, kind, base", [
    ("add.Tensor", "functional", "add"),
    ("add_.Tensor", "inplace", "add"),
    ("add.out", "out", "add"),
    ("__iand__.Tensor", "inplace", "and"),
    ("__and__.Tensor", "functional", "and"),
])
def test_real_model_knows_the_add_family(real_model, name, kind, base):
    f = next(f for f in real_model.functions if str(f.func.name) == name)
    assert f.func.kind().value == kind
    assert f.root_name == base


def test_real_structured_delegates_point_at_structured_out_variants(real_model):
    by_name = real_model.by_name
    for f in real_model.functions:
        if f.structured_delegate is not None:
            target = by_name[f.structured_delegate]
            assert target.structured and target.func.is_out_fn(), f.func.name
