"""`scons --ops=FILE` (issue 31): a library of only the operators a selection needs.

One cold selective build of an MLP's operators (a copy of the project, ccache shared) is read by
most tests: it compiles exactly the closure's group units and hand-written sources, links and
loads, runs the MLP, and raises opdispatch.Error naming the operator and the file for one left out.
Copies of it count what selection edits compile (one operator added: its group's unit and its
kernel file, one link; removed: a relink only). A copy of the session's full build switches to
the selection and back without compiling anything (a selected group's files are the full build's,
byte for byte) and without leaving unselected groups' files in build/gen; and the object sizes
every link records feed `opgen select --report`. And the issue's program end to end: an MLP's
forward and backward recorded on a copy of the full build (record_operators), that copy built
with the recording as its selection, the same program run on both, equal to the bit."""
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

from helpers import PROJECT_INPUTS, REPO_ROOT, copy_built, copy_project, snapshot
from scons_helpers import GEN, GROUPS, LIBRARY, ok, scons

from opgen.gen.engine.config import AUTOGRAD_KEYS, DEFAULT_KEYS, CodegenConfig
from opgen.model import load_model
from opgen.selection import GeneratedCallees, close_selection, index_sources, read_csrc
from opgen.selection.load import parse_selection
from opgen.selection.sources import in_library

# An MLP's forward and backward (addmm, relu, mse_loss, sum) and the operators its program names.
MLP = "aten::addmm\naten::relu\naten::mm\naten::t\naten::mse_loss\naten::sum\n"
SELECTION = "ops.txt"
UNIT = os.path.join("build", "obj", "gen", "ops", "{}_unit.os")
# The MLP of test_py_record_operators.py as a program (its data and weights), run against a project's build.
MLP_PROGRAM = os.path.join(REPO_ROOT, "tests", "runtime", "mlp_program.py")
MLP_ROOTS = {"aten::addmm", "aten::relu", "aten::log_softmax.int", "aten::nll_loss"}


class Closer:
    """The closure of a selection (a list, or torchgen's yaml) over our yaml, for the configuration
    the tests build (CPU, autograd; PROJECT_BUILD turns CUDA off), as the build computes it."""

    def __init__(self, backends=()):
        from opgen.gen.layers.autograd_kernels import AutogradModel
        from opgen.model.derivatives import load_derivatives

        yaml_dir = os.path.join(REPO_ROOT, "yaml")
        self.model = load_model(os.path.join(yaml_dir, "native_functions.yaml"), os.path.join(yaml_dir, "tags.yaml"))
        derivatives = load_derivatives(os.path.join(yaml_dir, "derivatives.yaml"), self.model)
        config = CodegenConfig(DEFAULT_KEYS + AUTOGRAD_KEYS, autograd=AutogradModel(self.model, derivatives))
        self.callees = GeneratedCallees(self.model, config)
        sources, runtime = read_csrc(os.path.join(REPO_ROOT, "csrc"), backends=backends)
        self.hand = index_sources(sources, {g.name for g in self.model.operator_groups}, runtime)

    def __call__(self, text, name=SELECTION):
        selection = parse_selection(text.encode(), name, self.model)
        return close_selection(selection, self.model, self.callees, self.hand)


def objects_of(closure):
    """The objects a cold build of ``closure`` compiles into the library: group units, hand-written sources."""
    units = {UNIT.format(group) for group in closure.groups}
    sources = {os.path.join("build", "obj", os.path.splitext(path[len("csrc/"):])[0] + ".os")
               for path in closure.sources if in_library(path)}
    return units, sources


def library_objects(build):
    """(group units, other library objects) a build compiled; the Python extension's unit aside."""
    units = {path for path in build.compiled if path.startswith(os.path.join("build", "obj", "gen", "ops", ""))}
    others = build.compiled - units - {os.path.join("build", "obj", "python", "_C_unit.os")}
    return units, others


def run_python(root, body):
    """``body`` with opdispatch (the project's build/python) imported as od; its last line as JSON."""
    script = "import json\nimport opdispatch as od\n" + textwrap.dedent(body)
    result = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": os.path.join(str(root), "build", "python")})
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def run_mlp(root, *args):
    """mlp_program.py ``args`` in ``root`` against its build/python: the JSON it prints."""
    result = subprocess.run([sys.executable, MLP_PROGRAM, *args], cwd=root, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": os.path.join(str(root), "build", "python")})
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def built_objects(root):
    """Every object under ``root``/build/obj, relative to root."""
    return {os.path.relpath(os.path.join(directory, name), root)
            for directory, _, names in os.walk(os.path.join(root, "build", "obj"))
            for name in names if name.endswith(".os")}


@pytest.fixture(scope="module")
def closer():
    return Closer()


@pytest.fixture(scope="module")
def selective(tmp_path_factory):
    """A cold selective build of MLP (a fresh copy: ccache serves what it has seen). Read it,
    never edit it: tests that edit take a copy (copy_built)."""
    root = copy_project(tmp_path_factory.mktemp("selective") / "project", PROJECT_INPUTS)
    (root / SELECTION).write_text(MLP)
    build = ok(scons(root, f"--ops={SELECTION}", target=None))
    return root, build


def test_a_cold_selective_build_compiles_the_closure_and_nothing_else(selective, closer):
    root, build = selective
    closure = closer(MLP)
    assert len(closure.groups) < GROUPS
    units, sources = objects_of(closure)
    assert library_objects(build) == (units, sources)
    assert build.linked
    assert (f"[opgen] operator selection {SELECTION}: 6 operators selected, "
            f"{len(closure.groups)}/{GROUPS} groups after closure") in build.output
    # Generated: the closure's groups, and those a compiled kernel file only declares (their headers).
    generated = {name[:-len("_unit.cpp")] for name in os.listdir(root / GEN / "ops") if name.endswith("_unit.cpp")}
    assert generated == set(closure.generated)
    # The umbrella headers list the selected groups only.
    functions_h = (root / GEN / "Functions.h").read_text()
    assert '#include "ops/addmm.h"' in functions_h and '#include "ops/matmul.h"' not in functions_h
    # The unit tests test every kernel: not built.
    assert not (root / "build" / "bin" / "opdispatch_tests").exists()


def test_the_selected_operators_run_and_a_left_out_one_raises_naming_it_and_the_file(selective):
    root, _ = selective
    results = run_python(root, """
        x = od.tensor([[1., -2.], [3., 4.]])
        w = od.tensor([[0.5, -1.], [1., 2.]], requires_grad=True)
        b = od.tensor([0.25, -0.5], requires_grad=True)
        loss = od.mse_loss(od.addmm(b, x, w.t()).relu(), od.zeros([2, 2]))
        loss.backward()
        errors = {}
        for name, call in [("function", lambda: od.arange(3)), ("ops", lambda: od.ops.aten.matmul(x, x)),
                           ("overload", lambda: od.ops.aten.arange.start(0, 3)), ("method", lambda: x.matmul(x)),
                           ("operator", lambda: x @ x)]:
            try:
                call()
                errors[name] = None
            except od.Error as error:
                errors[name] = str(error)
        print(json.dumps({"loss": loss.item(), "w.grad": w.grad.tolist(), "b.grad": b.grad.tolist(), "errors": errors,
                          "registered": od.dispatcher.dump_table("aten::addmm")["CPU"]}))
    """)
    # y = relu(x @ w.T + b) = [[2.75, 0], [0, 10.5]], loss = mean(y^2); dloss/dy = y / 2
    assert results["loss"] == pytest.approx((2.75 ** 2 + 10.5 ** 2) / 4)
    assert results["b.grad"] == pytest.approx([1.375, 5.25])
    assert results["w.grad"][0] + results["w.grad"][1] == pytest.approx([1.375, -2.75, 15.75, 21.0])
    assert results["registered"] == "CPU kernel"
    tail = f"is not in this build: the operator selection {SELECTION} (scons --ops) does not include it"
    assert results["errors"] == {"function": f"aten::arange {tail}", "ops": f"aten::matmul {tail}",
                                 "overload": f"aten::arange.start {tail}", "method": f"aten::matmul {tail}",
                                 "operator": f"aten::matmul {tail}"}


def test_a_bad_selection_stops_at_its_line_with_status_2(selective, tmp_path):
    root, _ = selective
    bad = tmp_path / "bad.txt"
    bad.write_text("aten::addmm\n# a comment\naten::mmm\naten::addmm\n")
    before = snapshot(root / "build")
    build = scons(root, f"--ops={bad}", target=None)
    assert build.result.returncode == 2, build.output[-3000:]
    assert f"{bad}:3: error: unknown operator 'aten::mmm'; did you mean 'aten::mm'?" in build.result.stderr
    assert f"{bad}:4: error: duplicate: addmm is already selected at line 1; remove one of them" in build.result.stderr
    assert "Traceback" not in build.output
    assert snapshot(root / "build") == before  # nothing built, nothing removed


def test_adding_one_operator_compiles_its_group_and_removing_it_relinks_only(selective, closer, tmp_path):
    root = copy_built(selective[0], tmp_path / "project")
    base = closer(MLP)
    # An operator outside the closure whose group brings no other group: its unit and the kernel
    # file implementing it are all that compile.
    candidates = [(g, closer(MLP + f"{g}\n")) for g in ("matmul", "arange") if g not in base.groups]
    group, added = next((g, c) for g, c in candidates if set(c.groups) - set(base.groups) == {g})
    new_sources = objects_of(added)[1] - objects_of(base)[1]
    assert new_sources, "the group's kernel file compiles too"

    (root / SELECTION).write_text(MLP + f"aten::{group}\n")
    grown = ok(scons(root, f"--ops={SELECTION}", target=None))
    assert grown.compiled == {UNIT.format(group)} | new_sources
    assert grown.linked and grown.regenerated == (1, len(added.generated))

    (root / SELECTION).write_text(MLP)
    shrunk = ok(scons(root, f"--ops={SELECTION}", target=None))
    assert shrunk.compiled == set()
    assert shrunk.linked and shrunk.regenerated == (0, len(base.generated))
    assert not (root / GEN / "ops" / f"{group}.h").exists()


def test_a_full_build_switches_to_a_selection_and_back_compiling_nothing(built_project, closer, tmp_path):
    root = copy_built(built_project.root, tmp_path / "project")
    full_gen = snapshot(root / GEN)
    sizes_path = root / "cache" / "object_sizes.json"
    full_sizes = json.loads(sizes_path.read_text())
    assert set(full_sizes["groups"]) == {g.name for g in closer.model.operator_groups}
    assert full_sizes["library_bytes"] == os.path.getsize(root / LIBRARY)
    assert "csrc/native/matmul.cpp" in full_sizes["sources"]

    closure = closer(MLP)
    (root / SELECTION).write_text(MLP)
    selective = ok(scons(root, f"--ops={SELECTION}", target=None))
    assert selective.compiled == set() and selective.linked
    left_out = sorted(set(g.name for g in closer.model.operator_groups) - set(closure.generated))
    assert "[opgen] removed" in selective.output and "generated files of operator groups outside the selection" in selective.output
    remaining = {name for name in os.listdir(root / GEN / "ops")}
    assert not any(name.startswith(f"{group}.") or name.startswith(f"{group}_unit") for group in left_out
                   for name in remaining)
    # Every selected group's files are the full build's, bytes and mtimes.
    kept = snapshot(root / GEN)
    assert {path: state for path, state in kept.items() if path.startswith("ops")} == \
        {path: state for path, state in full_gen.items() if path in kept and path.startswith("ops")}
    registered = run_python(root, "print(json.dumps(sorted(od._C._op_names())))")
    assert "aten::addmm" in registered and not [name for name in registered if name.startswith("aten::arange")]

    # The library's objects are recorded, merged into the full build's figures.
    sizes = json.loads(sizes_path.read_text())
    assert sizes["library_bytes"] == full_sizes["library_bytes"] and sizes["groups"] == full_sizes["groups"]
    assert sizes["selections"] == {SELECTION: os.path.getsize(root / LIBRARY)}
    assert sizes["selections"][SELECTION] < full_sizes["library_bytes"]
    report = subprocess.run([sys.executable, "-m", "opgen", "select", SELECTION, "--report"], cwd=root,
                            capture_output=True, text=True, timeout=120,
                            env={k: v for k, v in os.environ.items() if k != "OPGEN_CACHE_DIR"})
    assert report.returncode == 0, report.stderr
    assert f"operator groups: {len(closure.groups)} of {GROUPS}" in report.stdout
    # Estimated from what each object contributes to the full library (its link map): near the real size.
    estimated = float(re.search(r"library size: ~([0-9.]+) MiB estimated", report.stdout).group(1)) * (1 << 20)
    assert abs(estimated - sizes["selections"][SELECTION]) < 0.05 * sizes["selections"][SELECTION], report.stdout
    assert "objects without a recorded size" not in report.stdout
    assert f"a selective build of {SELECTION} recorded it" in report.stdout

    back = ok(scons(root, target=None))
    assert back.compiled == set() and back.linked
    assert snapshot(root / GEN).keys() == full_gen.keys()
    assert {p: s[0] for p, s in snapshot(root / GEN).items()} == {p: s[0] for p, s in full_gen.items()}


def test_a_recorded_mlp_builds_selectively_and_runs_to_the_same_bits_its_inference_in_half_the_size(
        built_project, closer, tmp_path):
    root = copy_built(built_project.root, tmp_path / "project")
    full = run_mlp(root, "--record", "ops.yaml")
    recorded = full["operators"]
    assert {name for name, root_ in recorded.items() if root_} == MLP_ROOTS
    assert {"aten::mm", "aten::t", "aten::nll_loss_backward"} <= {name for name, root_ in recorded.items() if not root_}
    closure = closer((root / "ops.yaml").read_text(), "ops.yaml")
    assert {name.split("::")[1] for name in recorded} <= set(closure.operators)
    assert "matmul" not in closure.groups

    before = built_objects(root)
    selective = ok(scons(root, "--ops=ops.yaml", target=None))
    assert (f"[opgen] operator selection ops.yaml: {len(recorded)} operators selected, "
            f"{len(closure.groups)}/{GROUPS} groups after closure") in selective.output
    # What the selection adds over the full build: nothing (a cold selective build would compile
    # every object of the closure); the library relinks.
    units, sources = objects_of(closure)
    assert (units | sources) <= before
    assert selective.compiled == (units | sources) - before == set()
    assert selective.linked
    registered = run_python(root, "print(json.dumps(sorted(od._C._op_names())))")
    assert set(recorded) <= set(registered) and "aten::matmul" not in registered

    again = run_mlp(root, "--call", "matmul")
    assert (again["loss"], again["grads"]) == (full["loss"], full["grads"])  # floats, to the bit
    assert again["error"] == ("aten::matmul is not in this build: "
                              "the operator selection ops.yaml (scons --ops) does not include it")

    # Its forward alone, recorded for inference (no entry used for training): issue 41's library
    # of at most half the full one's size, file and loaded bytes, running the forward to the bit.
    forward = run_mlp(root, "--inference", "--record", "inference.yaml")
    assert forward["loss"] == full["loss"] and forward["grads"] == []
    ok(scons(root, "--ops=inference.yaml", target=None))
    assert run_mlp(root, "--inference")["loss"] == full["loss"]
    # Its size, estimated from the full build's figures: what the link drops (the loops of the
    # stubs no kept kernel calls, the autograd layer no group has) and the handles it adds.
    report = subprocess.run([sys.executable, "-m", "opgen", "select", "inference.yaml", "--report"], cwd=root,
                            capture_output=True, text=True, timeout=120,
                            env={k: v for k, v in os.environ.items() if k != "OPGEN_CACHE_DIR"})
    assert report.returncode == 0, report.stderr
    estimated = float(re.search(r"library size: ~([0-9.]+) MiB estimated", report.stdout).group(1)) * (1 << 20)
    built = os.path.getsize(root / LIBRARY)
    assert json.loads((root / "cache" / "object_sizes.json").read_text())["selections"]["inference.yaml"] == built
    assert abs(estimated - built) < 0.05 * built, report.stdout
    assert re.search(r"in the link: -[0-9.]+ KiB of the loops of \d+ stubs no kept kernel calls, -[0-9.]+ KiB of the "
                     r"autograd layer of \d+ groups used for inference only, \+[0-9.]+ KiB of the operator handles",
                     report.stdout), report.stdout
    # A backward pass reaches operators the selection left out (nothing in it trains): it raises
    # naming them and the selection.
    [error] = run_python(root, """
x = od.tensor([1.0, 2.0], requires_grad=True)
try:
    for _ in range(2):
        x.backward(od.tensor([1.0, 1.0]))  # the second accumulates into x.grad
    print(json.dumps(["no error"]))
except od.Error as error:
    print(json.dumps([str(error)]))
""")
    assert re.fullmatch(r"aten::\w+(\.\w+)? is not in this build: the operator selection inference.yaml \(scons --ops\) "
                        r"does not include it, as it runs in backward passes and nothing selected is used for training",
                        error), error
    full_library, library = built_project.root / LIBRARY, root / LIBRARY
    assert os.path.getsize(library) <= os.path.getsize(full_library) / 2
    assert _loaded_bytes(library) <= _loaded_bytes(full_library) / 2


def _loaded_bytes(library) -> int:
    """text + data + bss, as `size` counts them: what loading the library maps."""
    text, data, bss = subprocess.run(["size", str(library)], capture_output=True, text=True,
                                     check=True).stdout.splitlines()[1].split()[:3]
    return int(text) + int(data) + int(bss)


def test_installing_a_selective_build_ships_the_yaml_of_what_it_holds(selective, closer, tmp_path):
    """`scons --ops=FILE install`: the runtime's yaml in share/opdispatch has the full yaml's
    entries of the closure's groups only, verbatim and in order, so a downstream build against
    it knows no operator the library leaves out."""
    root = copy_built(selective[0], tmp_path / "project")
    prefix = tmp_path / "sdk"
    ok(scons(root, f"--ops={SELECTION}", "install", f"PREFIX={prefix}", target=None))
    installed = prefix / "share" / "opdispatch" / "native_functions.yaml"
    full = (root / "yaml" / "native_functions.yaml").read_text()
    text = installed.read_text()
    model = load_model(str(installed), str(prefix / "share" / "opdispatch" / "tags.yaml"))
    assert sorted(g.name for g in model.operator_groups) == sorted(closer(MLP).groups)
    entries = re.split(r"(?m)^(?=- func:)", text)[1:]
    assert entries and all(entry in full for entry in entries)
    positions = [full.index(entry) for entry in entries]
    assert positions == sorted(positions)


def test_a_selective_build_with_backends_registers_their_kernels_for_the_closure_only(selective, tmp_path):
    """`scons --ops=FILE --backend=xla,lazy`: the backends' kernels are compiled whole, so what
    they call joins the closure (the libraries link with --no-undefined); their registrations
    are generated for the closure's groups only; the MLP's operators run on both devices."""
    root = copy_built(selective[0], tmp_path / "project")
    # The program copies its results to the CPU: aten::to (which to.cpp only implements beside
    # _to_copy, so the closure by operator keeps it only when selected).
    selection = MLP + "aten::to.device\n"
    (root / SELECTION).write_text(selection)
    build = ok(scons(root, f"--ops={SELECTION}", "--backend=xla,lazy", target=None))
    closure = Closer(backends=("xla", "lazy"))(selection)
    assert len(closure.groups) >= len(Closer()(selection).groups)
    assert f"{len(closure.groups)}/{GROUPS} groups after closure" in build.output
    for key in ("XLA", "Lazy"):
        # Generated for the closure's groups and the declared ones (the backends' kernels include
        # their headers); compiled, so registered, for the closure's groups only.
        ops = root / GEN / "backends" / key / "ops"
        generated = {name.split("_" + key)[0] for name in os.listdir(ops) if name.endswith(f"_{key}.cpp")}
        assert generated and generated <= set(closure.generated), generated - set(closure.generated)
        objects = root / "build" / "obj" / "gen" / "backends" / key / "ops"
        registered = {name.split("_" + key)[0] for name in os.listdir(objects) if name.endswith(f"_{key}.os")}
        assert registered and registered <= set(closure.groups), registered - set(closure.groups)
    results = run_python(root, """
import opdispatch.lazy as lazy
import opdispatch.xla as xla
out = {}
for device in ("xla", "lazy"):
    x = od.ones([2, 2], device=device)
    y = od.addmm(x, x, x).relu()
    if device == "lazy":
        lazy.mark_step()
    out[device] = y.to("cpu").tolist()
try:
    od.log_softmax(od.ones([2, 2], device="xla"), 1)
except od.Error as error:
    out["left_out"] = str(error).splitlines()[0]
print(json.dumps(out))
""")
    assert results["xla"] == results["lazy"] == [[3.0, 3.0], [3.0, 3.0]]
    assert "log_softmax" not in closure.groups
    assert results["left_out"].startswith("aten::log_softmax"), results
    assert f"the operator selection {SELECTION} (scons --ops) does not include it" in results["left_out"]


def _nm(*args):
    return subprocess.run(["nm", *args], capture_output=True, text=True, check=True).stdout


def test_a_selective_library_exports_no_left_out_kernel_keeps_what_the_extension_needs_and_is_measured(selective,
                                                                                                   closer):
    """Linked with --gc-sections and a version script making the kernels of the groups it leaves
    out local (opgen/selection/exports.py): none of them is exported, and every symbol of the
    runtime the Python extension uses still is. Its link map measured each object: the recorded
    figures add up to the library, and `opgen select --report` says so beside its estimate."""
    root, _ = selective
    library = str(root / LIBRARY)
    script = (root / "build" / "obj" / "gen" / "unregistered_kernels.ver").read_text()
    hidden = set(re.findall(r'^ {6}"([^"]+)";$', script, re.MULTILINE))
    assert "op::native::arange_out(op::Scalar const&, op::TensorBase&)" in hidden  # arange is left out
    exported = {line.split(" ", 2)[2] for line in _nm("-D", "-C", "--defined-only", library).splitlines()}
    assert not hidden & exported
    classes = tuple(name + "::" for name in re.findall(r"^ {6}(op::\S+)::\*;$", script, re.MULTILINE))
    assert classes and not [name for name in exported if name.startswith(classes)]
    # What the extension imports from the library survives, and it loads and runs (the tests above).
    extension = next((root / "build" / "python" / "opdispatch").glob("_C*.so"))
    wanted = {line.split()[-1] for line in _nm("-D", "--undefined-only", str(extension)).splitlines()
              if line.split()[-1].startswith("_ZN2op")}
    assert wanted and wanted <= {line.split()[-1] for line in _nm("-D", "--defined-only", library).splitlines()}

    sizes = json.loads((root / "cache" / "object_sizes.json").read_text())
    measured = sizes["measured"][SELECTION]
    assert measured["library_bytes"] == os.path.getsize(library) == sizes["selections"][SELECTION]
    assert set(measured["groups"]) == set(closer(MLP).groups) and all(measured["groups"].values())
    assert sum(measured["groups"].values()) + sum(measured["sources"].values()) + measured["linker_bytes"] == \
        measured["library_bytes"]
    report = subprocess.run([sys.executable, "-m", "opgen", "select", SELECTION, "--report"], cwd=root,
                            capture_output=True, text=True, timeout=120,
                            env={k: v for k, v in os.environ.items() if k != "OPGEN_CACHE_DIR"})
    assert report.returncode == 0, report.stderr
    assert "measured from its link map: " in report.stdout
    assert "family files (a hand-written source implementing several groups)" in report.stdout
    assert "    csrc/native/unary_ops.cpp: " in report.stdout


def test_the_full_library_holds_every_stubs_cpu_loop_and_exports_no_loop_pointer(built_project):
    """The full build keeps the CPU loop of every dispatch stub stubs.h declares (each read through
    its hidden pointer `op_stub_loop_<stub>_CPU`, csrc/native/dispatch_stub.h); a selective library
    keeps only those its kernels call (tests/scons/test_selective_by_operator.py)."""
    with open(os.path.join(REPO_ROOT, "csrc", "native", "stubs.h"), encoding="utf-8") as handle:
        declared = set(re.findall(r"OP_DECLARE_STUB\((\w+),", handle.read()))
    library = str(built_project.root / LIBRARY)
    symbols = _nm("-C", library)
    assert declared and set(re.findall(r" op_stub_loop_(\w+)_CPU$", symbols, re.MULTILINE)) == declared
    for loop in ("cos_kernel", "sin_kernel", "clamp_kernel", "gemm_kernel"):
        assert f"::{loop}(" in symbols, loop
    assert "op_stub_loop_" not in _nm("-D", library)
