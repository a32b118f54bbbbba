"""The generated layers of an in-tree group, in order: the one list ``GroupCodegen`` iterates.

Adding a layer: docs/architecture.md#adding-a-generated-layer.
"""
from __future__ import annotations

from .autograd_kernels import AUTOGRAD
from .functionalize import FUNCTIONALIZE
from .kernels import KERNELS
from .layer import Layer
from .operators import DECLARATIONS, METHODS, OPERATORS

LAYERS: tuple[Layer, ...] = (OPERATORS, DECLARATIONS, METHODS, KERNELS, FUNCTIONALIZE, AUTOGRAD)
