"""Dispatch key names that yaml files may use, and the families they fall into."""
from __future__ import annotations

from enum import Enum


class DispatchKey(Enum):
    CPU = "CPU"
    CUDA = "CUDA"
    MPS = "MPS"
    XPU = "XPU"
    MTIA = "MTIA"
    Meta = "Meta"
    SparseCPU = "SparseCPU"
    SparseCUDA = "SparseCUDA"
    SparseMPS = "SparseMPS"
    SparseXPU = "SparseXPU"
    SparseMeta = "SparseMeta"
    SparseCsrCPU = "SparseCsrCPU"
    SparseCsrCUDA = "SparseCsrCUDA"
    SparseCsrMPS = "SparseCsrMPS"
    SparseCsrXPU = "SparseCsrXPU"
    SparseCsrMeta = "SparseCsrMeta"
    MkldnnCPU = "MkldnnCPU"
    QuantizedCPU = "QuantizedCPU"
    QuantizedCUDA = "QuantizedCUDA"
    QuantizedMeta = "QuantizedMeta"
    NestedTensorCPU = "NestedTensorCPU"
    NestedTensorCUDA = "NestedTensorCUDA"
    NestedTensorXPU = "NestedTensorXPU"
    NestedTensorHPU = "NestedTensorHPU"
    NestedTensorMeta = "NestedTensorMeta"
    ZeroTensor = "ZeroTensor"
    CompositeImplicitAutograd = "CompositeImplicitAutograd"
    CompositeImplicitAutogradNestedTensor = "CompositeImplicitAutogradNestedTensor"
    CompositeExplicitAutograd = "CompositeExplicitAutograd"
    CompositeExplicitAutogradNonFunctional = "CompositeExplicitAutogradNonFunctional"
    # Keys that only external backends (backend yaml) and the runtime use.
    BackendSelect = "BackendSelect"
    Functionalize = "Functionalize"
    ADInplaceOrView = "ADInplaceOrView"
    Autograd = "Autograd"
    AutogradCPU = "AutogradCPU"
    AutogradCUDA = "AutogradCUDA"
    AutogradXLA = "AutogradXLA"
    AutogradLazy = "AutogradLazy"
    XLA = "XLA"
    Lazy = "Lazy"

    def __str__(self) -> str:
        return self.value

    # Members are singletons compared by identity: hash them so, in C. Enum's own __hash__ is
    # Python (hash of the name), and indices and tables keyed by DispatchKey hash a key some
    # 300k times rendering PyTorch's yaml (~0.1 us each saved). Nothing generated depends on a
    # set's order (names hash differently in every process anyway: PYTHONHASHSEED).
    __hash__ = object.__hash__

    @staticmethod
    def lookup(name: str) -> "DispatchKey | None":
        return _BY_NAME.get(name)


_BY_NAME = {k.value: k for k in DispatchKey}

# Keys a native_functions.yaml dispatch table may name.
IN_TREE_KEYS = frozenset(DispatchKey(k) for k in (
    "CPU", "CUDA", "MPS", "XPU", "MTIA", "Meta", "SparseCPU", "SparseCUDA", "SparseMPS", "SparseXPU",
    "SparseMeta", "SparseCsrCPU", "SparseCsrCUDA", "SparseCsrMPS", "SparseCsrXPU", "SparseCsrMeta",
    "MkldnnCPU", "QuantizedCPU", "QuantizedCUDA", "QuantizedMeta", "NestedTensorCPU", "NestedTensorCUDA",
    "NestedTensorXPU", "NestedTensorHPU", "NestedTensorMeta", "ZeroTensor", "CompositeImplicitAutograd",
    "CompositeImplicitAutogradNestedTensor", "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional",
))

# Backends whose structured kernels are written as meta()/impl() pairs.
STRUCTURED_KEYS = frozenset({DispatchKey.CPU, DispatchKey.CUDA, DispatchKey.MPS, DispatchKey.XPU, DispatchKey.MTIA})
# Backends that get kernels generated from ufunc_inner_loop.
UFUNC_KEYS = (DispatchKey.CPU, DispatchKey.CUDA)
COMPOSITE_KEYS = frozenset({
    DispatchKey.CompositeImplicitAutograd, DispatchKey.CompositeImplicitAutogradNestedTensor,
    DispatchKey.CompositeExplicitAutograd, DispatchKey.CompositeExplicitAutogradNonFunctional,
})
CUDA_LIKE_KEYS = frozenset({
    DispatchKey.CUDA, DispatchKey.QuantizedCUDA, DispatchKey.SparseCUDA, DispatchKey.SparseCsrCUDA,
    DispatchKey.NestedTensorCUDA,
})
