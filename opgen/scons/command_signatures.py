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
import SCons.Executor

_MARK = "opgen_command_family"
_CHECKS = 2  # objects whose template contents are compared with SCons' expansion before it is trusted
_TARGET = b"\x00opgen:target\x00"
_SOURCE = b"\x00opgen:source\x00"
_get_contents = SCons.Executor.Executor.get_contents


class _Template:
    __slots__ = ("env", "actions", "contents", "checked")

    def __init__(self, env, actions, contents):
        self.env = env          # held, so its id cannot be reused by another environment
        self.actions = actions
        self.contents = contents  # None: not a template (SCons expands every object)
        self.checked = 0


_templates: dict = {}


def _stem(node) -> bytes:
    name = node.name
    suffix = node.suffix
    return (name[: -len(suffix)] if suffix and name.endswith(suffix) else name).encode("utf-8")


def _cut(contents: bytes, target_stem: bytes, source_stem: bytes):
    if target_stem == source_stem:
        return contents.replace(target_stem, _TARGET)
    if target_stem in source_stem or source_stem in target_stem:
        return None  # which occurrence is which cannot be told
    return contents.replace(target_stem, _TARGET).replace(source_stem, _SOURCE)


def _contents(self):
    memo = self._memo
    if "get_contents" in memo:
        return memo["get_contents"]
    targets, sources = self.get_all_targets(), self.get_all_sources()
    if len(targets) != 1 or len(sources) != 1:
        return _get_contents(self)
    target, source = targets[0], sources[0]
    family = getattr(target.attributes, _MARK, None)
    if family is None:
        return _get_contents(self)
    env = self.get_build_env()
    actions = self.get_action_list()
    target_stem, source_stem = _stem(target), _stem(source)
    key = (family, id(env), tuple(map(id, actions)), target.dir, source.dir, target.suffix, source.suffix,
           target_stem == source_stem)
    template = _templates.get(key)
    if template is None:
        contents = bytes(_get_contents(self))
        _templates[key] = _Template(env, actions, _cut(contents, target_stem, source_stem))
        return contents
    if template.env is not env or template.contents is None or len(template.actions) != len(actions) \
            or not all(a is b for a, b in zip(template.actions, actions)):
        return _get_contents(self)
    derived = template.contents.replace(_TARGET, target_stem).replace(_SOURCE, source_stem)
    if template.checked < _CHECKS:
        contents = bytes(_get_contents(self))
        if contents != derived:
            template.contents = None
        else:
            template.checked += 1
        return contents
    memo["get_contents"] = derived
    return derived


def same_command(objects, family: str) -> None:
    """Mark ``objects`` (nodes): their compile commands differ only by their names (see above)."""
    if SCons.Executor.Executor.get_contents is not _contents:
        SCons.Executor.Executor.get_contents = _contents
    for node in objects:
        setattr(node.attributes, _MARK, family)
