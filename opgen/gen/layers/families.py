"""Relations inside one operator group: the out= function a function delegates to, and the
functional / in-place / mutable siblings of a generated variant."""
from __future__ import annotations

from typing import Optional

from ...errors import OpgenError
from ...model.autogen import variant_families
from ...model.grouping import OperatorGroup
from ...model.native_function import NativeFunction
from ...model.schema import SchemaKind


class GroupRelations:
    def __init__(self, group: OperatorGroup):
        self.group = group
        self._by_name = {f.func.name: f for f in group.functions}
        # The model's own families (loading already rejected two functions of one kind in a family).
        self._families = variant_families(group.functions)

    def structured_out(self, f: NativeFunction) -> Optional[NativeFunction]:
        """The structured out= function behind f (f itself, or its structured_delegate)."""
        if f.structured:
            return f
        if f.structured_delegate is None:
            return None
        out = self._by_name.get(f.structured_delegate)
        if out is None:
            raise OpgenError(f"{f.func.name} delegates to {f.structured_delegate}, which is not an overload of "
                             f"'{self.group.name}'", f.location)
        return out

    def sibling(self, f: NativeFunction, kind: SchemaKind) -> Optional[NativeFunction]:
        return self._families.get(f.func.family_key(), {}).get(kind)

    def functional_of(self, out: NativeFunction) -> NativeFunction:
        """The function a structured out= function's meta class is named after."""
        return self.sibling(out, SchemaKind.functional) or out
