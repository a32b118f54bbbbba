"""One `--version` run per compiler and process.

SCons' gcc and g++ tools ask the compiler for its version in exists() and again in generate(),
for every environment that loads them: a run of `gcc/g++ --version` each, in every no-op
build. The compiler cannot change while SCons runs, so the answer is remembered
by the command and the PATH it is looked up on.
"""
import SCons.Tool.gcc

_detect_version = SCons.Tool.gcc.detect_version
_versions: dict = {}


def _remembered_version(env, cc):
    key = (env.subst(cc), str(env["ENV"].get("PATH", "")))
    if key not in _versions:
        _versions[key] = _detect_version(env, cc)
    return _versions[key]


def install():
    # gcc.py calls it by its module-global name, gxx.py as gcc.detect_version: both see this one.
    SCons.Tool.gcc.detect_version = _remembered_version
