"""``load_selection``: a selection file read and checked against a Model.

Two formats, told apart by their first lines:

* torchgen's selection yaml (``--op-selection-yaml-path``): a mapping with ``operators:``, each
  operator (``aten::add.Tensor``, or a base name ``aten::add`` with ``include_all_overloads``)
  mapped to ``is_root_operator``, ``is_used_for_training``, ``include_all_overloads`` and
  ``debug_info`` (torchgen's defaults: true, true, true, none). Its other top-level keys are
  accepted; ``kernel_metadata`` and ``et_kernel_metadata`` select kernels per dtype, which opgen
  does not do, so a non-empty one is a warning. ``include_all_operators: true`` selects everything.
* a plain list: one operator name a line (``add.Tensor``, ``aten::add.Tensor``, ``mm``), ``#``
  comments and blank lines ignored.

Every problem is reported at once, each at FILE:LINE: names the model lacks (with the nearest
one), an operator named twice (with the line that named it first), values of the wrong type,
unknown keys.
"""
from __future__ import annotations

import re
from typing import Any, Optional

from ..errors import DiagnosticCollector, Location, OpgenError, did_you_mean
from ..model.loader import Model
from ..yamlio import LocatedMap, load_bytes, read_input
from .names import OperatorNames, ParsedName, parse_name
from .selection import SelectedOperator, Selection

ERROR_CAP = 50
TORCHGEN_FORMAT = "torchgen-yaml"
LIST_FORMAT = "list"

# torchgen's SelectiveBuilder.from_yaml_dict top-level keys; the value each must be.
TOP_LEVEL_KEYS = {
    "operators": "a mapping of operator names",
    "include_all_operators": "true or false",
    "include_all_non_op_selectives": "true or false",
    "debug_info": "a list",
    "build_features": "a list",
    "custom_classes": "a list",
    "kernel_metadata": "a mapping",
    "et_kernel_metadata": "a mapping",
}
_TYPES = {"true or false": bool, "a list": list, "a mapping": dict, "a mapping of operator names": dict}
OPERATOR_KEYS = ("name", "is_root_operator", "is_used_for_training", "include_all_overloads", "debug_info")
PER_DTYPE_KEYS = ("kernel_metadata", "et_kernel_metadata")

# A line of a top-level yaml mapping: `operators:`, `include_all_operators: true`; an operator name
# (aten::add) never has a ':' followed by a space or the line's end.
_TOP_LEVEL_KEY = re.compile(r"^[A-Za-z_]\w*[ \t]*:(?:[ \t]|$)", re.M)


def load_selection(path: str, model: Model, display_name: Optional[str] = None) -> Selection:
    """The selection in ``path`` (either format), validated against ``model``; raises OpgenError
    listing every problem, each at FILE:LINE."""
    name = display_name or path
    return parse_selection(read_input(path, name, "the selection"), name, model)


def parse_selection(data: bytes, name: str, model: Model) -> Selection:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is None or "\0" in text:
        load_bytes(data, name)  # raises the yaml reader's error for a binary or non-UTF-8 file, at FILE:LINE
        raise OpgenError("not a text file", Location(name, 0))
    if looks_like_torchgen_yaml(text):
        return _from_torchgen_yaml(load_bytes(data, name), name, model)
    return _from_list(text, name, model)


def looks_like_torchgen_yaml(text: str) -> bool:
    return _TOP_LEVEL_KEY.search(text) is not None or text.lstrip().startswith(("{", "---"))


class _Checker:
    """Resolves entries against the model, collecting problems and remembering first mentions."""

    def __init__(self, name: str, model: Model):
        self.file = name
        self.names = OperatorNames(model)
        self.errors = DiagnosticCollector(ERROR_CAP)
        self.warnings: list[str] = []
        self.first: dict[tuple[str, str], tuple[str, Location]] = {}  # identity -> (as written, where)

    def resolve(self, text: Any, where: Location, all_overloads: bool) -> Optional[tuple[str, ...]]:
        """The keys an entry names, or None after reporting why it names none."""
        if not isinstance(text, str):
            self.errors.add(where, f"operator names are strings, got {text!r}; write e.g. aten::add.Tensor")
            return None
        parsed = parse_name(text)
        if parsed is None:
            self.errors.add(where, f"'{text}' is not an operator name; write name.overload, e.g. aten::add.Tensor or mm")
            return None
        if all_overloads and not parsed.overload:
            keys = tuple(f.key for f in self.names.overloads(parsed))
            identity = ("all", parsed.base_key)
        else:
            f = self.names.function(parsed)
            keys = (f.key,) if f is not None else ()
            identity = ("one", parsed.key)
        if not keys:
            self.errors.add(where, f"unknown operator '{text}'; {self.names.suggestion(text, parsed, all_overloads)}")
            return None
        if not self._first_mention(identity, text, where, parsed):
            return None
        return keys

    def _first_mention(self, identity: tuple[str, str], text: str, where: Location, parsed: ParsedName) -> bool:
        if identity in self.first:
            written, first = self.first[identity]
            same = "" if written == text else f" (as '{written}')"
            what = f"every overload of {parsed.base_key}" if identity[0] == "all" else parsed.key
            self.errors.add(where, f"duplicate: {what} is already selected at line {first.line}{same}; remove one of them")
            return False
        self.first[identity] = (text, where)
        return True

    def warn(self, where: Location, message: str) -> None:
        self.warnings.append(f"{where}: warning: {message}")

    def finish(self, format_: str, operators: list[SelectedOperator], include_all: Optional[Location] = None) -> Selection:
        self.errors.sort_by_location()
        self.errors.raise_if_any()
        if not operators and include_all is None:
            self.warn(Location(self.file, 0), "selects no operators: the build gets only what the runtime itself calls")
        return Selection(self.file, format_, tuple(operators), include_all, tuple(self.warnings))


def _from_list(text: str, name: str, model: Model) -> Selection:
    check = _Checker(name, model)
    operators = []
    for number, line in enumerate(text.splitlines(), 1):
        entry = line.split("#", 1)[0].strip()
        if not entry:
            continue
        where = Location(name, number)
        if len(entry.split()) > 1:
            check.errors.add(where, f"'{entry}' is more than one name; write one operator name a line")
            continue
        keys = check.resolve(entry, where, all_overloads=False)
        if keys is not None:
            operators.append(SelectedOperator(entry, keys, where))
    return check.finish(LIST_FORMAT, operators)


def _from_torchgen_yaml(document: Any, name: str, model: Model) -> Selection:
    check = _Checker(name, model)
    if not isinstance(document, LocatedMap):
        raise OpgenError("expected torchgen's selection yaml: a mapping with 'operators:' at the top level",
                         Location(name, getattr(document, "line", 1)))
    for key in document:
        if key not in TOP_LEVEL_KEYS:
            hint = did_you_mean(str(key), TOP_LEVEL_KEYS, f"known keys: {', '.join(TOP_LEVEL_KEYS)}")
            check.errors.add(document.where(key), f"unknown key '{key}'; {hint}")
            continue
        value, what = document[key], TOP_LEVEL_KEYS[key]
        if value is not None and not isinstance(value, _TYPES[what]):
            check.errors.add(document.where(key), f"'{key}' must be {what}, got {_describe(value)}")
    include_all = None
    if document.get("include_all_operators") is True:
        include_all = document.where("include_all_operators")
    for key in PER_DTYPE_KEYS:
        if isinstance(document.get(key), dict) and document[key]:
            check.warn(document.where(key), f"{key} is not supported: opgen selects whole operators, not "
                                            f"kernels per dtype, so every selected operator keeps all its dtypes")
    operators = []
    table = document.get("operators")
    if isinstance(table, LocatedMap):
        for op_name, info in table.items():
            selected = _operator_entry(check, op_name, info, table.where(op_name))
            if selected is not None:
                operators.append(selected)
    return check.finish(TORCHGEN_FORMAT, operators, include_all)


def _operator_entry(check: _Checker, op_name: Any, info: Any, where: Location) -> Optional[SelectedOperator]:
    if info is None:
        info = LocatedMap(where.file, where.line)
    if not isinstance(info, LocatedMap):
        check.errors.add(where, f"'{op_name}' must map to a mapping of {', '.join(OPERATOR_KEYS)}, got {_describe(info)}")
        return None
    ok = True
    for key in info:
        if key not in OPERATOR_KEYS:
            hint = did_you_mean(str(key), OPERATOR_KEYS, f"known keys: {', '.join(OPERATOR_KEYS)}")
            check.errors.add(info.where(key), f"unknown key '{key}' in operator {op_name}; {hint}")
            ok = False
    flags = {}
    for key, default in (("is_root_operator", True), ("is_used_for_training", True), ("include_all_overloads", True)):
        flags[key] = info.get(key, default)
        if not isinstance(flags[key], bool):
            check.errors.add(info.where(key), f"'{key}' of {op_name} must be true or false, got {_describe(flags[key])}")
            ok = False
    debug_info = info.get("debug_info", [])
    if not isinstance(debug_info, list):
        check.errors.add(info.where("debug_info"), f"'debug_info' of {op_name} must be a list, got {_describe(debug_info)}")
        ok = False
    if "name" in info and info["name"] != op_name:
        check.errors.add(info.where("name"), f"'name: {info['name']}' differs from the operator it describes ({op_name}); "
                                             f"remove it or make them equal")
        ok = False
    all_overloads = flags["include_all_overloads"] is True
    keys = check.resolve(op_name, where, all_overloads)
    if keys is None or not ok:
        return None
    return SelectedOperator(op_name, keys, where, flags["is_root_operator"], flags["is_used_for_training"],
                            all_overloads, tuple(str(x) for x in debug_info))


def _describe(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return f"{type(value).__name__} {value!r}"
