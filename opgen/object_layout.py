"""What a full build's objects hold that a selective link drops, read from their ELF sections,
symbols and relocations (no binutils): the size estimate of a selection (opgen/selection/sizes.py)
needs it, as a selective library is linked with --gc-sections.

* The loops of dispatch stubs (csrc/native/dispatch_stub.h): a loop object (native/cpu/*.cpp)
  defines each stub's pointer ``op_stub_loop_<stub>_<DEVICE>``, and the loop it points to is
  reached through nothing else. ``loops``: of each object, the bytes reached from its stub
  pointers only, by the set of pointers reaching them (a helper two loops share is dropped when
  both stubs are); what a root of the object reaches (an exported or otherwise global symbol, a
  static initializer) is the object's in every build.
* The callers of stubs: which global symbols of a hand-written source reach a stub pointer through
  the source's own sections (``stub_refs``), so that a stub is attributed to the groups whose units
  reference those symbols (a family file's kernels are dropped with their group's unit).
* A group unit's autograd layer and its operator handles (``unit_parts``): the bytes of its own
  symbols in the layer an inference-only selection does not generate (the Autograd and
  ADInplaceOrView wrappers, the backward nodes), and of the operator handles (namespace op::ops),
  which is what a left-out group's handles object (library.py _handle_objects) compiles again.

Bytes are symbols' sizes, as opgen/object_symbols.py counts them with nm (not section sizes).
Objects that are not 64-bit little-endian ELF relocatables read as empty: the estimate then
counts them whole, as before.
"""
from __future__ import annotations

import json
import os
import re
import struct
import tempfile
from dataclasses import dataclass, field
from typing import Iterable, Optional

import xxhash

from .object_symbols import object_state

STUB_LOOP_PREFIX = "op_stub_loop_"

_SHT_SYMTAB, _SHT_RELA, _SHT_REL, _SHT_SYMTAB_SHNDX = 2, 4, 9, 18
_SHF_ALLOC, _SHF_GNU_RETAIN = 0x2, 0x200000
_STB_LOCAL, _STB_WEAK, _STB_GNU_UNIQUE = 0, 2, 10
_STV_HIDDEN, _STV_INTERNAL = 2, 1
_SHN_UNDEF, _SHN_LORESERVE, _SHN_XINDEX = 0, 0xFF00, 0xFFFF
# Sections the linker keeps whatever references them (or whose references it follows itself).
_ROOT_SECTIONS = (".init_array", ".fini_array", ".preinit_array", ".ctors", ".dtors", ".note")
# Sections whose relocations do not keep what they name (unwind info follows its functions).
_NOT_EDGES = (".eh_frame", ".debug", ".gcc_except_table")

# Mangled names of a unit's autograd layer (opgen's generated Autograd/ADInplaceOrView wrappers
# and the backward nodes of derivatives.yaml) and of its operator handles (op::ops::...).
_AUTOGRAD = re.compile(r"wrapper_(?:Autograd|ADInplaceOrView)_|Backward\d+E|Backward\d+[0-9A-Z_]|ForwardAD")
_HANDLES = re.compile(r"^_Z(?:GVZ|Z|TV|TS|TI)?N2op3ops")


@dataclass
class Symbol:
    name: str
    bind: int
    visibility: int
    section: int      # 0: undefined
    size: int


@dataclass
class ElfObject:
    names: list[str] = field(default_factory=list)          # section names
    alloc: list[bool] = field(default_factory=list)
    symbols: list[Symbol] = field(default_factory=list)
    edges: dict[int, set[int]] = field(default_factory=dict)  # section -> sections it references
    refs: dict[int, set[str]] = field(default_factory=dict)   # section -> names of symbols it references

    def reach(self, roots: Iterable[int], blocked: frozenset[int] = frozenset()) -> set[int]:
        """The sections ``roots`` reference, transitively, entering none of ``blocked``."""
        seen, pending = set(), list(roots)
        while pending:
            section = pending.pop()
            if section in seen or section in blocked:
                continue
            seen.add(section)
            pending.extend(self.edges.get(section, ()))
        return seen

    def symbol_bytes(self, sections: set[int], own_only: bool = False) -> int:
        return sum(s.size for s in self.symbols if s.section in sections and self.alloc[s.section]
                   and not (own_only and s.bind in (_STB_WEAK, _STB_GNU_UNIQUE)))


def read_elf(path: str) -> Optional[ElfObject]:
    """The object at ``path``; None when it is missing, not a 64-bit little-endian ELF relocatable,
    or malformed (the estimate then counts it whole: no build stops for this)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    try:
        return _parse(data)
    except (struct.error, ValueError, IndexError):
        return None


def _parse(data: bytes) -> Optional[ElfObject]:
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1 or struct.unpack_from("<H", data, 16)[0] != 1:
        return None  # 64-bit, little-endian, relocatable only
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = []
    first = struct.unpack_from("<IIQQQQIIQQ", data, shoff)
    if shnum == 0:
        shnum = first[5]
    if shstrndx == _SHN_XINDEX:
        shstrndx = first[6]
    for i in range(shnum):
        headers.append(struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize))
    strtab = headers[shstrndx]

    def string(table_offset: int, offset: int) -> str:
        end = data.index(b"\0", table_offset + offset)
        return data[table_offset + offset:end].decode("utf-8", "replace")

    obj = ElfObject()
    obj.names = [string(strtab[4], h[0]) for h in headers]
    obj.alloc = [bool(h[2] & _SHF_ALLOC) for h in headers]
    symtab_index = next((i for i, h in enumerate(headers) if h[1] == _SHT_SYMTAB), None)
    if symtab_index is None:
        return obj
    symtab = headers[symtab_index]
    names_offset = headers[symtab[6]][4]
    extended = next((h for h in headers if h[1] == _SHT_SYMTAB_SHNDX and h[6] == symtab_index), None)
    count = symtab[5] // 24
    for i in range(count):
        st_name, info, other, shndx, _, size = struct.unpack_from("<IBBHQQ", data, symtab[4] + 24 * i)
        if shndx == _SHN_XINDEX and extended is not None:
            shndx, = struct.unpack_from("<I", data, extended[4] + 4 * i)
        elif shndx >= _SHN_LORESERVE:
            shndx = 0  # absolute, common: no section
        kind = info & 0xF
        name = string(names_offset, st_name) if st_name else (obj.names[shndx] if kind == 3 else "")
        obj.symbols.append(Symbol(name, info >> 4, other & 0x3, shndx, size))
    for h in headers:
        if h[1] not in (_SHT_RELA, _SHT_REL) or h[6] != symtab_index:
            continue
        target = h[7]
        if not (0 < target < len(headers)) or not obj.alloc[target] or obj.names[target].startswith(_NOT_EDGES):
            continue
        entsize = 24 if h[1] == _SHT_RELA else 16
        edges, refs = obj.edges.setdefault(target, set()), obj.refs.setdefault(target, set())
        for j in range(h[5] // entsize):
            info, = struct.unpack_from("<Q", data, h[4] + entsize * j + 8)
            index = info >> 32
            if index >= len(obj.symbols):
                continue
            symbol = obj.symbols[index]
            if symbol.section:
                edges.add(symbol.section)
            if symbol.name:
                refs.add(symbol.name)
    return obj


def _roots(obj: ElfObject, kept_pointers: bool = False) -> list[int]:
    """Sections a link keeps whatever this object's stubs are: those of its global symbols (other
    than the stub pointers), its initializers, retained and note sections."""
    roots = [s.section for s in obj.symbols if s.section and s.bind != _STB_LOCAL
             and (kept_pointers or not s.name.startswith(STUB_LOOP_PREFIX))]
    roots += [i for i, name in enumerate(obj.names) if obj.alloc[i] and name.startswith(_ROOT_SECTIONS)]
    return roots


def loops(obj: ElfObject) -> dict[str, int]:
    """{"<stub>_<DEVICE>[,...]": bytes}: what the object's stub pointers alone reach, by the
    (sorted, comma-joined) set of pointers reaching it; {} when it defines no pointer."""
    pointers = {s.name[len(STUB_LOOP_PREFIX):]: s.section for s in obj.symbols
                if s.section and s.bind != _STB_LOCAL and s.name.startswith(STUB_LOOP_PREFIX)}
    if not pointers:
        return {}
    always = obj.reach(_roots(obj))
    reached_by: dict[int, list[str]] = {}
    for stub, section in sorted(pointers.items()):
        for reached in obj.reach([section]) - always:
            reached_by.setdefault(reached, []).append(stub)
    by_set: dict[str, set[int]] = {}
    for section, stubs in reached_by.items():
        by_set.setdefault(",".join(stubs), set()).add(section)
    result = {key: obj.symbol_bytes(sections) for key, sections in sorted(by_set.items())}
    return {key: size for key, size in result.items() if size}


def stub_refs(obj: ElfObject) -> dict[str, list[str]]:
    """{stub pointer (``<stub>_<DEVICE>``): [the object's global symbols whose code reaches it, or
    "" for its initializers]}: who in a hand-written source calls which stub."""
    result: dict[str, set[str]] = {}
    entries = [(s.name, s.section) for s in obj.symbols
               if s.section and s.bind != _STB_LOCAL and not s.name.startswith(STUB_LOOP_PREFIX)]
    entries += [("", i) for i, name in enumerate(obj.names) if obj.alloc[i] and name.startswith(_ROOT_SECTIONS)]
    for name, section in entries:
        for reached in obj.reach([section]):
            for ref in obj.refs.get(reached, ()):
                if ref.startswith(STUB_LOOP_PREFIX):
                    result.setdefault(ref[len(STUB_LOOP_PREFIX):], set()).add(name)
    return {stub: sorted(names) for stub, names in sorted(result.items())}


def undefined(obj: ElfObject) -> set[str]:
    return {s.name for s in obj.symbols if not s.section and s.name and s.bind != _STB_LOCAL}


def defined_globals(obj: ElfObject) -> set[str]:
    return {s.name for s in obj.symbols if s.section and s.bind != _STB_LOCAL}


def unit_parts(obj: ElfObject) -> tuple[int, int]:
    """(autograd layer bytes, operator handles bytes) of a group unit. The autograd layer: what its
    wrappers and backward nodes reach that the rest of the unit does not (through anything but
    them: the registrations name the wrappers); the handles: what the op::ops functions reach,
    the inline functions they use included (a handles object carries its own copies)."""
    autograd = {s.section for s in obj.symbols if s.section and _AUTOGRAD.search(s.name)}
    handles = {s.section for s in obj.symbols if s.section and _HANDLES.match(s.name)}
    others = [s.section for s in obj.symbols if s.section and s.bind != _STB_LOCAL and s.section not in autograd]
    others += [i for i, name in enumerate(obj.names) if obj.alloc[i] and name.startswith(_ROOT_SECTIONS)]
    rest = obj.reach(others, frozenset(autograd))
    return obj.symbol_bytes(obj.reach(autograd) - rest), obj.symbol_bytes(obj.reach(handles) - autograd)


@dataclass(frozen=True)
class Layout:
    """What the estimate needs of a full build's objects (sizes.py records it)."""

    autograd: dict[str, int]                  # group -> its unit's autograd layer bytes
    handles: dict[str, int]                   # group -> its unit's operator handles bytes
    loops: dict[str, dict[str, int]]          # source -> {"<stub>_<DEVICE>[,...]": bytes reached through those alone}
    stub_callers: dict[str, dict[str, list[str]]]  # "<stub>_<DEVICE>" -> {"groups": [...], "sources": [...]}


MEMO_VERSION = 1


def analyze(units: dict[str, list[str]], sources: dict[str, list[str]], memo_path: Optional[str] = None) -> Layout:
    """The Layout of a library's objects: ``units`` {group: [object]}, ``sources`` {hand-written
    source: [object]}. ``memo_path``: a JSON file remembering each object's facts by its size and
    mtime, so that an edit reads only what was recompiled."""
    memo = _Memo(memo_path)
    source_facts = {path: [memo.source(obj) for obj in objects] for path, objects in sources.items()}
    # The symbols whose references say who calls a stub: the stub-reaching globals of the sources
    # and the stub pointers themselves.
    wanted = sorted({name for facts in source_facts.values() for fact in facts for names in fact["stub_refs"].values()
                     for name in names if name}
                    | {STUB_LOOP_PREFIX + stub for facts in source_facts.values() for fact in facts
                       for key in fact["loops"] for stub in key.split(",")})
    unit_facts = {group: [memo.unit(obj, wanted) for obj in objects] for group, objects in units.items()}
    source_refs = {path: set().union(*(memo.refs(obj, wanted) for obj in objects)) for path, objects in sources.items()}
    memo.save()

    referencing: dict[str, set[tuple[str, str]]] = {}   # symbol -> {("groups"|"sources", name)}
    for group, facts in unit_facts.items():
        for fact in facts:
            for name in fact["refs"]:
                referencing.setdefault(name, set()).add(("groups", group))
    for path, names in source_refs.items():
        for name in names:
            referencing.setdefault(name, set()).add(("sources", path))
    callers: dict[str, set[tuple[str, str]]] = {}
    for path, facts in source_facts.items():
        for fact in facts:
            for stub, names in fact["stub_refs"].items():
                found = callers.setdefault(stub, set())
                for name in names:
                    by = {entry for entry in referencing.get(name, ()) if entry != ("sources", path)}
                    found |= by or {("sources", path)}  # its initializers, or an export nothing here calls
    for name, by in referencing.items():  # a unit calling a stub itself
        if name.startswith(STUB_LOOP_PREFIX):
            callers.setdefault(name[len(STUB_LOOP_PREFIX):], set()).update(e for e in by if e[0] == "groups")
    loops_of: dict[str, dict[str, int]] = {}
    for path, facts in source_facts.items():
        merged: dict[str, int] = {}
        for fact in facts:
            for key, size in fact["loops"].items():
                merged[key] = merged.get(key, 0) + size
        if merged:
            loops_of[path] = dict(sorted(merged.items()))
    return Layout(
        {g: sum(f["autograd"] for f in facts) for g, facts in sorted(unit_facts.items())},
        {g: sum(f["handles"] for f in facts) for g, facts in sorted(unit_facts.items())},
        dict(sorted(loops_of.items())),
        {stub: {"groups": sorted(n for k, n in by if k == "groups"), "sources": sorted(n for k, n in by if k == "sources")}
         for stub, by in sorted(callers.items())})


class _Memo:
    def __init__(self, path: Optional[str]):
        self.path = path
        self.entries: dict[str, dict] = {}
        self.used: dict[str, dict] = {}
        self.changed = False
        if path:
            try:
                with open(path, encoding="utf-8") as handle:
                    data = json.load(handle)
                if isinstance(data, dict) and data.get("version") == MEMO_VERSION and isinstance(data.get("objects"), dict):
                    self.entries = data["objects"]
            except (OSError, ValueError):
                pass

    def _entry(self, path: str) -> dict:
        stat = object_state(path)
        key = os.path.relpath(path, os.path.dirname(self.path)) if self.path else path
        entry = self.used.get(key)
        if entry is None:
            entry = self.entries.get(key)
            if not isinstance(entry, dict) or entry.get("stat") != stat:
                entry = {"stat": stat}
                self.changed = True
            self.used[key] = entry
        return entry

    def _read(self, path: str, entry: dict) -> Optional[ElfObject]:
        if "_obj" not in entry:
            entry["_obj"] = read_elf(path)
        return entry["_obj"]

    def source(self, path: str) -> dict:
        entry = self._entry(path)
        if "loops" not in entry:
            obj = self._read(path, entry)
            entry["loops"] = loops(obj) if obj else {}
            entry["stub_refs"] = stub_refs(obj) if obj else {}
            self.changed = True
        return entry

    def refs(self, path: str, wanted: list[str]) -> list[str]:
        entry = self._entry(path)
        digest = xxhash.xxh3_64_hexdigest("\n".join(wanted).encode())
        if entry.get("wanted") != digest:
            obj = self._read(path, entry)
            entry["refs"] = sorted(undefined(obj) & set(wanted)) if obj else []
            entry["wanted"] = digest
            self.changed = True
        return entry["refs"]

    def unit(self, path: str, wanted: list[str]) -> dict:
        entry = self._entry(path)
        if "autograd" not in entry:
            obj = self._read(path, entry)
            entry["autograd"], entry["handles"] = unit_parts(obj) if obj else (0, 0)
            self.changed = True
        self.refs(path, wanted)
        return entry

    def save(self) -> None:
        if not self.path or not (self.changed or set(self.used) != set(self.entries)):
            return
        objects = {key: {k: v for k, v in entry.items() if k != "_obj"} for key, entry in sorted(self.used.items())
                   if entry.get("stat") is not None}
        try:
            os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
            fd, temporary = tempfile.mkstemp(prefix=".layout-", dir=os.path.dirname(self.path) or ".")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"version": MEMO_VERSION, "objects": objects}, handle, separators=(",", ":"))
            os.replace(temporary, self.path)
        except OSError:
            pass  # a read-only build directory: the next build reads every object again
