"""A downstream project (tests/plugin/downstream: SConstruct, myops.yaml, kernels/myops.cpp) built
with the pip-installed opgen against the installed runtime: its operators run from Python and
agree with numpy, a yaml edit recompiles one group, bad input stops with FILE:LINE and exit
status 2, ccache serves a rebuild, and the library loads and unloads cleanly."""
import json
import os
import re
import shutil
import textwrap

import pytest

from helpers import ccache_hits, ccache_log_stats, copy_built

LIBRARY = os.path.join("build", "libmyops.so")
# A compile's object: "... -o build/myops/obj/ops/scale_unit.os -c ..." (scons --verbose) or its
# step line "[ 2/5] CXX build/myops/obj/ops/scale_unit.os" (opgen/scons/toolset/build_output.py)
OBJECT = re.compile(r" -o (\S+\.os) -c ")
STEP_OBJECT = re.compile(r"^\[\s*\d+/\d+\] CXX (\S+\.os)$", re.MULTILINE)


def compiled(result):
    return sorted(os.path.basename(path) for path in OBJECT.findall(result.stdout) + STEP_OBJECT.findall(result.stdout))


def run_python(venv, project, body, library=LIBRARY):
    """Runs ``body`` in the venv with opdispatch and numpy imported and the project's library
    loaded as ``lib``; returns its last stdout line parsed as JSON."""
    script = ("import json, os, ctypes\nimport numpy as np\nimport opdispatch as od\n"
              f"PATH = {os.path.join(str(project), library)!r}\nlib = od.load_library(PATH)\n"
              + textwrap.dedent(body))
    result = venv.run(["-c", script], cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


@pytest.fixture
def project(downstream_built, tmp_path):
    """A copy of the built downstream project this test may edit."""
    return copy_built(downstream_built.root, tmp_path / "project")


def test_every_group_is_generated_and_compiled_into_the_library(downstream_built):
    root = downstream_built.root
    assert os.path.isfile(os.path.join(root, LIBRARY))
    assert compiled(downstream_built.first_build) == ["axpby_unit.os", "myops.os", "scale_unit.os", "sumsq_unit.os"]
    ops = os.path.join(root, "build", "myops", "gen", "ops")
    assert {"scale.h", "axpby_meta.h", "axpby_Meta.cpp", "sumsq_CompositeImplicitAutograd.cpp"} <= set(os.listdir(ops))
    assert "OP_LIBRARY_FRAGMENT(myops, m)" in open(os.path.join(ops, "scale_schema.cpp")).read()


def test_the_operators_run_from_python_and_match_numpy(plugin_venv, downstream_built):
    results = run_python(plugin_venv, downstream_built.root, """
        x = np.arange(6, dtype=np.float64).reshape(2, 3)
        y = np.linspace(-1, 1, 6).reshape(2, 3)
        tx, ty = od.tensor(x.tolist(), dtype=od.float64), od.tensor(y.tolist(), dtype=od.float64)
        ops = od.ops.myops
        checks = {
            "scale": np.allclose(ops.scale(tx, f=3.0).numpy(), x * 3.0),
            "scale default": np.allclose(ops.scale(tx).numpy(), x * 2.0),
            "scale float32": ops.scale(od.tensor([1.5], dtype=od.float32)).dtype == od.float32,
            "axpby": np.allclose(ops.axpby(tx, ty, 2.0, -0.5).numpy(), 2.0 * x - 0.5 * y),
            "sumsq (composite)": np.isclose(ops.sumsq(tx).item(), (x * x).sum()),
        }
        out = od.zeros([2, 3], dtype=od.float64)
        returned = ops.axpby.out(tx, ty, 1.0, 1.0, out=out)
        checks["axpby out="] = np.allclose(out.numpy(), x + y) and returned is out
        inplace = od.tensor(x.tolist(), dtype=od.float64)
        ops.axpby_(inplace, ty, 0.5, 2.0)
        checks["axpby_ in place"] = np.allclose(inplace.numpy(), 0.5 * x + 2.0 * y)
        meta = ops.axpby(od.zeros([4, 5], device="meta"), od.zeros([4, 5], device="meta"), 1.0, 1.0)
        checks["axpby on meta"] = meta.device == "meta" and list(meta.shape) == [4, 5]
        try:
            ops.axpby(tx, od.zeros([3]), 1.0, 1.0)
            checks["meta() rejects"] = False
        except od.Error as e:
            checks["meta() rejects"] = "axpby: self and other must have one shape" in str(e)
        table = od.dispatcher.dump_table("myops::axpby")
        checks["registered keys"] = {"CPU", "Meta"} <= set(table)
        print(json.dumps({name: bool(ok) for name, ok in checks.items()}))
    """)
    assert results == {name: True for name in results}, results


def test_the_library_unloads_cleanly_and_loads_again(plugin_venv, downstream_built, tmp_path):
    second_copy = tmp_path / "libmyops_copy.so"
    shutil.copy(os.path.join(downstream_built.root, LIBRARY), second_copy)
    results = run_python(plugin_venv, downstream_built.root, f"""
        checks = {{}}
        t = od.tensor([1.0, 2.0], dtype=od.float64)
        checks["runs"] = od.ops.myops.scale(t, f=3.0).tolist() == [3.0, 6.0]
        # A second copy defines the same operators: an error naming one, and nothing of it stays.
        try:
            od.load_library({str(second_copy)!r})
            checks["duplicate rejected"] = False
        except od.Error as e:
            checks["duplicate rejected"] = "myops::" in str(e)
        checks["first still runs"] = od.ops.myops.scale(t).tolist() == [2.0, 4.0]
        lib.close()
        lib.close()  # twice is fine
        checks["operators gone"] = not any(n.startswith("myops::") for n in od.dispatcher.op_names())
        try:
            ctypes.CDLL(PATH, mode=os.RTLD_NOLOAD)
            checks["unmapped"] = False
        except OSError:
            checks["unmapped"] = True
        try:
            od.ops.myops.scale(t)
            checks["stale call raises"] = False
        except (od.Error, AttributeError, TypeError):
            checks["stale call raises"] = True
        again = od.load_library(PATH)
        checks["reloaded"] = od.ops.myops.sumsq(t).item() == 5.0 and again.loaded
        try:
            od.load_library("no/such/libx.so")
        except FileNotFoundError:
            checks["missing file"] = True
        print(json.dumps({{name: bool(ok) for name, ok in checks.items()}}))
        # The process ends with the library loaded: its registrations go at exit, without a crash.
    """)
    assert results == {name: True for name in results}, results


def test_a_yaml_edit_recompiles_only_its_group(plugin_venv, project):
    yaml_path = project / "myops.yaml"
    yaml_path.write_text(yaml_path.read_text().replace("float f=2.0", "float f=2.5"))
    result = plugin_venv.scons(project, "-j2", "--debug=explain")
    assert result.returncode == 0, result.stdout + result.stderr
    assert compiled(result) == ["scale_unit.os"]
    # Rendered, or materialized when the session's cache saw this edit already (another test's).
    assert re.search(r"\[opgen\] (regenerated|materialized from the cache) 1/3 groups: scale", result.stdout)
    assert run_python(plugin_venv, project, "print(json.dumps(od.ops.myops.scale(od.tensor([2.0])).tolist()))") == [5.0]
    noop = plugin_venv.scons(project, "-j2")
    assert noop.returncode == 0 and compiled(noop) == [] and "is up to date" in noop.stdout


def test_a_bad_yaml_stops_with_file_line_and_status_2(plugin_venv, project):
    yaml_path = project / "myops.yaml"
    lines = yaml_path.read_text().splitlines(keepends=True)
    bad = next(number for number, line in enumerate(lines, 1) if "CPU: axpby_out" in line)
    lines[bad - 1] = lines[bad - 1].replace("CPU:", "CPUU:")
    yaml_path.write_text("".join(lines))
    result = plugin_venv.scons(project)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"myops.yaml:{bad}: error: unknown dispatch key 'CPUU'" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_a_group_named_like_a_runtime_group_is_refused(plugin_venv, project):
    yaml_path = project / "myops.yaml"
    text = yaml_path.read_text()
    line = text.count("\n") + 2
    yaml_path.write_text(text + "\n- func: myops::mul(Tensor self, Tensor other) -> Tensor\n")
    result = plugin_venv.scons(project)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"myops.yaml:{line}: error: operator group 'mul' has the name of one of the runtime's" in result.stderr


def test_the_runtime_can_be_named_by_OPGEN_RUNTIME(plugin_venv, project):
    """$OPGEN_RUNTIME (an install prefix) wins over the opdispatch package; naming the prefix
    the package came from changes nothing, and one without a runtime stops the build."""
    same = plugin_venv.scons(project, OPGEN_RUNTIME=plugin_venv.root)
    assert same.returncode == 0, same.stdout + same.stderr
    assert compiled(same) == [] and "is up to date" in same.stdout
    missing = plugin_venv.scons(project, OPGEN_RUNTIME="/no/such/prefix")
    assert missing.returncode == 2, missing.stdout + missing.stderr
    assert "OPGEN_RUNTIME: /no/such/prefix holds no opdispatch runtime" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_ccache_serves_a_clean_rebuild(plugin_venv, project, tmp_path):
    """The session's ccache saw the first build of the same sources in another directory."""
    if not shutil.which("ccache"):
        pytest.skip("ccache is not installed")
    shutil.rmtree(project / "build")
    log = tmp_path / "ccache.log"
    result = plugin_venv.scons(project, "-j2", CCACHE_STATSLOG=str(log))
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(compiled(result)) == 4
    assert ccache_hits(ccache_log_stats(log)) == 4, ccache_log_stats(log)


BACKEND = os.path.join(os.path.dirname(os.path.abspath(__file__)), "downstream_backend")


def test_a_backend_library_registers_kernels_for_the_runtimes_operators(plugin_venv, tmp_path):
    project = tmp_path / "backend"
    shutil.copytree(BACKEND, project)
    build = plugin_venv.scons(project, "-j2")
    assert build.returncode == 0, build.stdout + build.stderr
    assert compiled(build) == ["neg.os", "neg_XLA.os"]
    # cpu tensors with XLA included on the thread reach the backend's kernels; every other
    # operator (copy_ in the generated out= and in-place wrappers) falls through to the CPU.
    script = """
        fallthrough = od.library.Library("_", "IMPL", "XLA")
        fallthrough.fallback("XLA")
        t, out = od.tensor([1.0, -2.0]), od.zeros([2])
        with od.dispatcher.include_keys("XLA"):
            results = [od.neg(t).tolist(), od.neg(t, out=out).tolist(), t.neg_().tolist()]
        print(json.dumps(results))
    """
    results = run_python(plugin_venv, project, script, library=os.path.join("build", "libmybackend.so"))
    assert results == [[-10.0, 20.0], [-10.0, 20.0], [-10.0, 20.0]]
    # A kernel the yaml lists but nobody defines stops the build before linking, with its signature.
    yaml_path = project / "mybackend.yaml"
    yaml_path.write_text(yaml_path.read_text() + "  - abs\n")
    missing = plugin_venv.scons(project, "-j2")
    assert missing.returncode == 2, missing.stdout + missing.stderr
    assert "op::mybackend::XLANativeFunctions::abs(op::TensorBase const&)" in missing.stderr


def test_unknown_dispatch_keys_stop_the_build(plugin_venv, project):
    sconstruct = project / "SConstruct"
    sconstruct.write_text(sconstruct.read_text().replace('kernels=Glob("kernels/*.cpp")',
                                                         'kernels=Glob("kernels/*.cpp"), keys=["CPU", "Bogus"]'))
    result = plugin_venv.scons(project)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "OpgenOperatorLibrary('myops'): keys: 'Bogus' is not a valid DispatchKey" in result.stderr
