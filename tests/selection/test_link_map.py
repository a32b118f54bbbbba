"""lld's link map read into what each object contributes to the library (opgen/link_map.py)."""
import os
import shutil
import subprocess

import pytest

from opgen import link_map
from opgen.scons.flags import COMMON_CXXFLAGS

MAP = """\
             VMA              LMA     Size Align Out     In      Symbol
             2c0              2c0      100     8 .dynsym
             2c0              2c0      100     8         <internal>:(.dynsym)
            1000             1000       70    16 .text
            1000             1000       20    16         build/obj/core/a.os:(.text._Z1fv)
            1000             1000       20     1                 f()
            1020             1020       30    16         build/obj/gen/libopgen_shard03.a(ops/add_unit.os):(.text._Z1gv)
            1050             1050       10    16         build/obj/core/a.os:(.text._Z1hv)
               0                0       40     1 .comment
               0                0       40     1         build/obj/core/a.os:(.comment)
"""


def test_objects_get_their_kept_sections_and_the_rest_is_the_linkers():
    parsed = link_map.parse(MAP.splitlines(), "/top")
    assert parsed.objects == {"/top/build/obj/core/a.os": 0x30, "/top/build/obj/gen/ops/add_unit.os": 0x30}
    assert parsed.allocated_bytes == 0x170 and parsed.linker_bytes == 0x170 - 0x60  # .comment is not allocated


def test_another_format_reads_as_none(tmp_path):
    assert link_map.parse(["Archive member included to satisfy reference by file (symbol)"]) is None
    assert link_map.read(str(tmp_path / "absent.map")) is None


@pytest.mark.skipif(shutil.which("g++") is None or shutil.which("ld.lld") is None, reason="needs g++ and lld")
def test_a_real_map_adds_up_to_the_allocated_sections_and_drops_what_gc_collected(tmp_path):
    objects = []
    for name, body in (("a", "int a1(long x) { return int(x) * 3; }\n"
                              "int a2(long x) { return int(x) + 2; }\n"),
                       ("b", "int b1(long x) { return int(x) - 1; }\n")):
        (tmp_path / f"{name}.cpp").write_text(body)
        subprocess.run(["g++", *COMMON_CXXFLAGS, "-O2", "-c", f"{name}.cpp", "-o", f"{name}.os"], cwd=tmp_path, check=True)
        objects.append(f"{name}.os")
    (tmp_path / "hide.ver").write_text("{ local: extern \"C++\" { \"a2(long)\"; }; };\n")
    subprocess.run(["g++", "-fuse-ld=lld", "-shared", "-Wl,--gc-sections", "-Wl,--version-script=hide.ver",
                    "-Wl,-Map,lib.map", *objects, "-o", "lib.so"], cwd=tmp_path, check=True)
    parsed = link_map.read(str(tmp_path / "lib.map"), str(tmp_path))
    assert {os.path.join(str(tmp_path), o) for o in objects} <= set(parsed.objects)  # beside the C runtime's crt*.o
    assert sum(parsed.objects.values()) + parsed.linker_bytes == parsed.allocated_bytes
    text = (tmp_path / "lib.map").read_text()
    assert "a1(long)" in text and "a2(long)" not in text  # hidden and unreferenced: collected
