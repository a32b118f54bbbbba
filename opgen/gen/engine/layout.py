"""File names of generated code: per group under ops/, umbrella headers at the top."""
from __future__ import annotations

from ...model.dispatch_keys import DispatchKey

OPS_DIR = "ops"
# Umbrella headers: sorted include lists, the only files naming every group.
FUNCTIONS_H = "Functions.h"
OPERATORS_H = "Operators.h"
NATIVE_FUNCTIONS_H = "NativeFunctions.h"
META_FUNCTIONS_H = "MetaFunctions.h"
TENSOR_METHODS_H = "TensorMethods.h"
METHOD_OPERATORS_H = "MethodOperators.h"
UMBRELLAS = (FUNCTIONS_H, META_FUNCTIONS_H, METHOD_OPERATORS_H, NATIVE_FUNCTIONS_H, OPERATORS_H, TENSOR_METHODS_H)


def api_header(group: str) -> str:
    return f"{OPS_DIR}/{group}.h"


def handles_header(group: str) -> str:
    return f"{OPS_DIR}/{group}_ops.h"


def native_header(group: str) -> str:
    return f"{OPS_DIR}/{group}_native.h"


def meta_header(group: str) -> str:
    return f"{OPS_DIR}/{group}_meta.h"


def methods_header(group: str) -> str:
    return f"{OPS_DIR}/{group}_methods.h"


def schema_source(group: str) -> str:
    return f"{OPS_DIR}/{group}_schema.cpp"


def key_source(group: str, key: DispatchKey) -> str:
    return f"{OPS_DIR}/{group}_{key.value}.cpp"


UNIT_SUFFIX = "_unit.cpp"


def unit_source(group: str) -> str:
    """The one translation unit of an in-tree group: it includes the group's schema and key
    sources, so the headers they share are parsed and their inline code compiled once per group."""
    return f"{OPS_DIR}/{group}{UNIT_SUFFIX}"


def compiled_sources(files: list[str]) -> list[str]:
    """The files of a group the build compiles: its unit where it has one, else every source."""
    units = [f for f in files if f.endswith(UNIT_SUFFIX)]
    return units or [f for f in files if f.endswith(".cpp")]


def folded_sources(files: list[str]) -> list[str]:
    """The sources of a group its unit includes: never compiled on their own, and the unit carries
    each one's digest, so the unit's bytes change whenever theirs do."""
    if not any(f.endswith(UNIT_SUFFIX) for f in files):
        return []
    return [f for f in files if f.endswith(".cpp") and not f.endswith(UNIT_SUFFIX)]


# External backends: one directory per backend key, apart from the in-tree files.
BACKENDS_DIR = "backends"


def backend_dir(backend: DispatchKey) -> str:
    return f"{BACKENDS_DIR}/{backend.value}"


def backend_native_header(backend: DispatchKey, group: str) -> str:
    return f"{backend_dir(backend)}/{OPS_DIR}/{group}_native.h"


def backend_key_source(backend: DispatchKey, group: str, key: DispatchKey) -> str:
    return f"{backend_dir(backend)}/{OPS_DIR}/{group}_{key.value}.cpp"


def backend_umbrella(backend: DispatchKey, class_name: str) -> str:
    return f"{backend_dir(backend)}/{class_name}.h"


# Backends with IR: node classes per group, the IR-only (non-native) nodes, their umbrella and
# the functions the backend writes for them.
def backend_ir_header(backend: DispatchKey, group: str) -> str:
    return f"{backend_dir(backend)}/{OPS_DIR}/{group}_ir.h"


def backend_non_native_ir(backend: DispatchKey) -> str:
    return f"{backend_dir(backend)}/{backend.value}NonNativeIr.h"


def backend_ir_functions(backend: DispatchKey) -> str:
    """What a backend that writes its own lowerings and shape functions must define, declared."""
    return f"{backend_dir(backend)}/{backend.value}IrFunctions.h"


def backend_ir_umbrella(backend: DispatchKey) -> str:
    return f"{backend_dir(backend)}/{backend.value}Ir.h"


def backend_key_source_group(path: str, keys: tuple[DispatchKey, ...]) -> str | None:
    """Inverse of ``backend_key_source`` for one of ``keys``: the group, from the source's path or
    its object's (``.../ops/add_AutogradXLA.os`` -> ``add``); None for other names."""
    stem = path.rpartition("/")[2].rpartition(".")[0]
    for key in keys:
        suffix = f"_{key.value}"
        if stem.endswith(suffix) and len(stem) > len(suffix):
            return stem[:-len(suffix)]
    return None
