"""opgen's one rebuild policy: the one place that decides when a target of an opgen build is out
of date. ``apply_rebuild_policy(env)`` (the plugin's tools apply it to the environment they load
into; every environment the builders clone keeps it) makes ``env``'s decider ``decide``:

* a dependency that is itself built (a generated header or source, an object, an archive) is
  compared by its content signature: the one SCons computed from its bytes when it was
  built, in this run or an earlier one;
* a source file (hand-written, never built) keeps SCons' content-timestamp shortcut: while
  its timestamp is the one the target recorded, its content is not read (no-op speed);

and, once per process, makes a file built in this run take its content signature from its
bytes (a patch of SCons' ``File.get_max_drift_csig``: patches.py, ``max_drift_csig``; left off,
with a notice, on an SCons outside the tested range). So a kernel that includes a generated header (a generated group unit, a hand-written
kernel of the runtime, a backend's or a downstream project's kernel) recompiles whenever the
header's bytes changed, whatever decider the rest of the project uses.

Why (both are stale objects, seen in tests/scons/test_lazy_backend_build.py and
tests/scons/test_same_second_rewrites.py): SCons keeps file timestamps in whole seconds
(``st[ST_MTIME]``, SCons/Node/FS.py ``Base.getmtime``), and a build can rewrite a generated
file within the second of the build before it.

1. ``File.get_max_drift_csig`` (SCons/Node/FS.py:3222) returns the signature stored by the
   previous build when the stored timestamp equals the file's and the file is older than
   ``max_drift`` (SConstruct sets 1 s). The file's age is measured from its truncated
   timestamp, so a header rewritten at 41.95 in the second of the previous write (41.10),
   whose ``built()`` runs at 42.05 (``Node.built`` -> ``ninfo.update`` -> ``get_csig``),
   gets the previous bytes' signature: every includer, ``Decider("content")`` or not, then
   finds it unchanged, and the stale signature is stored for the next build to trust too.
2. ``File.changed_timestamp_then_content`` (SCons/Node/FS.py:3472, the content-timestamp
   decider) takes a dependency whose timestamp equals the one the target recorded as
   unchanged, and copies the target's recorded signature into the dependency's node info
   (line 3529, SCons issue 2980): a same-second rewrite is missed by that target, and by any
   later ``Decider("content")`` target, which reads the copied signature.
"""
from opgen.scons import patches


def decide(dependency, target, prev_ni, repo_node=None) -> bool:
    """True when ``dependency`` changed since ``target`` was built (prev_ni: what it recorded)."""
    if dependency.has_builder():
        return dependency.changed_content(target, prev_ni, repo_node)
    return dependency.changed_timestamp_then_content(target, prev_ni, repo_node)


def apply_rebuild_policy(env) -> None:
    patches.install("max_drift_csig")
    env.Decider(decide)


def judged_by_policy(env):
    """A clone of ``env`` under the rebuild policy (what opgen's builders compile and link with)."""
    clone = env.Clone()
    apply_rebuild_policy(clone)
    return clone
