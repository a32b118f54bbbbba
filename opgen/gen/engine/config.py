"""What one build generates: the dispatch keys that get kernel translation units."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ...model.dispatch_keys import DispatchKey

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


# The keys the derivatives yaml adds: generated autograd kernels and backward nodes.
AUTOGRAD_KEYS: tuple[DispatchKey, ...] = (DispatchKey.Autograd, DispatchKey.ADInplaceOrView)


def build_keys(cuda: bool, autograd: bool) -> tuple[DispatchKey, ...]:
    """The keys a build generates: the default ones, CUDA's when it compiles CUDA, and the
    autograd keys when it has a derivatives yaml (project.py says when)."""
    return DEFAULT_KEYS + ((DispatchKey.CUDA,) if cuda else ()) + (AUTOGRAD_KEYS if autograd else ())


@dataclass(frozen=True)
class CodegenConfig:
    keys: tuple[DispatchKey, ...] = DEFAULT_KEYS
    # The derivatives of the run (layers/autograd_kernels.py's AutogradModel: the engine names no
    # layer, not even for types); required by the autograd keys.
    autograd: Optional[Any] = field(default=None, compare=False, repr=False)
    # Groups generated without the autograd layer although the build has it: a selective build's
    # groups no entry uses for training (opgen/selection/closure.py). Empty in a full build.
    inference: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        # Sorted and unique, so equal configurations give equal keys and files.
        object.__setattr__(self, "keys", tuple(sorted(set(self.keys), key=lambda k: k.value)))
        object.__setattr__(self, "inference", frozenset(self.inference))
        if self.autograd is None and self.generates_autograd:
            raise ValueError("the Autograd and ADInplaceOrView keys need a derivatives yaml")

    @property
    def generates_autograd(self) -> bool:
        return any(key in AUTOGRAD_KEYS for key in self.keys)

    def trains(self, group: str) -> bool:
        """Whether ``group`` gets the autograd layer."""
        return self.generates_autograd and group not in self.inference

    def describe(self) -> str:
        return ",".join(k.value for k in self.keys)

