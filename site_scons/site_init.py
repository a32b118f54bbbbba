"""Make the opgen package (next to SConstruct) importable from SConscripts and site tools; keep
an unchanged .sconsign as it is (sconsign_unchanged) and read it faster (sconsign_fast_load);
decide whether a target is out of date once while nothing is built (decide_once); describe an
executor and find its side effects once (executor_memos); iterate $TARGETS and $SOURCES in
linear time (target_lists); keep the garbage collector off the nodes and
stored signatures that live until the end (resident_objects); ask each compiler its version
once (compiler_probes)."""
import os
import sys

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

import sconsign_unchanged  # noqa: E402  (site_scons is on sys.path while this file runs)

sconsign_unchanged.install()

import sconsign_fast_load  # noqa: E402

sconsign_fast_load.install()

import decide_once  # noqa: E402

decide_once.install()

import executor_memos  # noqa: E402

executor_memos.install()

import target_lists  # noqa: E402

target_lists.install()

import resident_objects  # noqa: E402

resident_objects.install()

import compiler_probes  # noqa: E402

compiler_probes.install()
