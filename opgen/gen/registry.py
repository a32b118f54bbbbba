"""The generated layers of an in-tree group, in order: the one list ``GroupCodegen`` iterates.

Adding a layer: docs/architecture.md#adding-a-generated-layer.
"""
from __future__ import annotations

from .layers.autograd_kernels import AUTOGRAD
from .layers.functionalize import FUNCTIONALIZE
from .layers.kernels import KERNELS
from .engine.layer import Layer
from .layers.operators import DECLARATIONS, METHODS, OPERATORS

LAYERS: tuple[Layer, ...] = (OPERATORS, DECLARATIONS, METHODS, KERNELS, FUNCTIONALIZE, AUTOGRAD)
