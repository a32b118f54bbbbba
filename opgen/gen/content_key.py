"""The content key of one operator group's in-tree files: the hash of its inputs (gen/inputs.py),
so a key changes exactly when ``opgen cache explain`` has an input to name."""
from __future__ import annotations

from ..model.backend import BackendIndex
from ..model.dispatch_keys import DispatchKey
from ..model.grouping import OperatorGroup
from .config import CodegenConfig
from .inputs import group_inputs, inputs_key


def group_key(group: OperatorGroup, indices: dict[DispatchKey, BackendIndex], config: CodegenConfig) -> str:
    return inputs_key(group_inputs(group, indices, config))
