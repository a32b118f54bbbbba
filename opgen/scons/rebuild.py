"""opgen's one rebuild policy: every object, archive and library its builders declare is judged
by the content of its dependencies.

A project's SConstruct may trust timestamps for the rest (``Decider("content-timestamp")`` makes
no-ops fast). opgen's targets cannot: a build rewrites generated sources and headers, and the
objects that include them (generated units, hand-written kernels, backend kernels, a downstream
project's kernels) must recompile even when the rewrite falls within the second of the build
before. SCons' timestamp shortcut copies a stored signature into a dependency rebuilt in the same
run (SCons issue 2980), and such a target would stay stale. Judging by content costs a no-op
little: with max_drift, SCons reuses the stored signature of a file whose timestamp is old and
unchanged instead of hashing it.
"""


def judged_by_content(env):
    """A clone of ``env`` whose targets rebuild when a dependency's content changed."""
    clone = env.Clone()
    clone.Decider("content")
    return clone
