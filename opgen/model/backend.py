"""Per-dispatch-key kernel tables, kept apart from the backend-agnostic functions.

A ``BackendIndex`` maps operator names to the kernel that implements them at one
dispatch key.  Indices are immutable: adding a backend builds new indices and
never touches a ``NativeFunction``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Iterable, Mapping, Optional

from .dispatch_keys import CUDA_LIKE_KEYS, DispatchKey
from .schema import OperatorName

DEFAULT_KERNEL_NAMESPACE = "at::native"


@dataclass(frozen=True)
class BackendMetadata:
    kernel: str
    structured: bool
    cpp_namespace: str = DEFAULT_KERNEL_NAMESPACE

    def supports_symint(self) -> bool:
        return "_symint" in self.kernel


@dataclass(frozen=True)
class BackendIndex:
    dispatch_key: DispatchKey
    use_out_as_primary: bool
    external: bool
    device_guard: bool
    index: Mapping[OperatorName, BackendMetadata] = field(default_factory=dict)

    def get(self, name: OperatorName) -> Optional[BackendMetadata]:
        return self.index.get(name)

    def has_kernel(self, name: OperatorName) -> bool:
        return name in self.index

    def __reduce__(self):  # MappingProxyType does not pickle; the parse cache needs it to
        return (BackendIndex, (self.dispatch_key, self.use_out_as_primary, self.external, self.device_guard, dict(self.index)))


def build_indices(
    entries: Iterable[tuple[DispatchKey, OperatorName, BackendMetadata]],
    *,
    external: bool = False,
    use_out_as_primary: bool = True,
) -> dict[DispatchKey, BackendIndex]:
    """Indices from (key, operator, kernel) triples; a repeated pair is a bug upstream."""
    tables: dict[DispatchKey, dict[OperatorName, BackendMetadata]] = {}
    for key, name, meta in entries:
        table = tables.setdefault(key, {})
        if name in table:
            raise ValueError(f"duplicate kernel for {name} at {key}")
        table[name] = meta
    return {
        key: BackendIndex(key, use_out_as_primary, external, key in CUDA_LIKE_KEYS, MappingProxyType(table))
        for key, table in sorted(tables.items(), key=lambda kv: kv[0].value)
    }
