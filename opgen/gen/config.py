"""What one build generates: the dispatch keys that get kernel translation units."""
from __future__ import annotations

from dataclasses import dataclass

from ..model.dispatch_keys import DispatchKey

# CPU plus the keys every build has; CUDA and external backends are added by options.
DEFAULT_KEYS: tuple[DispatchKey, ...] = (
    DispatchKey.CPU,
    DispatchKey.Meta,
    DispatchKey.BackendSelect,
    DispatchKey.CompositeImplicitAutograd,
    DispatchKey.CompositeExplicitAutograd,
    DispatchKey.CompositeExplicitAutogradNonFunctional,
    DispatchKey.Functionalize,
)


@dataclass(frozen=True)
class CodegenConfig:
    keys: tuple[DispatchKey, ...] = DEFAULT_KEYS

    def __post_init__(self) -> None:
        # Sorted and unique, so equal configurations give equal keys and files.
        object.__setattr__(self, "keys", tuple(sorted(set(self.keys), key=lambda k: k.value)))

    def describe(self) -> str:
        return ",".join(k.value for k in self.keys)

