"""Read yaml into plain Python values that remember their line numbers.

PyYAML's C composer builds the node tree quickly; we walk it ourselves so that
every mapping knows the line of each key and duplicate keys are errors instead
of silently overwriting each other.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Iterator, Optional

import yaml

from .errors import Location, OpgenError

try:  # the C loader is ~5x faster; fall back when libyaml is missing
    _Loader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on the PyYAML build
    _Loader = yaml.SafeLoader

_SCALARS = yaml.constructor.SafeConstructor()


class LocatedMap(dict):
    """A mapping whose keys remember where they were written."""

    __slots__ = ("file", "line", "key_lines")

    def __init__(self, file: str, line: int):
        super().__init__()
        self.file = file
        self.line = line
        self.key_lines: dict[Any, int] = {}

    def where(self, key: Any = None) -> Location:
        return Location(self.file, self.key_lines.get(key, self.line))


class LocatedList(list):
    __slots__ = ("file", "line", "item_lines")

    def __init__(self, file: str, line: int):
        super().__init__()
        self.file = file
        self.line = line
        self.item_lines: list[int] = []  # where each item starts (scalars cannot remember it)


def _convert(node: yaml.Node, file: str) -> Any:
    if isinstance(node, yaml.MappingNode):
        result = LocatedMap(file, node.start_mark.line + 1)
        for key_node, value_node in node.value:
            key = _convert(key_node, file)
            line = key_node.start_mark.line + 1
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                raise OpgenError(f"mapping keys must be scalars, got {type(key).__name__}", Location(file, line))
            if key in result:
                raise OpgenError(
                    f"duplicate key '{key}' (first at line {result.key_lines[key]}); remove one of them",
                    Location(file, line),
                )
            result[key] = _convert(value_node, file)
            result.key_lines[key] = line
        return result
    if isinstance(node, yaml.SequenceNode):
        items = LocatedList(file, node.start_mark.line + 1)
        items.extend(_convert(child, file) for child in node.value)
        items.item_lines = [child.start_mark.line + 1 for child in node.value]
        return items
    return _SCALARS.construct_object(node)


def load_located(text: str, file: str) -> Any:
    """Parse ``text``; syntax errors become ``OpgenError`` at FILE:LINE."""
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.reader.ReaderError as exc:  # its own message names "<unicode string>", not the file
        raise _unacceptable_character(text, exc.position, file) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 0
        problem = exc.problem or exc.context or "invalid yaml"
        raise OpgenError(f"yaml syntax error: {problem}", Location(file, line)) from None
    except yaml.YAMLError as exc:
        raise OpgenError(f"yaml error: {exc}", Location(file, 0)) from None
    if root is None:
        return None
    try:
        return _convert(root, file)
    except yaml.constructor.ConstructorError as exc:
        mark = exc.problem_mark
        raise OpgenError(f"yaml error: {exc.problem}", Location(file, mark.line + 1 if mark else 0)) from None


# Characters str.splitlines breaks lines at and PyYAML does not, or the other way round.
_NOT_YAML_LINE_BREAKS = ("\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")



def load_entry_alone(text: str, line: int, name: str) -> Optional[list]:
    """One entry's text (a cached file's, read again on its own) loaded with its lines numbered as
    in the file: the one-entry document, or None when it is not exactly one entry or not yaml."""
    try:
        document = load_located("\n" * (line - 1) + text, name)
    except OpgenError:
        return None
    return document if isinstance(document, list) and len(document) == 1 else None

def top_level_items(text: str) -> Optional[list[tuple[int, str]]]:
    """The items of a top-level block sequence as (first line, text), split without parsing: an
    item starts at each line that begins with '-' in column 0 and runs to the next one.

    None when the text is not only such a sequence: anything but comments before the first item,
    or a directive or document marker anywhere. Each item's text then parses on its own exactly as
    it does within the file, unless it refers to an anchor elsewhere (an error, seen when parsing
    it), so callers can parse an edited file item by item.
    """
    if any(separator in text for separator in _NOT_YAML_LINE_BREAKS):
        return None  # str.splitlines would count lines differently from the yaml parser
    lines = text.splitlines(keepends=True)
    starts = []
    for number, line in enumerate(lines):
        if line.startswith(("---", "...", "%")):
            return None
        if line.startswith("-"):
            if line[1:2] not in (" ", "\n", "\r", ""):  # '-x' in column 0 is a scalar, not an item
                return None
            starts.append(number)
    if not starts or not all(_blank_or_comment(line) for line in lines[:starts[0]]):
        return None
    ends = starts[1:] + [len(lines)]
    return [(start + 1, "".join(lines[start:end])) for start, end in zip(starts, ends)]


def mapping_on_first_line(item: str) -> bool:
    """Whether an item of ``top_level_items`` has its mapping start on its '- ' line (as nearly all
    do), so the mapping's line is the item's line wherever the item moves."""
    return item.startswith("- ") and item[2:3] not in (" ", "\t", "#", "\n", "\r", "")


def _blank_or_comment(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


# Line breaks as the yaml parser counts them, so our line numbers match its marks.
_YAML_LINE_BREAK = re.compile("\r\n|[\n\r\x85\u2028\u2029]")


def _line_of(text: str, position: int) -> int:
    return 1 + len(_YAML_LINE_BREAK.findall(text, 0, position))


def _unacceptable_character(text: str, position: int, file: str) -> OpgenError:
    """The first character yaml refuses (PyYAML reports it without the file's name or line)."""
    found = yaml.reader.Reader.NON_PRINTABLE.search(text)
    if found is not None:
        position = found.start()
    position = min(max(position, 0), max(len(text) - 1, 0))
    code = ord(text[position]) if text else 0
    if code == 0:
        message = "contains a NUL byte, so it is not yaml text (is it a binary file?)"
    else:
        message = f"contains the character U+{code:04X}, which yaml does not allow in a file; remove it"
    return OpgenError(message, Location(file, _line_of(text, position)))


def load_bytes(data: bytes, file: str) -> Any:
    """Decode UTF-8 and parse; both failures become ``OpgenError`` at FILE:LINE."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        nul = data.find(b"\0", 0, exc.start)
        if nul >= 0:  # a binary file: its NUL says more than the first byte that does not decode
            raise OpgenError("contains a NUL byte, so it is not yaml text (is it a binary file?)",
                             Location(file, _line_of(data[:nul].decode("utf-8", "replace"), nul))) from None
        line = _line_of(data[:exc.start].decode("utf-8", "replace"), exc.start)
        raise OpgenError(f"not UTF-8 text: byte 0x{data[exc.start]:02x} cannot be decoded ({exc.reason}); "
                         f"save the file as UTF-8", Location(file, line)) from None
    return load_located(text, file)


def read_input(path: str, display_name: str | None = None, what: str = "yaml") -> bytes:
    """A file's bytes; OpgenError "NAME: error: cannot read <what>: <reason>" when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise OpgenError(f"cannot read {what}: {exc.strerror}", Location(display_name or path, 0)) from None


def read_located(path: str, display_name: str | None = None) -> Any:
    """Load a yaml file; ``display_name`` is what messages call it."""
    name = display_name or path
    return load_bytes(read_input(path, name), name)


def iter_entries(document: Any, file: str, on_error: Optional[Callable[[OpgenError], None]] = None) -> Iterator[LocatedMap]:
    """The top-level list of mappings that native_functions-style files hold.

    A non-mapping item is reported through ``on_error`` (so the caller can keep
    collecting problems) or raised when no callback is given.
    """
    if document is None:
        return
    if not isinstance(document, list):
        raise OpgenError("expected a list of entries at the top level (each starting with '- func:')", Location(file, 1))
    for i, item in enumerate(document):
        if not isinstance(item, LocatedMap):
            lines = getattr(document, "item_lines", ())
            line = lines[i] if i < len(lines) else getattr(item, "line", getattr(document, "line", 0))
            error = OpgenError("each entry must be a mapping, e.g. '- func: name(Tensor self) -> Tensor'", Location(file, line))
            if on_error is None:
                raise error
            on_error(error)
            continue
        yield item
