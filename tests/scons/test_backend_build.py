"""Real SCons builds with ``--backend=xla`` in a copy of the session's built project: the
backend's own files per group, in-tree files untouched, only the affected group rebuilt after a
backend-yaml edit, and the definition check that stops the build before linking when a kernel is
missing."""
import os
import re

import pytest

from helpers import copy_built, copy_project, snapshot
from scons_helpers import GEN, LIBRARY, Build, changed_files, ok, rewrite_in_a_later_second, scons

BACKEND_LIBRARY = os.path.join("build", "lib", "libopdispatch_xla.so")
BACKEND_YAML = os.path.join("yaml", "xla_native_functions.yaml")
XLA_GEN = os.path.join(GEN, "backends", "XLA")


def backend_build(project, *args):
    return scons(project, "--backend=xla", *args, target=BACKEND_LIBRARY)


def backend_groups(build):
    return build.progress("XLA backend groups")


@pytest.fixture(scope="module")
def project(built_xla_project, tmp_path_factory):
    root = copy_built(built_xla_project.root, tmp_path_factory.mktemp("backend-project") / "project")
    first = ok(Build(built_xla_project.first_build))  # the in-tree library was built already: the backend on top
    (done, total), _ = backend_groups(first)
    assert done == total > 15
    assert os.path.exists(root / BACKEND_LIBRARY) and os.path.exists(root / LIBRARY)
    return root


@pytest.fixture
def backend_yaml(project):
    path = project / BACKEND_YAML
    original = path.read_text()
    yield path
    path.write_text(original)
    ok(backend_build(project))


def test_noop_backend_build_does_nothing(project):
    build = ok(backend_build(project))
    assert backend_groups(build)[0][0] == 0
    assert build.regenerated[0] == 0
    assert build.compiled == set() and "[opgen] check" not in build.output


def test_in_tree_files_match_a_build_without_the_backend(project, tmp_path):
    (tmp_path / "plain").mkdir()
    plain = copy_project(tmp_path / "plain")
    ok(scons(plain, "--codegen-only", target=None))
    ok(scons(project, "--backend=xla", "--codegen-only", target=None))  # the umbrellas too (no library includes them)
    ours = {p: v[0] for p, v in snapshot(project / GEN).items() if not p.startswith("backends")}
    theirs = {p: v[0] for p, v in snapshot(plain / GEN).items()}
    assert ours == theirs
    assert not os.path.exists(plain / XLA_GEN)


def test_listing_an_operator_without_a_kernel_stops_before_linking(project, backend_yaml):
    backend_yaml.write_text(backend_yaml.read_text().replace("  - mul.Tensor\n", "  - mul.Tensor\n  - mul.Scalar\n"))
    before = snapshot(project / GEN)
    build = backend_build(project)
    assert build.result.returncode == 2, build.output[-3000:]
    assert backend_groups(build) == ((1, backend_groups(build)[0][1]), ["mul"])
    assert build.regenerated[0] == 0
    assert changed_files(before, snapshot(project / GEN)) == {
        os.path.join("backends", "XLA", "ops", "mul_native.h"), os.path.join("backends", "XLA", "ops", "mul_XLA.cpp")}
    assert "1 XLA kernel(s) declared by yaml/xla_native_functions.yaml have no definition in csrc/backends/xla/" in build.output
    assert "op::xla::XLANativeFunctions::mul(op::TensorBase const&, op::Scalar const&)" in build.output
    assert "[operator group mul]" in build.output
    assert not build.linked and "-o build/lib/libopdispatch_xla.so" not in build.output
    # Only what includes the edited group's files was compiled: its registrations and the kernels
    # source that includes its declarations.
    assert build.compiled == {"build/obj/gen/backends/XLA/ops/mul_XLA.os", "build/obj/backends/xla/compute_kernels.os"}

    # Defining the kernel lets the build finish, compiling that definition and nothing else.
    (project / "csrc" / "backends" / "xla" / "test_mul_scalar.cpp").write_text(
        '#include "backends/XLA/ops/mul_native.h"\n\n'
        "namespace op::xla {\n"
        "TensorBase XLANativeFunctions::mul(const TensorBase& self, const Scalar&) { return self; }\n"
        "}  // namespace op::xla\n")
    try:
        build = ok(backend_build(project))
        assert build.compiled == {"build/obj/backends/xla/test_mul_scalar.os"}
        assert "-o build/lib/libopdispatch_xla.so" in build.output
        assert "-o build/lib/libopdispatch.so" not in build.output
    finally:
        os.unlink(project / "csrc" / "backends" / "xla" / "test_mul_scalar.cpp")


def test_unlisting_an_operator_removes_its_files_and_relinks(project, backend_yaml):
    backend_yaml.write_text(backend_yaml.read_text().replace("  - exp\n", ""))
    kernels = project / "csrc" / "backends" / "xla" / "compute_kernels.cpp"
    original = kernels.read_text()
    # A definition of a kernel nobody declares any more does not compile: it goes too, with its include.
    definition = re.search(r"^TensorBase XLANativeFunctions::exp\(.*?^}\n", original, re.S | re.M)
    kernels.write_text(original.replace(definition.group(0), "").replace('#include "backends/XLA/ops/exp_native.h"\n', ""))
    try:
        build = ok(backend_build(project))
        assert backend_groups(build)[0][0] == 0
        assert not os.path.exists(project / XLA_GEN / "ops" / "exp_XLA.cpp")
        assert "removed backends/XLA/ops/exp_XLA.cpp" in build.output
        assert build.compiled == {"build/obj/backends/xla/compute_kernels.os"}
        assert "-o build/lib/libopdispatch_xla.so" in build.output
    finally:
        rewrite_in_a_later_second(kernels, original)


def test_unknown_backend_exits_2(project):
    build = scons(project, "--backend=tpu", target=None)
    assert build.result.returncode == 2
    assert "--backend=tpu: no such backend; available: lazy, xla" in build.output
    assert "Traceback" not in build.output


def test_bad_backend_yaml_exits_2_with_file_and_line(project, backend_yaml):
    text = backend_yaml.read_text()
    backend_yaml.write_text(text.replace("device_guard: false", "device_guard: maybe"))
    line = text.splitlines().index("device_guard: false") + 1
    before = snapshot(project / GEN)
    build = backend_build(project)
    assert build.result.returncode == 2
    assert f"yaml/xla_native_functions.yaml:{line}: error: 'device_guard' must be True or False, got str 'maybe'" in build.output
    assert "invalid backend yaml yaml/xla_native_functions.yaml; nothing was built" in build.output
    assert changed_files(before, snapshot(project / GEN)) == set()
