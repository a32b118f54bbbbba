"""SCons tool: find a CBLAS (the scipy-openblas32 wheel, else the system's OpenBLAS) for the
objects that call it.

Construction variables:
  BLAS_MODE           "auto" (default: use a BLAS when one is found), "on" (required: stop the
                      build with exit status 2 without one) or "off".
  BLAS                set by this tool: what was found, for a build's notice line
                      ("scipy-openblas32 0.3.x (/path/lib)"), or "" when no BLAS is used.
  BLAS_INCLUDE_DIR    set by this tool: the directory holding cblas.h.
  BLAS_LIB_DIR        set by this tool: the directory holding the shared library.
  BLAS_LIB            set by this tool: the library's link name (scipy_openblas, openblas).
  BLAS_SYMBOL_PREFIX  set by this tool: the prefix of the library's symbols ("scipy_" for the
                      wheel: scipy_cblas_sgemm; "" for the system's cblas_sgemm), given to the
                      compile as the macro BLAS_SYMBOL_PREFIX (the wheel's pkg-config does too).

``env.BlasActive()`` tells whether a BLAS is used. ``env.BlasCompile(other)`` gives the
environment ``other`` (a clone the caller owns) the header directory and the prefix macro:
only the objects that include cblas.h need them, so every other object keeps its flags (and its
ccache entries). ``env.BlasLink(other)`` gives it the library, with an rpath to its directory so
what links it finds it wherever it is installed.

The wheel is found without importing it (its module loads the library through ctypes): its
files lie in the package directory, its version in its pkg-config file.
"""
import importlib.util
import os

from opgen.scons.toolset.messages import fail
from opgen.scons.toolset.programs import MODES, mode_of

WHEEL_PACKAGE = "scipy_openblas32"
WHEEL_NAME = "scipy-openblas32"
WHEEL_LIB = "scipy_openblas"
SYSTEM_INCLUDE_DIRS = ("/usr/include", "/usr/include/openblas", "/usr/include/x86_64-linux-gnu",
                       "/usr/include/aarch64-linux-gnu", "/usr/local/include")
SYSTEM_LIB_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
                   "/usr/local/lib")


def _wheel_version(package_dir):
    try:
        with open(os.path.join(package_dir, "lib", "pkgconfig", "scipy-openblas.pc"), encoding="utf-8") as pc:
            for line in pc:
                if line.startswith("version="):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return "?"


def _find_wheel():
    """(description, include dir, lib dir, link name, symbol prefix) of the wheel, or None."""
    try:
        spec = importlib.util.find_spec(WHEEL_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    package_dir = list(spec.submodule_search_locations)[0]
    include_dir, lib_dir = os.path.join(package_dir, "include"), os.path.join(package_dir, "lib")
    if not (os.path.isfile(os.path.join(include_dir, "cblas.h"))
            and os.path.isfile(os.path.join(lib_dir, f"lib{WHEEL_LIB}.so"))):
        return None
    return (f"{WHEEL_NAME} {_wheel_version(package_dir)} ({lib_dir})", include_dir, lib_dir, WHEEL_LIB, "scipy_")


def _find_system():
    """The system's OpenBLAS (cblas.h and libopenblas.so), or None."""
    include_dir = next((d for d in SYSTEM_INCLUDE_DIRS if os.path.isfile(os.path.join(d, "cblas.h"))), None)
    lib_dir = next((d for d in SYSTEM_LIB_DIRS if os.path.isfile(os.path.join(d, "libopenblas.so"))), None)
    if include_dir is None or lib_dir is None:
        return None
    return (f"OpenBLAS ({lib_dir})", include_dir, lib_dir, "openblas", "")


def find_blas():
    """(description, include dir, lib dir, link name, symbol prefix) of the BLAS that
    ``--blas=auto`` uses: the wheel, else the system's OpenBLAS; None when there is none."""
    return _find_wheel() or _find_system()


def _active(env):
    return bool(env.get("BLAS"))


def _compile(env, other):
    if _active(env):
        other.Append(CCFLAGS=["-isystem", env["BLAS_INCLUDE_DIR"]])
        if env["BLAS_SYMBOL_PREFIX"]:
            other.Append(CPPDEFINES=[("BLAS_SYMBOL_PREFIX", env["BLAS_SYMBOL_PREFIX"])])
    return other


def _link(env, other):
    if _active(env):
        other.Append(LIBS=[env["BLAS_LIB"]], LIBPATH=[env["BLAS_LIB_DIR"]], RPATH=[env["BLAS_LIB_DIR"]])
    return other


def exists(env):
    return True


def generate(env):
    env.SetDefault(BLAS_MODE="auto")
    mode = mode_of(env, "BLAS_MODE")
    if mode not in MODES:
        fail(f"--blas={mode} is not one of {', '.join(MODES)}")
    found = None if mode == "off" else find_blas()
    if found is None and mode == "on":
        fail(f"--blas=on but no BLAS was found (pip install {WHEEL_NAME}, or install the system's OpenBLAS)")
    env["BLAS"], env["BLAS_INCLUDE_DIR"], env["BLAS_LIB_DIR"], env["BLAS_LIB"], env["BLAS_SYMBOL_PREFIX"] = \
        found or ("", "", "", "", "")
    env.AddMethod(_active, "BlasActive")
    env.AddMethod(_compile, "BlasCompile")
    env.AddMethod(_link, "BlasLink")
