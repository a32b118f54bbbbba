"""``python -m opgen model``: exit codes, messages on stderr, and a deterministic --json dump."""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys

import pytest

from opgen import cli

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPO_YAML = os.path.join(REPO_ROOT, "yaml", "native_functions.yaml")
FUNCTION_KEYS = {"schema", "kind", "base", "structured", "structured_delegate", "view", "generated", "variants", "kernels"}
KINDS = {"functional", "inplace", "out", "mutable", "scratch"}


def run_opgen(*args, hashseed="0"):
    env = dict(os.environ, PYTHONHASHSEED=hashseed)
    env.pop("OPGEN_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "opgen", "model", *args], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def reordered_copy(yaml_path: str, directory) -> str:
    """The yaml with its top-level entries shuffled (fixed seed), tags.yaml copied beside it."""
    with open(yaml_path, encoding="utf-8") as handle:
        lines = handle.read().splitlines(keepends=True)
    header, entries = [], []
    for line in lines:
        if line.startswith("- "):
            entries.append([line])
        elif entries:
            entries[-1].append(line)
        else:
            header.append(line)
    entries = ["".join(e) if e[-1].endswith("\n") else "".join(e) + "\n" for e in entries]
    shuffled = entries[:]
    random.Random(2024).shuffle(shuffled)
    assert shuffled != entries
    target = directory / "native_functions.yaml"
    target.write_text("".join(header) + "".join(shuffled), encoding="utf-8")
    shutil.copy(os.path.join(os.path.dirname(yaml_path), "tags.yaml"), directory / "tags.yaml")
    return str(target)


@pytest.fixture(scope="module")
def json_dump(largest_yaml):
    result = run_opgen(largest_yaml, "--json", "--no-cache", hashseed="0")
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_valid_yaml_prints_a_summary_and_exits_0():
    result = run_opgen(REPO_YAML, "--no-cache")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    out = result.stdout
    assert out.splitlines()[0] == REPO_YAML
    for label in ("functions", "operator groups", "variant groups", "structured", "kernels per dispatch key:"):
        assert re.search(rf"^\s+{label}", out, re.M), label
    assert re.search(r"^\s+CPU\s+\d+$", out, re.M)


def test_invalid_yaml_prints_file_line_errors_and_exits_2(yaml_files):
    path = yaml_files.write("""\
        - func: foo(Tensor self) -> Tensor
          dispatch:
            CPUU: foo
        - func: bar(Tensor self,Tensor other) -> Tensor
        """)
    result = run_opgen(path, "--tags", yaml_files.tags, "--no-cache")
    assert result.returncode == 2
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    first, second = result.stderr.splitlines()
    assert first.startswith(f"{path}:3: error: unknown dispatch key 'CPUU' for kernel foo; did you mean 'CPU'?")
    assert second == f"{path}:4: error: schema is not in canonical form; write it as 'bar(Tensor self, Tensor other) -> Tensor'"


def test_yaml_syntax_error_exits_2_without_traceback(yaml_files):
    path = yaml_files.write("- func: foo(Tensor self) -> Tensor\n  variants: [function\n")
    result = run_opgen(path, "--no-cache")
    assert result.returncode == 2
    assert re.match(rf"^{re.escape(path)}:\d+: error: yaml syntax error", result.stderr)
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("which", ["yaml", "tags"])
def test_missing_file_exits_2(tmp_path, which):
    missing = str(tmp_path / "missing.yaml")
    args = [missing] if which == "yaml" else [REPO_YAML, "--tags", missing]
    result = run_opgen(*args, "--no-cache")
    assert result.returncode == 2
    assert f"no such file: {missing}" in result.stderr
    assert "Traceback" not in result.stderr


def test_tags_default_to_the_file_beside_the_yaml(yaml_files, tmp_path):
    path = yaml_files.write("- func: foo(Tensor self) -> Tensor\n  tags: core\n")
    assert run_opgen(path, "--no-cache").returncode == 0
    os.remove(yaml_files.tags)
    result = run_opgen(path, "--no-cache")
    assert result.returncode == 2
    assert f"{path}:2: error: unknown tag 'core'" in result.stderr


def test_json_has_exactly_the_documented_shape(json_dump):
    document = json.loads(json_dump)
    assert set(document) == {"functions", "variant_groups", "standalone"}
    functions = document["functions"]
    assert list(functions) == sorted(functions)
    for name, f in functions.items():
        assert set(f) == FUNCTION_KEYS, name
        assert isinstance(f["schema"], str) and f["schema"].split("(")[0] == name.split("::")[-1]
        assert f["kind"] in KINDS
        assert isinstance(f["base"], str) and f["base"]
        assert isinstance(f["structured"], bool) and isinstance(f["view"], bool) and isinstance(f["generated"], bool)
        assert f["structured_delegate"] is None or f["structured_delegate"] in functions
        assert f["variants"] == sorted(f["variants"]) and set(f["variants"]) <= {"function", "method"}
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in f["kernels"].items())
    groups = document["variant_groups"]
    assert groups == sorted(groups) and all(g == sorted(g) for g in groups)
    standalone = document["standalone"]
    assert standalone == sorted(standalone)
    grouped = [n for g in groups for n in g] + standalone
    assert sorted(grouped) == sorted(functions)  # every function in exactly one place


def test_json_dump_matches_the_model_counts(json_dump, largest_yaml):
    document = json.loads(json_dump)
    if largest_yaml == REPO_YAML:
        pytest.skip("counts are for PyTorch's yaml")
    assert (len(document["functions"]), len(document["variant_groups"]), len(document["standalone"])) == (3101, 1105, 586)
    assert sum(f["generated"] for f in document["functions"].values()) == 517


@pytest.mark.parametrize("hashseed", ["1", "2"])
def test_json_is_byte_identical_under_other_hash_seeds(json_dump, largest_yaml, hashseed):
    result = run_opgen(largest_yaml, "--json", "--no-cache", hashseed=hashseed)
    assert result.returncode == 0, result.stderr
    assert result.stdout == json_dump


def test_json_is_byte_identical_when_entries_are_reordered(json_dump, largest_yaml, tmp_path):
    reordered = reordered_copy(largest_yaml, tmp_path)
    result = run_opgen(reordered, "--json", "--no-cache", hashseed="1")
    assert result.returncode == 0, result.stderr
    assert result.stdout == json_dump
    assert str(tmp_path) not in result.stdout  # no source path in the JSON ...
    summary = run_opgen(reordered, "--no-cache")
    assert summary.stdout.splitlines()[0] == reordered  # ... only in the plain summary


def test_internal_error_exits_1_without_traceback(monkeypatch, capsys):
    def boom(args):
        raise RuntimeError("simulated bug")
    monkeypatch.delenv("OPGEN_DEBUG", raising=False)
    monkeypatch.setattr(cli, "_run_model", boom)
    assert cli.main(["model", REPO_YAML]) == 1
    err = capsys.readouterr().err
    assert "opgen: internal error: RuntimeError: simulated bug" in err
    assert "Traceback" not in err


def test_usage_error_exits_2(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["model"])
    assert info.value.code == 2
    assert "error:" in capsys.readouterr().err


def run_generate(*args):
    env = dict(os.environ)
    env.pop("OPGEN_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "opgen", "generate", *args], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("keys, message", [
    ("CPU,cuda", "unknown dispatch key 'cuda'; did you mean 'CUDA'?"),
    ("CPUU", "unknown dispatch key 'CPUU'; did you mean 'CPU'?"),
    ("Bogus", "unknown dispatch key 'Bogus'; known keys: CPU, CUDA"),
])
def test_unknown_keys_option_suggests_the_closest_key(tmp_path, keys, message):
    result = run_generate(REPO_YAML, "--out", str(tmp_path / "gen"), "--keys", keys, "--no-cache")
    assert result.returncode == 2
    assert f"argument --keys: {message}" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "gen").exists()


# Inputs that are not yaml text: (bytes, the line of the first bad byte, what the message says).
NOT_TEXT = [
    pytest.param(b"- func: foo(Tensor self) -> Tensor\n- func: bar(Tensor\x00 self) -> Tensor\n", 2,
                 "contains a NUL byte", id="nul-byte"),
    pytest.param(b"- func: foo(Tensor self) -> Tensor\n\n- func: caf\xe9(Tensor self) -> Tensor\n", 3,
                 "not UTF-8 text: byte 0xe9 cannot be decoded", id="latin-1"),
    pytest.param(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01", 1, "not UTF-8 text", id="binary"),
    pytest.param(b"\x7fELF\x02\x01\x01\x00\x00\x00\n\xff", 1, "contains a NUL byte", id="binary-nul-first"),
    pytest.param(b"- func: foo(Tensor self) -> Tensor\n  variants: \x07function\n", 2,
                 "contains the character U+0007", id="control-character"),
]


def _assert_clear_error(result, path, line, fragment):
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert result.stderr.startswith(f"{path}:{line}: error: {fragment}"), result.stderr
    assert len(result.stderr.splitlines()) == 1
    for leak in ("Traceback", "unicode string", "#x0000", "unacceptable character"):
        assert leak not in result.stderr


@pytest.mark.parametrize("data, line, fragment", NOT_TEXT)
def test_yaml_that_is_not_text_exits_2_naming_file_and_line(yaml_files, data, line, fragment):
    with open(yaml_files.yaml, "wb") as handle:
        handle.write(data)
    _assert_clear_error(run_opgen(yaml_files.yaml, "--tags", yaml_files.tags, "--no-cache"), yaml_files.yaml, line, fragment)


@pytest.mark.parametrize("data, line, fragment", NOT_TEXT)
def test_tags_yaml_that_is_not_text_exits_2_naming_file_and_line(yaml_files, data, line, fragment):
    path = yaml_files.write("- func: foo(Tensor self) -> Tensor\n")
    with open(yaml_files.tags, "wb") as handle:
        handle.write(data)
    _assert_clear_error(run_opgen(path, "--tags", yaml_files.tags, "--no-cache"), yaml_files.tags, line, fragment)


@pytest.mark.parametrize("data, line, fragment", NOT_TEXT)
def test_backend_yaml_that_is_not_text_exits_2_naming_file_and_line(tmp_path, data, line, fragment):
    backend = tmp_path / "xla_native_functions.yaml"
    backend.write_bytes(data)
    result = run_opgen(REPO_YAML, "--backend-yaml", str(backend), "--no-cache")
    _assert_clear_error(result, str(backend), line, fragment)


def test_nul_byte_is_reported_through_the_parse_cache_too(yaml_files, tmp_path):
    """The cached loader reparses edited entries one by one; a NUL in an edit still gets its line."""
    from opgen.cache.parse_cache import load_model_cached
    from opgen.errors import OpgenError

    cache = str(tmp_path / "cache")
    path = yaml_files.write("- func: foo(Tensor self) -> Tensor\n- func: bar(Tensor self) -> Tensor\n")
    load_model_cached(path, yaml_files.tags, cache_dir=cache)
    with open(path, "ab") as handle:
        handle.write(b"- func: baz(Tensor self) -> Tensor\n  variants: fun\x00ction\n")
    with pytest.raises(OpgenError) as info:
        load_model_cached(path, yaml_files.tags, cache_dir=cache)
    assert str(info.value) == f"{path}:4: error: contains a NUL byte, so it is not yaml text (is it a binary file?)"
# ----- the command line as a whole, `ops`, `generate --out` -----

def subcommands():
    action = next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {choice.dest: choice.help for choice in action._choices_actions}


def test_help_lists_every_subcommand_with_one_line():
    names = subcommands()
    assert {"model", "generate", "cache", "init", "ops"} <= set(names)
    env = dict(os.environ, COLUMNS="100")
    result = subprocess.run([sys.executable, "-m", "opgen", "--help"], cwd=REPO_ROOT, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: python -m opgen ")
    lines = result.stdout.splitlines()
    for name, help_text in names.items():
        assert help_text, f"{name} has no description"
        assert any(line.split() == [name, *help_text.split()] for line in lines), (name, result.stdout)


@pytest.mark.parametrize("argv0, prog", [("/venv/bin/opgen", "opgen"), ("/x/opgen/__main__.py", "python -m opgen")])
def test_prog_is_opgen_as_the_console_script(monkeypatch, argv0, prog):
    monkeypatch.setattr(sys, "argv", [argv0])
    assert cli.build_parser().prog == prog


def run_ops(capsys, *args):
    code = cli.main(["ops", *args, "--no-cache"])
    out, err = capsys.readouterr()
    return code, out, err


def test_ops_lists_each_overload_with_variants_kernels_and_file_line(capsys, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)  # the default yaml: yaml/native_functions.yaml of the current directory
    code, out, err = run_ops(capsys, "add")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "add  (5 overloads)"
    rows = {line.split()[0]: line for line in lines[1:6]}
    assert set(rows) == {"add.Scalar", "add.Tensor", "add.out", "add_.Scalar", "add_.Tensor"}
    assert re.search(r"add\.out +function +yaml/native_functions\.yaml:\d+ +CPU: add_out", rows["add.out"])
    assert "function, method" in rows["add.Tensor"] and "structured_delegate: add.out" in rows["add.Tensor"]
    # Aligned: every row's FILE:LINE starts in one column.
    assert len({line.index("yaml/") for line in rows.values()}) == 1
    assert lines[-1] == "1 operator group, 5 overloads"


def test_ops_patterns_match_base_or_full_names(capsys):
    code, out, _ = run_ops(capsys, "add*", "--yaml", REPO_YAML)
    assert code == 0 and "add  (" in out and "addmm  (" in out
    code, out, _ = run_ops(capsys, "add.out", "--yaml", REPO_YAML)
    assert code == 0 and out.splitlines()[:2] == ["add  (1 overload)", out.splitlines()[1]]
    assert out.splitlines()[1].split()[0] == "add.out"


def test_ops_json_is_deterministic_and_complete(capsys):
    code, first, _ = run_ops(capsys, "mul*", "--yaml", REPO_YAML, "--json")
    assert code == 0
    code, second, _ = run_ops(capsys, "mul*", "--yaml", REPO_YAML, "--json")
    assert first == second
    document = json.loads(first)
    overload = next(o for g in document["groups"] for o in g["overloads"] if o["name"] == "mul.out")
    assert set(overload) == {"name", "schema", "variants", "kernels", "structured_delegate", "location"}
    assert overload["kernels"]["CPU"] == "mul_out" and re.fullmatch(r".*native_functions\.yaml:\d+", overload["location"])


def test_ops_unknown_name_exits_1_with_a_suggestion(capsys):
    code, out, err = run_ops(capsys, "sacle", "--yaml", REPO_YAML)
    assert code == 1 and out == ""
    assert "no operator matches 'sacle'; did you mean" in err
    code, _, err = run_ops(capsys, "zzzqqq", "--yaml", REPO_YAML)
    assert code == 1 and err.strip() == "opgen ops: no operator matches 'zzzqqq'"


def test_ops_without_a_yaml_here_exits_2(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    code, _, err = run_ops(capsys)
    assert code == 2 and "pass --yaml FILE" in err


def test_generate_into_a_file_exits_2_with_a_message(capsys, tmp_path):
    out = tmp_path / "out.txt"
    out.write_text("not a directory")
    with pytest.raises(SystemExit) as info:
        cli.main(["generate", REPO_YAML, "--out", str(out), "--no-cache"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert f"{out} exists and is not a directory" in err and "internal error" not in err
