"""The derivatives model's records: one backward formula, one forward formula, and the
``DerivativeInfo`` of a function and dispatch key (what torchgen calls a DifferentiabilityInfo).
Kept apart from the reader (derivatives.py) so the infos derived without an entry
(foreach_derivatives.py) can build them too.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Optional

from ..errors import Location
from .schema import OperatorName

DEFAULT = "Default"


@dataclass(frozen=True)
class Formula:
    """One backward formula: the gradient of ``var_names`` (arguments)."""

    var_names: tuple[str, ...]
    text: str
    location: Location
    saved_inputs: tuple[str, ...]   # torchgen's order
    saved_outputs: tuple[str, ...]


@dataclass(frozen=True)
class ForwardFormula:
    """A forward-mode formula for outputs (``result``, ``result0``, named returns)."""

    var_names: tuple[str, ...]
    text: str
    location: Location


@dataclass(frozen=True)
class DerivativeInfo:
    name: OperatorName                    # the function the info is for (torchgen's canonical one)
    namespace: str
    dispatch_key: str                     # "Default" or an Autograd key
    node: Optional[str]                   # backward node class; None without a backward formula
    formulas: tuple[Formula, ...]
    forward_formulas: tuple[ForwardFormula, ...]
    differentiable_inputs: tuple[str, ...]  # arguments with a formula, in argument order
    non_differentiable: tuple[str, ...]
    saved_inputs: tuple[str, ...]         # deduplicated, torchgen's order
    saved_outputs: tuple[str, ...]
    output_differentiability: Optional[tuple[bool, ...]]  # as written (None: all)
    output_differentiability_conditions: Optional[tuple[str, ...]]
    differentiable_outputs: tuple[bool, ...]  # per return: differentiable by the entry and Tensor-like
    location: Location                    # the entry (or its dispatch section)
    derived_from: Optional[OperatorName] = None  # the view whose formulas a *_copy info reuses

    @cached_property
    def key(self) -> str:  # remembered: the autograd plan indexes every info by it, several times
        return str(self.name) if self.namespace == "aten" else f"{self.namespace}::{self.name}"

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.key,
            "dispatch_key": self.dispatch_key,
            "node": self.node,
            "saved_inputs": sorted(self.saved_inputs),
            "saved_outputs": sorted(self.saved_outputs),
            "output_differentiability": list(self.differentiable_outputs),
            "differentiable_inputs": list(self.differentiable_inputs),
            "non_differentiable": sorted(self.non_differentiable),
            "forward": sorted(", ".join(f.var_names) for f in self.forward_formulas),
            "derived_from": str(self.derived_from) if self.derived_from else None,
        }
