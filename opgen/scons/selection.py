"""Selective builds in SCons: an operator selection file read, checked and closed (opgen/selection).

    selected = env.OpgenSelection("ops.yaml", model, config, sources=..., runtime_sources=...)
    codegen = env.OpgenCodegen(model, "build/gen", config=selected.config(config), groups=selected.generated,
                               listed=selected.groups)

loads the selection (torchgen's selection yaml or a plain list; a bad one stops the build with
its FILE:LINE errors and exit status 2), prints its warnings, closes it over the model (what
the groups' generated code calls, rendered for ``config``; what the hand-written ``sources``
implement and call) and says what it holds::

    [opgen] operator selection ops.yaml: 6 operators selected, 81/90 groups after closure

``OpgenOperatorLibrary(..., ops=FILE)`` calls it with its own kernels as the sources (library.py);
this repository's SConstruct calls it with csrc/ (``scons --ops=FILE``) and hands the result on
as ``ops=``. No opgen logic lives here.
"""
import dataclasses
import os
import sys
from dataclasses import dataclass
from typing import Mapping, Optional

from opgen.errors import OpgenError
from opgen.gen.engine.config import CodegenConfig
from opgen.gen.layers.python_table import LeftOut
from opgen.scons.model import display_path
from opgen.scons.stop import stop
from opgen.scons.toolset.messages import report, shown
from opgen.selection import Closure, GeneratedCallees, Selection, close_selection, index_sources, load_selection


@dataclass(frozen=True)
class OperatorSelection:
    """A selective build's selection and its closure, as a build uses them."""

    name: str                      # the selection file, as messages call it
    selection: Selection
    closure: Closure
    known_sources: frozenset[str]  # the hand-written sources the closure judged (compiled or not)

    @property
    def groups(self) -> tuple[str, ...]:
        """The operator groups the build generates, compiles and registers."""
        return self.closure.groups

    @property
    def generated(self) -> tuple[str, ...]:
        """The groups whose files the build generates: ``groups``, and those only declared (a
        compiled kernel source implements them too, so includes their headers; their units are
        not compiled)."""
        return self.closure.generated

    def config(self, config: CodegenConfig) -> CodegenConfig:
        """``config`` for this selection: the groups no entry uses for training get no autograd layer."""
        return dataclasses.replace(config, inference=frozenset(self.closure.inference))

    def compiles(self, path: str) -> bool:
        """Whether the hand-written source ``path`` is compiled: the closure's, or one it does not know."""
        return path in self.closure.sources or path not in self.known_sources

    def left_out(self) -> LeftOut:
        """What the Python operator table says of the operators the selection leaves out."""
        return LeftOut(self.name, frozenset(self.closure.operators))


def _selection(env, ops, model, config=None, sources: Optional[Mapping[str, str]] = None, runtime_sources=(),
               include_dirs=()):
    """The selection in ``ops`` (a file), closed over ``model`` for the codegen ``config`` and the
    hand-written ``sources`` (path -> text; headers are followed, not compiled), of which
    ``runtime_sources`` are always compiled. Stops the build (exit status 2) on a bad selection.
    A source including an ops/ header of no group of the model gets a warning, unless the header
    is in one of ``include_dirs`` (a downstream kernel calling the runtime's operators)."""
    node = env.File(ops)
    name = display_path(env, ops, node)
    try:
        selection = load_selection(node.srcnode().abspath, model, display_name=name)
    except OpgenError as exc:
        stop(exc, "invalid operator selection; nothing was built")
    for warning in selection.warnings:
        print(warning, file=sys.stderr)
    hand = index_sources(sources or {}, {g.name for g in model.operator_groups}, runtime_sources)
    closure = close_selection(selection, model, GeneratedCallees(model, config or CodegenConfig()), hand)
    for path, header in closure.unresolved:
        if any(os.path.isfile(os.path.join(directory, header)) for directory in include_dirs):
            continue
        print(f"{path}: warning: includes {header}, which no operator group of the yaml generates", file=sys.stderr)
    everything = " (include_all_operators)" if selection.include_all is not None else ""
    declared = f" (and {len(closure.declared)} declared only)" if closure.declared else ""
    inference = (f", {len(closure.inference)} without autograd" if closure.inference and config is not None
                 and config.generates_autograd else "")
    report(f"[opgen] operator selection {name}: {len(selection.keys)} operators selected{everything}, "
           f"{len(closure.groups)}/{len(model.operator_groups)} groups after closure{declared}{inference}")
    return OperatorSelection(name, selection, closure, frozenset(hand.sources))


def read_project_sources(env, nodes) -> dict[str, str]:
    """{path: text} of the hand-written ``nodes`` (paths from the project's top, as source_path
    gives them) and of the local headers they include, for OpgenSelection's ``sources``."""
    from opgen.selection.sources import read_sources

    top = env.Dir("#").abspath
    return read_sources(top, [os.path.relpath(node.srcnode().abspath, top) for node in nodes])


def source_path(env, node) -> str:
    """A hand-written source's path as selections know it: from the project's top, '/'-separated."""
    return os.path.relpath(node.srcnode().abspath, env.Dir("#").abspath).replace(os.sep, "/")


def _selected_yaml(env, target, yaml, model, selected: OperatorSelection):
    """``target``: the operator yaml ``yaml`` (``model``'s) with only the entries of the groups
    ``selected`` holds (opgen.selection.subset), e.g. for what a selective runtime installs."""
    from opgen.selection.subset import subset_yaml
    from opgen.writer import write_if_changed

    def write(target, source, env):
        with open(source[0].abspath, encoding="utf-8") as handle:
            write_if_changed(target[0].abspath, subset_yaml(handle.read(), model, selected.groups))
        return 0

    def describe(target, source, env):
        return shown(env, f"YAML {target[0]}", f"[opgen] the yaml of the operator selection {selected.name}: {target[0]}")

    return env.Command(target, [yaml, env.Value(",".join(selected.groups))], env.Action(write, strfunction=describe))


def register(env):
    env.AddMethod(_selection, "OpgenSelection")
    env.AddMethod(_selected_yaml, "OpgenSelectedYaml")
