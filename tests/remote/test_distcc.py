"""scons --distcc=HOSTS against a real distccd on loopback: the XLA backend's hand-written kernels
are deleted from a built checkout and rebuilt on distccd, with ccache off (distcc prefixes the
compiles) and on (ccache hands its misses to distcc); the objects and the relinked library are
byte-identical to the local build's. Plus -j from the hosts' slots and the exit-2 errors."""
import os
import shutil

import pytest

from distcc_server import distcc_state_dir, finished_jobs, start_distccd
from helpers import REPO_ROOT, ccache_stats, copy_built, copy_project, run_scons
from scons_helpers import LIBRARY, ok, scons

XLA_LIBRARY = os.path.join("build", "lib", "libopdispatch_xla.so")
XLA_KERNEL_SOURCES = sorted(os.path.join("csrc", "backends", "xla", name)
                            for name in os.listdir(os.path.join(REPO_ROOT, "csrc", "backends", "xla"))
                            if name.endswith(".cpp"))
XLA_KERNEL_OBJECTS = {os.path.join("build", "obj", os.path.relpath(source, "csrc"))[:-len(".cpp")] + ".os": source
                      for source in XLA_KERNEL_SOURCES}

needs_distcc = pytest.mark.skipif(shutil.which("distcc") is None, reason="distcc is not installed")


def build_with(checkout, environment, *args, target=XLA_LIBRARY):
    """scons_helpers.scons() (-j2, --cuda=off) with extra environment variables."""
    return scons(checkout, "--backend=xla", *args, target=target, env=environment)


def configure(checkout, *args, environment=None):
    """A dry run without scons_helpers' -j2, for the configure lines."""
    return run_scons(checkout, "-n", "--cuda=off", *args, LIBRARY, env=environment, timeout=300)


@pytest.fixture(scope="module")
def distccd(tmp_path_factory):
    if shutil.which("distcc") is None:
        pytest.skip("distcc is not installed")
    server = start_distccd(str(tmp_path_factory.mktemp("distccd")), slots=2)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def built(built_xla_project, tmp_path_factory):
    """A copy of the session's built project with the XLA backend built on top locally (through
    the usual ccache), and its kernels' bytes."""
    checkout = copy_built(built_xla_project.root, tmp_path_factory.mktemp("distcc") / "checkout")
    ok(build_with(checkout, {}, "-q"))  # up to date: the backend was built with these options
    local = {path: (checkout / path).read_bytes() for path in [*XLA_KERNEL_OBJECTS, XLA_LIBRARY]}
    return checkout, local


def rebuild_on_distccd(built, distccd, tmp_path, *args, environment=()):
    """Deletes the kernels' objects and the XLA library, rebuilds them with --distcc; returns the
    build and the jobs distccd finished meanwhile."""
    checkout, _ = built
    for path in [*XLA_KERNEL_OBJECTS, XLA_LIBRARY]:
        (checkout / path).unlink()
    jobs_before = len(finished_jobs(distccd))
    environment = {"DISTCC_DIR": distcc_state_dir(tmp_path), **dict(environment)}
    build = ok(build_with(checkout, environment, f"--distcc=127.0.0.1:{distccd.port}/2", *args))
    return build, finished_jobs(distccd)[jobs_before:]


def assert_same_as_local_build(built, build):
    checkout, local = built
    assert build.compiled == set(XLA_KERNEL_OBJECTS)  # only the deleted objects were compiled
    assert f"-o {XLA_LIBRARY} " in build.result.stdout  # and the library was relinked from them
    assert [path for path, data in local.items() if (checkout / path).read_bytes() != data] == []


def compile_lines(build):
    return [line for line in build.result.stdout.splitlines() if " -c " in line]


@needs_distcc
def test_with_ccache_off_distcc_runs_the_compiles_on_distccd(built, distccd, tmp_path):
    build, jobs = rebuild_on_distccd(built, distccd, tmp_path, "--ccache=off")
    assert f"[opgen] distcc: 127.0.0.1:{distccd.port}/2 (-j 2)" in build.result.stdout
    assert {tuple(line.split()[:2]) for line in compile_lines(build)} == {(shutil.which("distcc"), "g++")}
    assert sorted(jobs) == [("COMPILE_OK", source) for source in XLA_KERNEL_SOURCES]
    assert_same_as_local_build(built, build)


@needs_distcc
def test_with_ccache_on_ccache_sends_its_misses_to_distccd(built, distccd, tmp_path):
    empty_cache = tmp_path / "ccache"
    build, jobs = rebuild_on_distccd(built, distccd, tmp_path, "--ccache=on",
                                     environment={"CCACHE_DIR": str(empty_cache)})
    # "ccache g++ ...": ccache runs distcc itself, the command never says "ccache distcc g++"
    assert {tuple(line.split()[:2]) for line in compile_lines(build)} == {(shutil.which("ccache"), "g++")}
    assert sorted(jobs) == [("COMPILE_OK", source) for source in XLA_KERNEL_SOURCES]
    assert ccache_stats(empty_cache)["cache_miss"] == len(XLA_KERNEL_OBJECTS)
    assert_same_as_local_build(built, build)


@needs_distcc
@pytest.mark.parametrize("ccache", ["on", "off"])
def test_switching_distcc_rebuilds_nothing(built, distccd, tmp_path, ccache):
    checkout, _ = built
    environment = {"DISTCC_DIR": distcc_state_dir(tmp_path)}
    for distcc in ([f"--distcc=127.0.0.1:{distccd.port}/2"], []):
        up_to_date = build_with(checkout, environment, "-q", f"--ccache={ccache}", *distcc)
        assert up_to_date.result.returncode == 0, up_to_date.output[-3000:]


@pytest.fixture(scope="module")
def spare_checkout(tmp_path_factory):
    """For dry runs and runs that stop before building: nothing of it is ever compiled."""
    return copy_project(tmp_path_factory.mktemp("distcc-options"))


@needs_distcc
def test_jobs_default_to_the_hosts_slots(spare_checkout, tmp_path):
    hosts = "127.0.0.1:3632/3,lzo,localhost"  # commas between hosts; ",lzo" stays with its host
    state = {"DISTCC_DIR": distcc_state_dir(tmp_path)}
    default = configure(spare_checkout, f"--distcc={hosts}", environment=state)
    assert default.returncode == 0, default.stderr
    assert "[opgen] distcc: 127.0.0.1:3632/3,lzo localhost (-j 5)\n" in default.stdout  # 3 + localhost's 2
    given = configure(spare_checkout, f"--distcc={hosts}", "-j", "2", environment=state)
    assert "[opgen] distcc: 127.0.0.1:3632/3,lzo localhost (-j 2; the hosts take 5)\n" in given.stdout
    from_sconsflags = configure(spare_checkout, "--distcc=a b", environment={**state, "SCONSFLAGS": "-j3"})
    assert "[opgen] distcc: a b (-j 3; the hosts take 8)\n" in from_sconsflags.stdout  # 4 per host by default


def test_distcc_missing_from_path_stops_with_status_2(spare_checkout, tmp_path):
    empty_bin = tmp_path / "empty-bin"
    empty_bin.mkdir()
    result = configure(spare_checkout, "--distcc=127.0.0.1/2", environment={"PATH": str(empty_bin)})
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip() == \
        "scons: *** --distcc needs distcc, which was not found on PATH (apt-get install distcc)"


@needs_distcc
@pytest.mark.parametrize("hosts, reason", [("127.0.0.1/x", 'bad multiplier "/x" in host specification'),
                                           ("127.0.0.1:port", 'invalid tcp port specification in "port"'),
                                           (",", "no hosts")])
def test_an_unreadable_host_list_stops_with_status_2(spare_checkout, tmp_path, hosts, reason):
    result = configure(spare_checkout, f"--distcc={hosts}", environment={"DISTCC_DIR": distcc_state_dir(tmp_path)})
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip() == f"scons: *** --distcc={hosts}: {reason}"
