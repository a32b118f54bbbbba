"""A group unit's command signature from the family template (opgen/scons/command_signatures.py)
is always the bytes SCons' own expansion gives: for commands that differ only by names, for
commands that depend on more of the target than its name (the template is dropped), and when a
name also appears elsewhere in the command (likewise). In-process SCons, no build."""
import SCons.Builder
import SCons.Environment
import SCons.Executor
import SCons.Node.FS
import pytest

from opgen.scons import patches
from opgen.scons.command_signatures import same_command


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(SCons.Node.FS, "default_fs", SCons.Node.FS.FS(str(tmp_path)))
    monkeypatch.setattr(patches, "templates", {})
    return SCons.Environment.Environment(tools=[], CC="cc", FLAGS="-O1 -DNAME=u2_unit",
                                         CMD="$CC -o $TARGET -c $FLAGS ${TARGET.attributes.flavor} $SOURCES")


def objects(env, count, flavor=lambda i: ""):
    # SCons.Builder.Builder: env.Builder would substitute $CMD at once, without a target.
    builder = SCons.Builder.Builder(action="$CMD", suffix=".o", src_suffix=".c", single_source=True)
    nodes = []
    for i in range(count):
        [node] = builder(env, f"obj/ops/u{i}_unit", f"gen/ops/u{i}_unit.c")
        node.attributes.flavor = flavor(i)
        nodes.append(node)
    return nodes


def scons_contents(nodes):
    """What SCons itself computes (the memo cleared, the unpatched method)."""
    result = []
    for node in nodes:
        executor = node.get_executor()
        executor._memo.pop("get_contents", None)
        result.append(bytes(patches.PATCHES["command_signature"].original(executor)))
        executor._memo.pop("get_contents", None)
    return result


def family_contents(nodes):
    same_command(nodes, "test family")
    return [bytes(node.get_executor().get_contents()) for node in nodes]


def test_commands_that_differ_by_names_come_from_the_template(env):
    nodes = objects(env, 8)
    expected = scons_contents(nodes)
    assert expected[3] == b"cc -o u3_unit.o -c -O1 -DNAME=u2_unit u3_unit.c"
    assert family_contents(nodes) == expected
    [template] = patches.templates.values()
    assert template.contents is not None and template.checked == patches.CHECKS
    # Past the checks, the contents are the template's (SCons' expansion is not asked).
    assert all(node.get_executor()._memo["get_contents"] == contents for node, contents in zip(nodes, expected))


def test_a_command_depending_on_more_than_names_drops_the_template(env):
    nodes = objects(env, 8, flavor=lambda i: "-DLATE" if i >= 2 else "")
    expected = scons_contents(nodes)
    assert family_contents(nodes) == expected
    [template] = patches.templates.values()
    assert template.contents is None


def test_a_name_inside_a_flag_drops_the_template(env):
    nodes = objects(env, 8)
    expected = scons_contents(nodes)
    # u2_unit is also in FLAGS: a template made from u2 would put every name there.
    reordered = [nodes[2]] + nodes[:2] + nodes[3:]
    assert family_contents(reordered) == [expected[2]] + expected[:2] + expected[3:]
    [template] = patches.templates.values()
    assert template.contents is None


def test_unmarked_objects_are_expanded_by_scons(env):
    nodes = objects(env, 3)
    expected = scons_contents(nodes)
    same_command(nodes[:1], "test family")
    assert [bytes(node.get_executor().get_contents()) for node in nodes] == expected
    assert SCons.Executor.Executor.get_contents is patches.PATCHES["command_signature"].replacement
