"""The compiler flags of opgen's objects: one set per kind, the same in this repository's own
build and in a downstream project's.

- every object: C++17, -fPIC (also for static objects, so a precompiled header serves both),
  warnings, -fno-gnu-unique (g++ otherwise marks inline functions' statics STB_GNU_UNIQUE, and a
  library holding one can never be unloaded: dlclose would keep its registrations),
  OP_ASSERT_NO_TENSOR_METHODS (including api/tensor.h, every operator's methods, is a compile
  error, so no object depends on every operator by accident), and -ffile-prefix-map of the
  project's root (no object names the checkout, so ccache hits across checkouts; between $( $),
  so a moved checkout stays up to date), -ffunction-sections -fdata-sections (each function and
  object its own section, so the link's --gc-sections drops what nothing reaches: in a selective
  build, the kernels of groups it does not register that share a file with ones it does; link.py);
- generated group units: $OPGEN_GENERATED_CXXFLAGS (-O1: registrations, boxing trampolines and
  wrappers that call one kernel each; -O2 cost ~40% more per group for no measurable call overhead);
- hand-written kernels and runtime sources: $OPGEN_KERNEL_CXXFLAGS (-O2: their loops).
"""
from enum import Enum

COMMON_CXXFLAGS = ["-std=c++17", "-fPIC", "-Wall", "-fno-gnu-unique", "-ffunction-sections", "-fdata-sections"]
DEFAULTS = {"OPGEN_GENERATED_CXXFLAGS": ["-O1"], "OPGEN_KERNEL_CXXFLAGS": ["-O2"]}


class ObjectKind(Enum):
    GENERATED = "OPGEN_GENERATED_CXXFLAGS"
    KERNEL = "OPGEN_KERNEL_CXXFLAGS"


def common_flags(env):
    """Gives ``env`` (a clone the caller owns) the flags every opgen object has."""
    env.Append(CXXFLAGS=COMMON_CXXFLAGS, CPPDEFINES=["OP_ASSERT_NO_TENSOR_METHODS"],
               CCFLAGS=["$(", "-ffile-prefix-map=" + env.Dir("#").abspath + "=.", "$)"])
    env["SHCXXFLAGS"] = "$CXXFLAGS"  # -fPIC is in CXXFLAGS already


def for_kind(env, kind: ObjectKind):
    """A clone of ``env`` compiling objects of ``kind``."""
    clone = env.Clone()
    clone.Append(CXXFLAGS=[f"${kind.value}"])
    return clone
