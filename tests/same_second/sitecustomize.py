"""Test-only: with $OPGEN_TEST_SAME_SECOND set, a generated file (a .h/.cpp under a gen/ directory)
that a build rewrites gets an mtime late in the whole second of its previous write, as when a
build rewrites it within the second of the build before (SCons keeps whole-second timestamps).
tests/scons/test_same_second_rewrites.py runs builds with this directory on PYTHONPATH, so the
timing that made tests/scons/test_lazy_backend_build.py flaky happens on every rewrite."""
import os

if os.environ.get("OPGEN_TEST_SAME_SECOND"):
    _replace = os.replace

    def _replace_in_the_same_second(src, dst, *args, **kwargs):
        path = os.fspath(dst)
        generated = f"{os.sep}gen{os.sep}" in path and path.endswith((".h", ".cpp"))
        previous = os.stat(path).st_mtime if generated and os.path.exists(path) else None
        _replace(src, dst, *args, **kwargs)
        if previous is not None:
            late = int(previous) + 0.95  # still the previous write's second, by whole seconds
            os.utime(path, (late, late))

    # A staticmethod (callable since Python 3.10): SCons 4.5's dblite keeps os.replace as a class
    # attribute, where a plain function would be bound as a method.
    os.replace = staticmethod(_replace_in_the_same_second)
