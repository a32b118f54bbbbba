"""opdispatch.ops.<namespace>.<op>[.<overload>](...): every registered operator, called
through the boxed path with its schema parsing the arguments.

`ops.ns.op.overload` is one overload (`.default` for the one without an overload name);
`ops.ns.op(...)` tries each overload's schema in overload-name order and calls the first the
arguments bind to. Namespaces, packets and overloads are looked up on first access and kept.
"""

from opdispatch import _C, _left_out, _op_table


# All overloads of `ns::name` (a C++ type: its call is the hot path). Attributes are the
# overloads (`default` for the one without an overload name); overloads() lists them.
OpOverloadPacket = _C._OpPacket


class OpNamespace:
    """`opdispatch.ops.<ns>`: attribute access finds the operators of the namespace."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, op_name: str) -> OpOverloadPacket:
        if op_name.startswith("__"):
            raise AttributeError(op_name)
        qualified = f"{self._name}::{op_name}"
        if qualified in _op_table.LEFT_OUT:  # a selective build left it out: calling it says so
            packet = _left_out.LeftOutPacket(qualified)
            setattr(self, op_name, packet)
            return packet
        try:
            packet = OpOverloadPacket(qualified)
        except _C.Error as exc:
            raise AttributeError(str(exc)) from None
        if not packet.overloads():
            raise AttributeError(f"no operator named {qualified} is defined")
        setattr(self, op_name, packet)
        return packet

    def __dir__(self):
        prefix = self._name + "::"
        names = {n[len(prefix):].split(".")[0] for n in _C._op_names() if n.startswith(prefix)}
        return sorted(names | set(super().__dir__()))

    def __repr__(self) -> str:
        return f"<opdispatch operator namespace {self._name}>"


def __getattr__(ns: str) -> OpNamespace:
    """opdispatch.ops.<ns>: created on first access and kept as a module attribute."""
    if ns.startswith("__"):
        raise AttributeError(ns)
    namespace = OpNamespace(ns)
    globals()[ns] = namespace
    return namespace
