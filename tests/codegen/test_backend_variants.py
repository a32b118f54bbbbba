"""Which unlisted variants a backend gets as wrappers around its functional kernel: torchgen's rule
(opgen/gen/layers/backend_variants.py), on our own yaml, through the codegen objects (no files written)."""
import pytest

from generate_helpers import REPO_TAGS, REPO_YAML

HEADER = "backend: XLA\ncpp_namespace: op::xla\n"


@pytest.fixture(scope="module")
def model():
    from opgen.model import load_model
    return load_model(REPO_YAML, REPO_TAGS)


def registered(model, backend_text: str) -> dict[str, list[str]]:
    """'<Key>' -> the operators registered there, over every group the backend lists."""
    from opgen.gen.layers.backend import backend_groups
    from opgen.model.backend_yaml import parse_backend_yaml
    backend = parse_backend_yaml(backend_text, model)
    found: dict[str, list[str]] = {}
    for codegen in backend_groups(model.operator_groups, backend):
        for key, wrappers in codegen.kernels.items():
            found.setdefault(str(key), []).extend(w.operator for w in wrappers)
    return found


def test_in_place_and_out_variants_come_from_a_listed_functional_kernel(model):
    assert registered(model, HEADER + "supported:\n  - add.Tensor\n") == {"XLA": ["add.Tensor", "add.out", "add_.Tensor"]}


def test_a_family_without_an_out_variant_gets_nothing_derived(model):
    """transpose_ (like PyTorch's t_) is an inplace_view with a CompositeExplicitAutograd kernel
    that changes metadata; a copy of transpose(self) into self would be wrong, and torchgen
    derives nothing for a family without an out= variant."""
    assert registered(model, HEADER + "supported:\n  - transpose.int\n") == {"XLA": ["transpose.int"]}


def test_the_autograd_key_gets_the_out_wrapper_of_a_listed_functional_kernel(model):
    """torchgen registers matmul.out at AutogradXLA when the yaml lists matmul under autograd, as
    it does native_layer_norm.out for pytorch/xla."""
    assert registered(model, HEADER + "autograd:\n  - matmul\n") == {"AutogradXLA": ["matmul", "matmul.out"]}


def test_use_out_as_primary_derives_nothing(model):
    text = HEADER + "use_out_as_primary: True\nsupported:\n  - add.Tensor\nautograd:\n  - matmul\n"
    assert registered(model, text) == {"XLA": ["add.Tensor"], "AutogradXLA": ["matmul"]}


def test_a_listed_variant_is_registered_as_written(model):
    text = HEADER + "supported:\n  - add.Tensor\n  - add_.Tensor\n"
    assert registered(model, text) == {"XLA": ["add.Tensor", "add.out", "add_.Tensor"]}
