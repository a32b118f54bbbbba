"""Where an installed runtime keeps what a downstream C++ build needs.

    opdispatch.get_include()       # PREFIX/include/opdispatch: core/, dispatch/, native/, ops/<op>.h
    opdispatch.get_library_dir()   # PREFIX/lib: libopdispatch.so

`scons install PREFIX=DIR` writes sdk.json beside this module with those directories relative
to the package, so an installed prefix can move. The package in an opgen checkout's build
tree (build/python) has no SDK and says how to get one.
"""
import json
import os

# realpath: the package may be reached through a link (a downstream project's build/python).
_SDK_FILE = os.path.join(os.path.dirname(os.path.realpath(__file__)), "sdk.json")


def _located(name: str) -> str:
    try:
        with open(_SDK_FILE, encoding="utf-8") as handle:
            relative = json.load(handle)[name]
    except FileNotFoundError:
        raise RuntimeError(f"this opdispatch ({os.path.dirname(_SDK_FILE)}) is a build tree, not an installed "
                           "runtime: run `scons install PREFIX=DIR` in the opgen checkout and use DIR's package") from None
    return os.path.normpath(os.path.join(os.path.dirname(_SDK_FILE), relative))


def get_include() -> str:
    """The include directory of the runtime's headers (method-free core, dispatcher,
    registration and the per-operator headers: `#include "ops/mul.h"`, `op::mul(a, b)`)."""
    return _located("include")


def get_library_dir() -> str:
    """The directory holding libopdispatch.so (link with -lopdispatch)."""
    return _located("lib")
