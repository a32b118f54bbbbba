"""An executor describes itself and finds its side effects once, not once per target.

``Node.get_binfo`` stores ``str(executor)`` (the action's unexpanded command, for
--debug=explain and the .sconsign) for every target, and SCons computes it anew each time: once
per file of a codegen step, for every target of a no-op. Here it is kept in the
executor's memo, beside the command signature SCons already keeps there (``get_contents``), and
forgotten with it (``cleanup``, ``nullify``).

The taskmaster asks every executor for the side effects of its action's targets; SCons builds
the $TARGETS substitution variables (eight lazy lists) to iterate them through substitution
proxies. When the action's targets are $TARGETS (every action but a batch builder's), they are
the executor's targets: their side effects are read from them directly.
"""
import SCons.Executor
import SCons.Util

_Executor = SCons.Executor.Executor
_str = _Executor.__str__
_side_effects = _Executor.get_action_side_effects
_STR = "opgen_str"


def _str_once(self) -> str:
    memo = self._memo
    try:
        return memo[_STR]
    except KeyError:
        text = memo[_STR] = _str(self)
        return text


def _action_side_effects(self):
    if self.action_list and self.action_list[0].get_targets(self.env, self) in ("$TARGETS", "TARGETS"):
        result = SCons.Util.UniqueList([])
        for target in self.get_all_targets():
            result.extend(target.side_effects)
        return result
    return _side_effects(self)


def install():
    _Executor.__str__ = _str_once
    _Executor.get_action_side_effects = _action_side_effects
