"""The compile command's signature of a group's object, expanded once per environment rather than
once per object.

SCons signs a command by expanding it for its target and source (``Executor.get_contents``:
every $VARIABLE substituted, in signature mode), and does so for every object in every run to
find it up to date: per object, so a large share of a no-op over many group units, whose
commands differ in nothing but the object's and the unit's names (docs/benchmarks.md).

``same_command(objects, family)`` marks objects built by one builder call each, from one
environment, whose commands differ only by their target's and source's names. For such an
object whose executor has one target and one source, the first expansion in a family (with the
same environment, actions, directories and suffixes) is kept as a template with the names cut
out; the next objects' contents are the template with their names put in. The template is
checked against SCons' own expansion for the next two objects, and dropped (every object of the
family is expanded by SCons again) on any difference: the signature is always the bytes SCons
computes, so no object rebuilds because of it.
"""
from opgen.scons import patches


def same_command(objects, family: str) -> None:
    """Mark ``objects`` (nodes): their compile commands differ only by their names (see above).
    The template is applied by a patch of SCons' ``Executor.get_contents`` (patches.py:
    ``command_signature``); where it is left off, SCons expands every command."""
    patches.install("command_signature")
    for node in objects:
        setattr(node.attributes, patches.COMMAND_FAMILY, family)
