"""Paths and the build configuration the selective-build tests share (conftest.py has the fixtures)."""
import os

from opgen.gen import CodegenConfig
from opgen.gen.layers.autograd_kernels import AutogradModel
from opgen.gen.engine.config import AUTOGRAD_KEYS, DEFAULT_KEYS
from opgen.model.derivatives import load_derivatives

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUR_YAML = os.path.join(REPO_ROOT, "yaml", "native_functions.yaml")
OUR_TAGS = os.path.join(REPO_ROOT, "yaml", "tags.yaml")
OUR_DERIVATIVES = os.path.join(REPO_ROOT, "yaml", "derivatives.yaml")
CSRC = os.path.join(REPO_ROOT, "csrc")


def build_config(model, derivatives_path):
    """The build's codegen configuration: default keys plus the autograd layer of ``derivatives_path``."""
    return CodegenConfig(DEFAULT_KEYS + AUTOGRAD_KEYS, autograd=AutogradModel(model, load_derivatives(derivatives_path, model)))
