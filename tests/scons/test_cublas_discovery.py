"""Where --cublas finds cuBLAS (opgen/scons/toolset/cublas_discovery.py), over fake trees:
$CUBLAS_HOME, the CUDA toolkit's layout, and pip's wheels (CUDA 13's nvidia/cu13, CUDA 12's
nvidia/cublas), with and without an unversioned libcublas.so."""
from opgen.scons.toolset.cublas_discovery import find_cublas, header_version, link_name


def cublas_tree(root, lib="lib64", names=("libcublas.so.13",), major=13):
    """include/cublas_v2.h, include/cublas_api.h (the version) and the library files under ``lib``."""
    (root / "include").mkdir(parents=True, exist_ok=True)
    (root / "include" / "cublas_v2.h").write_text("#include \"cublas_api.h\"\n")
    (root / "include" / "cublas_api.h").write_text(
        f"#define CUBLAS_VER_MAJOR {major}\n#define CUBLAS_VER_MINOR 1\n#define CUBLAS_VER_PATCH 3\n")
    (root / lib).mkdir(parents=True, exist_ok=True)
    for name in names:
        (root / lib / name).write_bytes(b"")
    return root


def test_the_toolkit_is_looked_in_first(tmp_path):
    toolkit = cublas_tree(tmp_path / "cuda", names=("libcublas.so", "libcublas.so.13"))
    wheel = cublas_tree(tmp_path / "site" / "nvidia" / "cu13", lib="lib")
    found = find_cublas(cuda_home=str(toolkit), nvidia_dirs=[str(wheel.parent)], cuda_version="13.0").found
    assert found.origin == "CUDA toolkit" and found.link_name == "cublas" and found.version == "13.1.3"
    assert found.include_dir == str(toolkit / "include") and found.lib_dir == str(toolkit / "lib64")
    assert found.describe() == f"cuBLAS 13.1.3 (CUDA toolkit: {toolkit / 'lib64'})"


def test_the_cuda_13_wheel_links_its_versioned_library_by_name(tmp_path):
    toolkit = tmp_path / "cuda"
    (toolkit / "include").mkdir(parents=True)  # a toolkit without cuBLAS
    wheel = cublas_tree(tmp_path / "site" / "nvidia" / "cu13", lib="lib", names=("libcublas.so.13", "libcublasLt.so.13"))
    search = find_cublas(cuda_home=str(toolkit), nvidia_dirs=[str(wheel.parent)], cuda_version="13.0")
    assert search.found.origin == "pip" and search.found.link_name == ":libcublas.so.13"
    assert search.found.lib_dir == str(wheel / "lib") and search.found.include_dir == str(wheel / "include")
    assert search.looked == (f"{toolkit} (CUDA toolkit: no cublas_v2.h)",)


def test_the_cuda_12_wheel_layout(tmp_path):
    wheel = cublas_tree(tmp_path / "nvidia" / "cublas", lib="lib", names=("libcublas.so.12",), major=12)
    found = find_cublas(nvidia_dirs=[str(tmp_path / "nvidia")], cuda_version="12.4").found
    assert found.origin == "pip" and found.link_name == ":libcublas.so.12" and found.lib_dir == str(wheel / "lib")


def test_a_cublas_of_another_cuda_major_is_passed_over(tmp_path):
    cu12 = cublas_tree(tmp_path / "nvidia" / "cublas", lib="lib", names=("libcublas.so.12",), major=12)
    cu13 = cublas_tree(tmp_path / "nvidia" / "cu13", lib="lib")
    assert find_cublas(nvidia_dirs=[str(tmp_path / "nvidia")], cuda_version="13.0").found.lib_dir == str(cu13 / "lib")
    search = find_cublas(nvidia_dirs=[str(tmp_path / "nvidia")], cuda_version="12.4")
    assert search.found.lib_dir == str(cu12 / "lib")
    assert search.looked == (f"{cu13} (pip: cuBLAS 13.1.3 needs CUDA 13, nvcc is CUDA 12)",)


def test_cublas_home_is_the_only_place_looked_when_set(tmp_path):
    toolkit = cublas_tree(tmp_path / "cuda", names=("libcublas.so",))
    home = cublas_tree(tmp_path / "mine", lib="lib", names=("libcublas.so",))
    found = find_cublas(cublas_home=str(home), cuda_home=str(toolkit)).found
    assert found.origin == "CUBLAS_HOME" and found.lib_dir == str(home / "lib")
    empty = tmp_path / "empty"
    empty.mkdir()
    search = find_cublas(cublas_home=str(empty), cuda_home=str(toolkit))
    assert search.found is None
    assert search.why_not() == f"cuBLAS was not found; looked in {empty} (CUBLAS_HOME: no cublas_v2.h)"


def test_nothing_found_says_where_it_looked(tmp_path):
    toolkit = tmp_path / "cuda"
    (toolkit / "include").mkdir(parents=True)
    (toolkit / "include" / "cublas_v2.h").write_text("")
    search = find_cublas(cuda_home=str(toolkit), nvidia_dirs=[str(tmp_path / "no-such-dir")], cuda_version="13.0")
    assert search.found is None
    assert search.why_not() == ("cuBLAS was not found; looked in "
                                f"{toolkit} (CUDA toolkit: no libcublas.so in {toolkit / 'lib64'} or {toolkit / 'lib'}); "
                                "pip's nvidia-cublas (not installed in the Python running SCons)")


def test_link_name_and_header_version(tmp_path):
    assert link_name(str(tmp_path)) is None
    (tmp_path / "libcublas.so.12").write_bytes(b"")
    (tmp_path / "libcublas.so.13").write_bytes(b"")
    (tmp_path / "libcublas.so.13.1.0.3").write_bytes(b"")
    assert link_name(str(tmp_path)) == ":libcublas.so.13"
    (tmp_path / "libcublas.so").write_bytes(b"")
    assert link_name(str(tmp_path)) == "cublas"
    assert header_version(str(tmp_path)) == "?"
