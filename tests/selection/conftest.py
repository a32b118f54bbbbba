"""Fixtures of the selective-build tests: our yaml's model, its build configuration (with the
autograd layer), the checkout's csrc/ indexed, and a helper closing a selection written inline."""
import pytest

from opgen.model import load_model
from opgen.selection import GeneratedCallees, close_selection, index_sources, read_csrc
from opgen.selection.load import parse_selection

from selection_helpers import CSRC, OUR_DERIVATIVES, OUR_TAGS, OUR_YAML, build_config


@pytest.fixture(scope="session")
def our_model():
    return load_model(OUR_YAML, OUR_TAGS)


@pytest.fixture(scope="session")
def our_callees(our_model):
    """The groups each group's generated files call, for the build's configuration (memoized)."""
    return GeneratedCallees(our_model, build_config(our_model, OUR_DERIVATIVES))


@pytest.fixture(scope="session")
def our_csrc(our_model):
    """The checkout's csrc/ as the library compiles it, indexed against our yaml's groups."""
    sources, runtime = read_csrc(CSRC, kernels=True)
    return index_sources(sources, {g.name for g in our_model.operator_groups}, runtime)


@pytest.fixture
def close(our_model, our_callees, our_csrc):
    """close("add.Tensor\\nmm", sources=...) -> the closure of that plain list (ops.txt) over our yaml;
    sources default to the checkout's csrc/."""
    def run(text, sources=None, runtime=(), generated=None):
        selection = parse_selection(text.encode(), "ops.txt", our_model)
        return close_selection(selection, our_model, generated or our_callees,
                               our_csrc if sources is None else sources, runtime)
    return run


@pytest.fixture
def close_yaml(our_model, our_callees, our_csrc):
    """close_yaml("operators: ...") -> the closure of that torchgen selection yaml (ops.yaml) over our
    yaml and the checkout's csrc/."""
    def run(text):
        selection = parse_selection(text.encode(), "ops.yaml", our_model)
        return close_selection(selection, our_model, our_callees, our_csrc)
    return run
