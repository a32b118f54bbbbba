"""The C++ runtime's layers (csrc/), written once: which directories each layer has, its include
rank, how the build compiles it and which headers an installed SDK ships.

A layer may include itself and the layers of a lower rank (tests/test_include_layers.py holds
that). csrc/SConscript compiles the library's layers always and the kernels' when the build has
the built-in kernels; selective builds (selection/sources.py) count the same sources as always
compiled; the SDK (scons/sdk.py) ships the headers named here. Generated code has layers too
(``ops``: the operator library's interface in build/gen), with no directory of csrc/.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Compiled(Enum):
    LIBRARY = "library"      # into libopdispatch.so, in every build
    KERNELS = "kernels"      # into libopdispatch.so when the build has the built-in kernels (--kernels)
    EXTENSION = "extension"  # into the Python extension
    APART = "apart"          # not compiled as the runtime: generated, header-only, or a program of its own


@dataclass(frozen=True)
class Layer:
    name: str
    rank: int
    directories: tuple[str, ...]   # under csrc/, whose *.cpp the build compiles as `compiled` says
    compiled: Compiled
    shipped_headers: tuple[str, ...]  # directories under csrc/ whose headers an SDK installs
    about: str


LAYERS = (
    Layer("core", 0, ("core",), Compiled.LIBRARY, ("core",),
          "tensors, storage, scalar types, dispatch key (set) values, host ops"),
    Layer("dispatch", 1, ("dispatch",), Compiled.LIBRARY, ("dispatch",),
          "the dispatcher: schemas, operator entries, kernels, registration"),
    Layer("ops", 2, (), Compiled.APART, (), "generated operator handles and kernel declarations (build/gen)"),
    Layer("native", 3, ("native", "native/cpu"), Compiled.KERNELS, ("native",),
          "hand-written kernels and their generated registrations (native/cuda: with nvcc)"),
    Layer("functionalization", 3, ("functionalization",), Compiled.LIBRARY, ("functionalization",),
          "the Functionalize key's runtime and its generated kernels"),
    Layer("autograd", 3, ("autograd",), Compiled.LIBRARY, ("autograd",),
          "the autograd engine; it calls operators (sum_to through ops/sum.h), so it sits above ops"),
    Layer("backends", 4, ("backends",), Compiled.APART, ("backends/support",),
          "external backends (csrc/backends/<name>/, build/gen/backends/<Key>/), each built on its own"),
    Layer("api", 5, ("api",), Compiled.APART, (), "op::Tensor with methods, for user programs only"),
    Layer("python", 5, ("python",), Compiled.EXTENSION, (), "the Python bindings"),
    Layer("tests", 6, ("tests",), Compiled.APART, (), "the C++ unit tests (build/bin/opdispatch_tests)"),
)
BY_NAME = {layer.name: layer for layer in LAYERS}


def ranks() -> dict[str, int]:
    """{layer: rank}: an include may point at its own layer or a lower rank."""
    return {layer.name: layer.rank for layer in LAYERS}


def directories(*kinds: Compiled) -> tuple[str, ...]:
    """The csrc/ directories compiled as any of ``kinds``, in table order."""
    return tuple(d for layer in LAYERS if layer.compiled in kinds for d in layer.directories)


def compiled_directories(builtin_kernels: bool) -> tuple[str, ...]:
    """What the library compiles of csrc/: its layers, and the kernels' when the build has them."""
    return directories(Compiled.LIBRARY, *((Compiled.KERNELS,) if builtin_kernels else ()))


def shipped_header_directories() -> tuple[str, ...]:
    return tuple(d for layer in LAYERS for d in layer.shipped_headers)
