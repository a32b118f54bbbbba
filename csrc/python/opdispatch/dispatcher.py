"""Inspecting the dispatcher and steering dispatch from Python.

dump("ns::op") and dump_table("ns::op") show an operator's registrations and its computed
dispatch table; check_invariants raises opdispatch.Error when the state is inconsistent.
exclude_keys / include_keys change this thread's key sets for the duration of a with block.
"""
from __future__ import annotations

from typing import Dict, List, Tuple, Union

from opdispatch import _C

DispatchKeySet = _C.DispatchKeySet
Keys = Union[str, DispatchKeySet]


def dump(name: str) -> str:
    """Human-readable state of an operator: schema, kernels, fallbacks, computed table."""
    return _C._dump(name)


def dump_table(name: str) -> Dict[str, str]:
    """Runtime key name -> label of the kernel it resolves to; keys with nothing are absent."""
    return _C._dump_table(name)


def check_invariants(name: str) -> None:
    """Raises opdispatch.Error when the operator's cached table disagrees with its registrations."""
    _C._check_invariants(name)


def op_names() -> List[str]:
    """Every defined operator, 'ns::name' or 'ns::name.overload', sorted."""
    return _C._op_names()


def exclude_keys(*keys: Keys) -> "_C._KeyGuard":
    """`with exclude_keys("AutogradCPU"): ...` hides keys from calls on this thread (alias
    keys such as "Autograd" stand for their runtime keys)."""
    return _C._KeyGuard(False, keys)


def include_keys(*keys: Keys) -> "_C._KeyGuard":
    """`with include_keys("XLA"): ...` adds keys to every call on this thread."""
    return _C._KeyGuard(True, keys)


def local_keys() -> Tuple[DispatchKeySet, DispatchKeySet]:
    """(included, excluded): this thread's current key sets."""
    return _C._local_keys()


def backend_key_of(device: str) -> str:
    """The backend dispatch key of a device: 'cpu' -> 'CPU', 'meta' -> 'Meta', ..."""
    return _C._backend_key_of(device)


def register_device_type(name: str, dispatch_key: str) -> str:
    """Registers an external device type (e.g. "xla" with "XLA"); idempotent."""
    return _C._register_device_type(name, dispatch_key)


def static_registration_errors() -> List[str]:
    """Messages of C++ static registrations that failed in this process."""
    return _C._static_registration_errors()
