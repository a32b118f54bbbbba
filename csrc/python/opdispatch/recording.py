"""record_operators: the operators a program calls, as a selection for a selective build.

    with opdispatch.record_operators("ops.yaml") as recorded:
        loss = model(x); loss.backward()
    recorded.operators            # {"aten::addmm": True, "aten::mm": False, ...} in name order

While the block runs, every operator *called* through the dispatcher, from any thread, is
recorded (dispatch/operator_recorder.h): a root when the program called it (from Python or from
C++ outside every kernel), not a root when a kernel or the autograd engine did. On exit (on an
exception too, which then propagates) the file is written in torchgen's selection yaml, sorted by
name, only when its bytes change; `opgen select ops.yaml` closes it and `scons --ops=ops.yaml`
builds it. Also a decorator: each call of the function records and writes anew. One recording at
a time: a second one while one is active raises opdispatch.Error.

The writer is opgen.selection.dump's, byte for byte (a test holds them equal): the runtime is
installed without opgen, so it has its own copy.
"""
from __future__ import annotations

import contextlib
import os
import threading
from typing import Iterable, Optional, Union

from opdispatch import _C

__all__ = ["record_operators", "selection_yaml", "write_selection"]

HEADER = "# Operators selected for an opdispatch build (torchgen's selection yaml; `opgen select FILE` shows the closure).\n"
DEFAULT_NAMESPACE = "aten"


def selection_yaml(operators: Iterable[tuple[str, bool]], training: bool = True) -> str:
    """torchgen's selection yaml of (name, is_root) pairs: names as the dispatcher writes them
    (aten::add.Tensor, aten::mm, myops::scale; a name without namespace is aten's), one entry per
    name, a root when any pair of it is, sorted by name."""
    roots: dict[str, bool] = {}
    for name, is_root in operators:
        name = name if "::" in name else f"{DEFAULT_NAMESPACE}::{name}"
        roots[name] = roots.get(name, False) or bool(is_root)
    if not roots:
        return HEADER + "operators: {}\n"
    lines = [HEADER, "operators:\n"]
    for name in sorted(roots):
        lines.append(f"  {name}:\n"
                     f"    is_root_operator: {'true' if roots[name] else 'false'}\n"
                     f"    is_used_for_training: {'true' if training else 'false'}\n"
                     f"    include_all_overloads: false\n")
    return "".join(lines)


def _check_destination(path: str) -> None:
    """Raises (FileNotFoundError, IsADirectoryError) when ``path`` cannot be written: a missing
    directory is not created, a typo should not scatter files."""
    directory = os.path.dirname(path) or "."
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"record_operators: cannot write {path}: the directory {directory} does not exist")
    if os.path.isdir(path):
        raise IsADirectoryError(f"record_operators: cannot write {path}: it is a directory")


def write_selection(path: Union[str, os.PathLike], operators: Iterable[tuple[str, bool]], training: bool = True) -> bool:
    """Writes the selection of ``operators`` to ``path`` unless it already holds those bytes (its
    mtime then stays put); True when written. Atomic: readers see the old file or the new one.
    ``training``: False writes every entry ``is_used_for_training: false`` (no autograd layer for them)."""
    path = os.fspath(path)
    data = selection_yaml(operators, training).encode("utf-8")
    try:
        with open(path, "rb") as handle:
            if handle.read() == data:
                return False
    except (FileNotFoundError, IsADirectoryError):
        pass
    _check_destination(path)
    temp = os.path.join(os.path.dirname(path) or ".",
                        f".{os.path.basename(path)}.tmp-{os.getpid()}-{threading.get_ident()}")
    try:
        with open(temp, "xb") as handle:  # the umask's permissions, as a plain open gives
            handle.write(data)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise
    return True


class record_operators(contextlib.ContextDecorator):
    """Records the operators called while the block (or decorated function) runs and writes them
    to ``path`` as torchgen's selection yaml on exit. After exit, ``operators`` maps each recorded
    name to whether it was a root (name order) and ``written`` says whether the file changed.
    ``training=False``: an inference program; its entries say ``is_used_for_training: false``, so
    its selective build generates no autograd kernels for them."""

    def __init__(self, path: Union[str, os.PathLike], training: bool = True):
        self.path = os.fspath(path)
        self.training = training
        self.operators: dict[str, bool] = {}
        self.written: Optional[bool] = None
        self._destination: Optional[str] = None
        self._recorder = None

    def __enter__(self) -> "record_operators":
        destination = os.path.abspath(self.path)  # the block may change directory
        _check_destination(destination)  # before the program runs, not after
        recorder = _C._OperatorRecorder()  # opdispatch.Error while another recording is active
        self._recorder, self._destination = recorder, destination
        self.operators, self.written = {}, None
        return self

    def __exit__(self, exc_type, exc, traceback) -> bool:
        recorder, self._recorder = self._recorder, None
        recorded = recorder.stop()
        self.operators = dict(recorded)
        self.written = write_selection(self._destination, recorded, self.training)
        return False  # an exception of the block propagates, after the file is written

    def __repr__(self) -> str:
        state = "recording" if self._recorder is not None else f"{len(self.operators)} operators"
        return f"record_operators({self.path!r}, {state})"
