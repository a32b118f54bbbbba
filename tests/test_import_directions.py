"""opgen's packages import in one direction: model -> api -> gen, with cache/ (content addressing)
beside the generators and below them, and scons/ (the SCons plugin) above everything; every
module imports on its own. Only scons/ imports SCons, and its generic toolset (scons/toolset)
imports nothing of opgen but itself: it knows nothing of operators.

Each module is imported in a fresh interpreter (so one module's import never hides another's
missing one) and the opgen modules it loaded are checked against ALLOWED; the import statements
inside functions, which an import does not run, are checked from the source.
"""
import ast
import json
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(REPO, "opgen")
BASE = {"opgen", "opgen.errors", "opgen.fingerprint", "opgen.yamlio", "opgen.writer", "opgen.runtime_layers",
        "opgen.project", "opgen.collector"}
# What each room may import, besides the base modules and itself.
ALLOWED = {
    "model": set(),
    "api": {"model"},
    "cache": {"model"},                     # never the generators: keys are computed from the model
    "gen": {"model", "api", "cache"},
    "selection": {"model", "api", "cache", "gen"},  # selective builds: closures over the generated code
    "": {"model", "api", "cache", "gen", "selection"},   # cli.py, cache_cli.py, select_cli.py, link_check.py, __main__.py
    "scons": {"model", "api", "cache", "gen", "selection", ""},  # the SCons plugin: a front end, like the CLI
}
TOOLSET = "opgen.scons.toolset"
# Inside gen/, the engine knows no layer: it imports neither gen/layers nor the modules that
# assemble them (type annotations under `if TYPE_CHECKING:` aside).
ENGINE = "opgen.gen.engine"


def _modules() -> dict[str, str]:
    """{module: its file} of every module of the package."""
    found = {}
    for directory, _, files in os.walk(PACKAGE):
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                module = os.path.relpath(path, REPO)[:-3].replace(os.sep, ".")
                found[module[: -len(".__init__")] if module.endswith(".__init__") else module] = path
    return found


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and module in _packages()) else ""


def _packages() -> set[str]:
    return {f"opgen.{name}" for name in os.listdir(PACKAGE) if os.path.isfile(os.path.join(PACKAGE, name, "__init__.py"))}


def _allowed(importer: str, imported: str) -> bool:
    if importer == TOOLSET or importer.startswith(TOOLSET + "."):
        return imported in ("opgen", "opgen.scons") or imported == TOOLSET or imported.startswith(TOOLSET + ".")
    if imported in BASE or imported == "opgen.__main__":
        return True
    room, target = _room(importer), _room(imported)
    return target == room or target in ALLOWED[room]


FILES = _modules()
MODULES = sorted(m for m in FILES if m != "opgen.__main__")


def test_every_room_is_known():
    assert {_room(m) for m in MODULES} <= set(ALLOWED), sorted({_room(m) for m in MODULES} - set(ALLOWED))


@pytest.mark.parametrize("module", MODULES)
def test_module_imports_alone_and_only_downward(module):
    probe = f"import importlib, json, sys; importlib.import_module({module!r}); " \
            "print(json.dumps(sorted(m for m in sys.modules if m == 'opgen' or m.startswith('opgen.'))))"
    run = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, f"{module} does not import on its own:\n{run.stderr[-2000:]}"
    loaded = json.loads(run.stdout.strip().splitlines()[-1])
    wrong = [m for m in loaded if not _allowed(module, m)]
    assert not wrong, f"{module} ({_room(module) or 'top level'}) loads {wrong}"


@pytest.mark.parametrize("module", MODULES)
def test_imports_inside_functions_point_downward_too(module):
    with open(FILES[module], encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), FILES[module])
    package = module if FILES[module].endswith("__init__.py") else module.rsplit(".", 1)[0]
    wrong = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [base] if base != "opgen" else [f"opgen.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            continue
        wrong += [t for t in targets if (t == "opgen" or t.startswith("opgen.")) and not _allowed(module, t)]
    assert not wrong, f"{module} imports {sorted(set(wrong))}"


def _imports_scons(path: str) -> bool:
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    names = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    names += [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and not node.level]
    return any(name == "SCons" or name.startswith("SCons.") for name in names)


def test_only_the_plugin_imports_scons():
    offenders = [m for m in MODULES if _room(m) != "scons" and _imports_scons(FILES[m])]
    assert not offenders, f"outside opgen.scons, these import SCons: {offenders}"


def _runtime_imports(tree: ast.Module, package: str) -> list[str]:
    """The opgen modules a module's import statements name, outside `if TYPE_CHECKING:` blocks."""
    found = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            return
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.extend([base] + [f"{base}.{alias.name}" for alias in node.names])
        elif isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)
    visit(tree)
    return found


@pytest.mark.parametrize("module", [m for m in MODULES if m == ENGINE or m.startswith(ENGINE + ".")])
def test_the_engine_imports_no_layer(module):
    with open(FILES[module], encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), FILES[module])
    package = module if FILES[module].endswith("__init__.py") else module.rsplit(".", 1)[0]
    wrong = [name for name in _runtime_imports(tree, package)
             if name.startswith("opgen.gen.") and name in FILES and not name.startswith(ENGINE)]
    assert not wrong, f"{module} imports {sorted(set(wrong))}"
