"""opgen's builder of Python extensions over an operator library (pybind11).

    env.OpgenPythonExtension("build/python/mypkg/_C", sources, libs=["myops"], rpaths=["$ORIGIN/../../lib"])

compiles ``sources`` with Python's and pybind11's headers (as system headers: their warnings are
not ours) and hidden visibility (pybind11's advice: only the module's init function is
exported), and links a module named with the interpreter's extension suffix, relinked when a
library of ``libs`` this build makes changes its exported symbols (link_interface.py). Returns [] and says
so once when pybind11 is not installed; ``python_extensions_available()`` tells beforehand.
"""
import importlib.util
import sysconfig

from opgen.scons.link_interface import built_library, link_by_interface
from opgen.scons.rebuild import judged_by_policy
from opgen.scons.toolset.messages import notice


def python_extensions_available() -> bool:
    return importlib.util.find_spec("pybind11") is not None


def python_extension_env(env):
    """A clone of ``env`` that compiles and links Python extensions; None without pybind11."""
    try:
        import pybind11
    except ImportError:
        notice("[opgen] pybind11 is not installed (pip install pybind11): no Python extension is built")
        return None
    ext_env = judged_by_policy(env)
    for include in (sysconfig.get_paths()["include"], pybind11.get_include()):
        ext_env.Append(CCFLAGS=["-isystem", include])
    ext_env.Append(CXXFLAGS=["-fvisibility=hidden"])
    ext_env.Replace(LDMODULEPREFIX="", LDMODULESUFFIX=sysconfig.get_config_var("EXT_SUFFIX"))
    return ext_env


def _python_extension(env, target, sources, libs=(), libpath=(), rpaths=()):
    ext_env = python_extension_env(env)
    if ext_env is None:
        return []
    ext_env.Prepend(LIBS=list(libs))
    ext_env.Append(LIBPATH=list(libpath),
                   LINKFLAGS=[f"-Wl,-rpath,'{rpath.replace('$ORIGIN', '$$ORIGIN')}'" for rpath in rpaths])
    module = ext_env.LoadableModule(target, sources)
    # A library this build makes: relinked against when its exported symbols change (link_interface.py).
    for name in libs:
        library = built_library(ext_env, name, libpath)
        if library is not None:
            link_by_interface(ext_env, module, library)
    return module


def register(env):
    env.AddMethod(_python_extension, "OpgenPythonExtension")
