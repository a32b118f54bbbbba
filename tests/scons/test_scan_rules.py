"""What a group unit's object depends on (opgen/scons/scan_rules.py), in real builds of a copy of
the session's built project: the sources a unit includes are no build nodes (the unit names their
digests), and the runtime headers under a root header are one stamp per root. Each rule is
checked for what it must keep: an edit recompiles exactly the objects that include what changed,
and a vanished file is generated again.
"""
import os
import re

import pytest

from helpers import copy_built, snapshot
from scons_helpers import GEN, GROUPS, ok, rewrite_in_a_later_second, scons

from opgen.gen.engine.layout import folded_sources
from opgen.scons.library import GENERATED_CODE_HEADERS

UNIT_OBJECTS = re.compile(r"^build/obj/gen/ops/(\w+)_unit\.os$")
CLOSURES = "build/obj/gen/header_closures"


@pytest.fixture(scope="module")
def project(built_project, tmp_path_factory):
    return copy_built(built_project.root, tmp_path_factory.mktemp("scan-rules") / "project")


@pytest.fixture
def edited(project, tmp_path):
    """A copy of the module's project for a test that edits it (SCons finds the copy up to date):
    no edit has to be put back and rebuilt after it, a full recompile when it is a root's header."""
    return copy_built(project, tmp_path / "project")


def units(build) -> set:
    return {m.group(1) for m in map(UNIT_OBJECTS.match, build.compiled) if m}


def includers(project, header) -> set:
    """Groups one of whose unit's included sources includes ``header`` directly."""
    ops = project / GEN
    found = set()
    for name in os.listdir(ops / "ops"):
        if name.endswith("_unit.cpp"):
            sources = re.findall(r'^#include "(ops/\w+\.cpp)"', (ops / "ops" / name).read_text(), re.M)
            if any(f'#include "{header}"' in (ops / source).read_text() for source in sources):
                found.add(name[:-len("_unit.cpp")])
    return found


def covered_headers(project, root) -> set:
    """The headers ``root``'s stamp lists (paths from the include directory, with signatures)."""
    return {line.split()[0] for line in (project / CLOSURES / f"{root}.closure").read_text().splitlines()}


def dependencies(project, target) -> list:
    """The children of ``target`` SCons walks (--tree=prune: each once, with its own children)."""
    build = ok(scons(project, "--tree=prune", target=target))
    return re.findall(r"^  \+-(\S+)$", build.result.stdout, re.M)


def test_the_cold_build_stored_what_its_copy_needs_to_be_up_to_date(project):
    """The folds change an object's dependencies after SCons scanned them; what the cold build
    stored for each object must still make the next build a no-op."""
    build = ok(scons(project))
    assert build.regenerated == (0, GROUPS)
    assert build.compiled == set() and not build.linked


def test_the_next_build_forgets_what_the_cold_build_stored_for_the_included_sources(project):
    """The cold build declared every included source (none existed); the next build drops their
    .sconsign entries, which every later build would read again."""
    import pickle

    import SCons.dblite

    ok(scons(project))
    stored = pickle.loads(SCons.dblite.open(str(project / ".sconsign"), "r")[os.path.join(GEN, "ops")])
    files = [f"ops/{name}" for name in os.listdir(project / GEN / "ops")]
    assert "ops/add_unit.cpp" in files
    folded = {path[len("ops/"):] for path in folded_sources(files)}
    assert "add_CPU.cpp" in folded and "add_unit.cpp" in stored and "add.h" in stored
    assert not folded & set(stored)


def test_a_units_included_sources_are_no_dependencies_but_their_headers_are(project):
    files = sorted(p[len("ops/"):] for p in snapshot(project / GEN) if p.startswith("ops/add"))
    folded = folded_sources([f"ops/{name}" for name in files])
    assert "ops/add_CPU.cpp" in folded and "ops/add_schema.cpp" in folded
    children = dependencies(project, "build/obj/gen/ops/add_unit.os")
    assert "build/gen/ops/add_unit.cpp" in children
    assert not {f"build/gen/{path}" for path in folded} & set(children), children
    # Headers the included sources include stay: add's native and meta headers, and the stamps.
    assert {"build/gen/ops/add_native.h", "build/gen/ops/add_meta.h"} <= set(children)
    assert {f"{CLOSURES}/{root}.closure" for root in GENERATED_CODE_HEADERS} <= set(children)
    # No dependency of the unit is a header under a root: the stamps stand for them.
    covered = {f"csrc/{path}" for path in covered_headers(project, "dispatch/registration.h")}
    assert "csrc/core/tensor.h" in covered and "csrc/dispatch/registration.h" in covered
    assert not covered & set(children)


def test_a_vanished_included_source_is_generated_again_without_a_recompile(project):
    path = project / GEN / "ops" / "add_CPU.cpp"
    text = path.read_text()
    path.unlink()
    build = ok(scons(project))
    assert build.regenerated_names == ["add"]
    assert path.read_text() == text
    assert build.compiled == set() and not build.linked


def test_an_included_sources_edit_recompiles_its_unit(edited):
    # A derivatives formula lives in the Autograd source only; the unit names that source's digest.
    derivatives = edited / "yaml/derivatives.yaml"
    text = derivatives.read_text()
    assert text.count("self: grad * self.cos()") == 1
    before = snapshot(edited / GEN)
    rewrite_in_a_later_second(derivatives, text.replace("self: grad * self.cos()", "self: self.cos() * grad"))
    build = ok(scons(edited))
    after = snapshot(edited / GEN)
    assert {p for p in set(before) | set(after) if before.get(p) != after.get(p)} == {"ops/sin_Autograd.cpp", "ops/sin_unit.cpp"}
    assert units(build) == {"sin"} and build.linked


def test_a_header_under_a_root_recompiles_every_unit_including_the_root(edited):
    header = edited / "csrc/core/layout.h"
    rewrite_in_a_later_second(header, header.read_text() + "// an edit\n")
    build = ok(scons(edited))
    assert units(build) == includers(edited, "dispatch/registration.h")
    assert len(units(build)) == GROUPS
    assert f"{CLOSURES}/dispatch/registration.h.closure" in build.result.stdout


def test_a_header_outside_the_roots_recompiles_only_its_includers(edited):
    header = edited / "csrc/dispatch/backend_select.h"
    rewrite_in_a_later_second(header, header.read_text() + "// an edit\n")
    build = ok(scons(edited))
    expected = includers(edited, "dispatch/backend_select.h")
    assert 0 < len(expected) < GROUPS
    assert units(build) == expected


def test_a_header_newly_included_under_a_root_is_followed(edited):
    """A header under a root starts including another: the stamp's scan finds it, and an edit of
    the newcomer then recompiles every unit including the root."""
    newcomer = "core/dim_vector.h"
    assert newcomer not in covered_headers(edited, "dispatch/registration.h")
    layout = edited / "csrc/core/layout.h"
    rewrite_in_a_later_second(layout, layout.read_text() + f'#include "{newcomer}"\n')
    first = ok(scons(edited))
    assert len(units(first)) == GROUPS
    assert newcomer in covered_headers(edited, "dispatch/registration.h")
    added = edited / f"csrc/{newcomer}"
    rewrite_in_a_later_second(added, added.read_text() + "// an edit\n")
    second = ok(scons(edited))
    assert units(second) == includers(edited, "dispatch/registration.h")
    assert len(units(second)) == GROUPS


def test_a_stamp_written_in_another_checkout_has_the_same_bytes(project, built_project):
    """Paths in a stamp are from the include directory, not the checkout: the copy's stamp,
    written again, equals the session build's, and no unit recompiles."""
    for root in GENERATED_CODE_HEADERS:
        (project / CLOSURES / f"{root}.closure").unlink()
    build = ok(scons(project))
    assert units(build) == set() and not build.linked
    for root in GENERATED_CODE_HEADERS:
        ours = (project / CLOSURES / f"{root}.closure").read_bytes()
        assert ours == (built_project.root / CLOSURES / f"{root}.closure").read_bytes()
        assert not [line for line in ours.decode().splitlines() if line.startswith(("/", "..", "csrc/"))]
