"""Compiled templates kept beside the codegen cache: a later process loads them instead of
compiling; a damaged file, an unusable directory or a failed write only means compiling (jinja
itself compiles a template whose source changed)."""
import glob
import os

import jinja2
import pytest

from opgen.gen.engine import render


@pytest.fixture
def fresh_environment():
    """Each use of environment() below is a new process's first render."""
    def fresh(directory):
        render.environment.cache_clear()
        render.keep_compiled_templates(directory)
        return render.environment()
    yield fresh
    render.environment.cache_clear()
    render.keep_compiled_templates(None)


def test_a_later_process_loads_compiled_templates(fresh_environment, tmp_path, monkeypatch):
    directory = str(tmp_path / "templates")
    first = fresh_environment(directory).get_template("umbrella.h.j2")
    assert glob.glob(os.path.join(directory, "*"))
    monkeypatch.setattr(jinja2.Environment, "compile", lambda *args, **kwargs: pytest.fail("compiled again"))
    second = fresh_environment(directory).get_template("umbrella.h.j2")
    context = {"description": "every operator", "headers": ["ops/add.h", "ops/mul.h"]}
    assert second.render(**context) == first.render(**context) == '// every operator\n#pragma once\n#include "ops/add.h"\n#include "ops/mul.h"\n'


def test_a_damaged_file_or_an_unusable_directory_only_means_compiling(fresh_environment, tmp_path):
    directory = str(tmp_path / "templates")
    fresh_environment(directory).get_template("umbrella.h.j2")
    for path in glob.glob(os.path.join(directory, "*")):
        with open(path, "wb") as handle:
            handle.write(b"garbage")
    assert fresh_environment(directory).get_template("umbrella.h.j2") is not None
    blocked = tmp_path / "a-file"  # where the directory would be: it cannot be made
    blocked.write_text("")
    assert fresh_environment(str(blocked)).get_template("umbrella.h.j2") is not None


def test_a_failed_write_only_means_compiling_again(fresh_environment, tmp_path, monkeypatch):
    def no_space(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(jinja2.bccache.tempfile, "NamedTemporaryFile", no_space)
    directory = str(tmp_path / "templates")
    assert fresh_environment(directory).get_template("umbrella.h.j2") is not None
    assert glob.glob(os.path.join(directory, "*")) == []
