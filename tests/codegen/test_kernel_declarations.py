"""Missing kernels without a build: the symbols api/symbols.py spells (checked against g++ and nm
on a probe), the declarations a group's headers and stubs share (gen/layers/declarations.py), which
undefined symbols are which declaration, and the stubs file (gen/layers/missing_kernels.py)."""
import os
import shutil
import subprocess

import pytest

from opgen.api import dispatcher
from opgen.api.symbols import demangled_type, symbol
from opgen.gen.engine.config import CodegenConfig
from opgen.gen.layers.declarations import DeclarationKind
from opgen.gen.group import GroupCodegen
from opgen.gen.layers.missing_kernels import Missing, render_missing_kernels, resolve, split_symbol
from opgen.model.dispatch_keys import DispatchKey
from opgen.model.loader import build_model
from opgen.yamlio import load_located

from generate_helpers import REPO_ROOT

YAML = """
- func: half(Tensor self, float factor=0.5) -> Tensor
  dispatch:
    CPU: half_cpu
    CUDA: half_cuda

- func: fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)
  dispatch:
    CPU: fill_

- func: fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)
  dispatch:
    CPU: fill_

- func: cube.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch:
    CPU, CUDA: cube_out

- func: cube(Tensor self) -> Tensor
  structured_delegate: cube.out

- func: sumsq(Tensor x) -> Tensor
"""
KEYS = (DispatchKey.CPU, DispatchKey.Meta, DispatchKey.CompositeImplicitAutograd)


def model_of(text):
    return build_model(load_located(text.encode(), "ops.yaml"), "ops.yaml", frozenset())


@pytest.fixture(scope="module")
def groups():
    model = model_of(YAML)
    config = CodegenConfig(keys=KEYS)
    return {g.name: GroupCodegen(g, model.indices, config) for g in model.operator_groups}


@pytest.mark.parametrize("cpp, expected", [
    ("const TensorBase&", "op::TensorBase const&"),
    ("TensorBase&", "op::TensorBase&"),
    ("int64_t", "long"),
    ("int8_t", "signed char"),
    ("IntArrayRef", "op::ArrayRef<long>"),
    ("std::optional<IntArrayRef>", "std::optional<op::ArrayRef<long> >"),
    ("std::string_view", "std::basic_string_view<char, std::char_traits<char> >"),
    ("const std::vector<TensorBase>&", "std::vector<op::TensorBase, std::allocator<op::TensorBase> > const&"),
    ("ArrayRef<std::optional<TensorBase>>", "op::ArrayRef<std::optional<op::TensorBase> >"),
    ("const std::optional<Scalar>&", "std::optional<op::Scalar> const&"),
])
def test_types_are_spelled_as_the_demangler_prints_them(cpp, expected):
    assert demangled_type(cpp) == expected


def _probe_types():
    """Every parameter type the dispatcher convention gives the schema types the runtime has."""
    schema_types = ["Tensor", "Tensor?", "Tensor[]", "Tensor?[]", "int", "int?", "int[]", "int[1]?", "SymInt[]",
                    "float", "float?", "float[]", "float[]?", "bool", "bool[]", "str", "str?", "str[]", "Scalar",
                    "Scalar?", "Scalar[]", "ScalarType", "ScalarType?", "Layout?", "Device?", "MemoryFormat?",
                    "Storage", "DeviceIndex"]
    args = ", ".join(f"{t} a{i}" for i, t in enumerate(schema_types))
    f = model_of(f"- func: probe({args}, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n    CPU: probe\n").functions[0]
    return [b.type for b in dispatcher.bindings(f)]


@pytest.mark.skipif(not (shutil.which("g++") and shutil.which("nm")), reason="needs g++ and nm")
def test_symbols_match_what_nm_prints_for_a_compiled_reference(tmp_path):
    types = _probe_types()
    source = tmp_path / "probe.cpp"
    declarations = "\n".join(f"void probe{i}({t});" for i, t in enumerate(types))
    uses = "\n".join(f"void* use{i} = reinterpret_cast<void*>(&native::probe{i});" for i in range(len(types)))
    source.write_text(f'#include "core/tensor.h"\n#include <string_view>\nnamespace op {{\nnamespace native {{\n'
                      f"{declarations}\n}}\n{uses}\n}}\n")
    obj = tmp_path / "probe.o"
    subprocess.run(["g++", "-std=c++17", "-c", "-I", os.path.join(REPO_ROOT, "csrc"), str(source), "-o", str(obj)],
                   check=True)
    undefined = subprocess.run(["nm", "-C", "-u", str(obj)], capture_output=True, text=True, check=True).stdout
    printed = {line.split("U ", 1)[1] for line in undefined.splitlines() if "op::native::probe" in line}
    assert printed == {symbol(f"op::native::probe{i}", [t]) for i, t in enumerate(types)}


def test_the_headers_and_the_stubs_share_one_list_of_declarations(groups):
    cube = groups["cube"].declarations
    assert [(d.kind, d.qualified) for d in cube] == [
        (DeclarationKind.META, "op::meta::structured_cube::meta"),
        (DeclarationKind.IMPL, "op::native::structured_cube_out::impl")]
    assert cube[1].symbol == "op::native::structured_cube_out::impl(op::TensorBase const&, op::TensorBase const&)"
    rendered = groups["cube"].render()
    assert "  void impl(const TensorBase& self, const TensorBase& out);" in rendered["ops/cube_native.h"]
    assert "  void meta(const TensorBase& self);" in rendered["ops/cube_meta.h"]
    # One kernel name, two C++ overloads: two declarations, each with its own symbol.
    fill = groups["fill"].declarations
    assert [d.symbol for d in fill] == ["op::native::fill_(op::TensorBase&, op::Scalar const&)",
                                        "op::native::fill_(op::TensorBase&, op::TensorBase const&)"]
    assert "TensorBase& fill_(TensorBase& self, const Scalar& value);" in groups["fill"].render()["ops/fill_native.h"]


def test_messages_name_the_keys_the_build_registers_and_the_operator(groups):
    half, half_cuda = groups["half"].declarations  # the header declares every key's kernel
    assert half.describe(KEYS) == "CPU kernel half_cpu of aten::half"
    assert half_cuda.describe(KEYS) == "CUDA kernel half_cuda of aten::half"
    assert half.location.line == 2
    [meta, impl] = groups["cube"].declarations
    assert impl.describe(KEYS) == "CPU kernel cube_out of aten::cube.out"
    assert impl.describe(KEYS + (DispatchKey.CUDA,)) == "CPU, CUDA kernel cube_out of aten::cube.out"
    assert meta.describe(KEYS) == "Meta kernel structured_cube::meta of aten::cube.out"
    [sumsq] = groups["sumsq"].declarations
    assert sumsq.describe(KEYS) == "CompositeImplicitAutograd kernel sumsq of aten::sumsq"


def test_undefined_symbols_resolve_to_declarations_by_exact_signature(groups):
    fill = groups["fill"].declarations
    tensor_overload = "op::native::fill_(op::TensorBase&, op::TensorBase const&)"
    found, unresolved = resolve("fill", fill, {tensor_overload, "op::native::unrelated_helper(long)"})
    assert [m.declaration.symbol for m in found] == [tensor_overload] and unresolved == []
    # A spelling api/symbols.py does not produce: the one declaration of that name and arity left...
    found, unresolved = resolve("half", groups["half"].declarations, {"op::native::half_cpu(op::TensorBase const&, op::Double)"})
    assert [m.declaration.kernel for m in found] == ["half_cpu"] and unresolved == []
    # ... and when two are left, it cannot tell which: unresolved, never a guess.
    found, unresolved = resolve("fill", fill, {"op::native::fill_(op::Tensor&, op::Other const&)"})
    assert found == [] and [u.symbol for u in unresolved] == ["op::native::fill_(op::Tensor&, op::Other const&)"]
    assert split_symbol("op::native::f(std::optional<op::ArrayRef<long> >, std::vector<int, std::allocator<int> >)") == \
        ("op::native::f", 2)
    assert split_symbol("op::native::f()") == ("op::native::f", 0)


def test_the_stubs_file_defines_each_missing_declaration_once_in_a_stable_order(groups):
    missing = [Missing("half", groups["half"].declarations[0])] + [Missing("cube", d) for d in groups["cube"].declarations]
    text = render_missing_kernels(missing, KEYS)
    assert text == render_missing_kernels(list(reversed(missing)), KEYS)
    assert text.index('#include "ops/cube_native.h"') < text.index('#include "ops/half_native.h"')
    assert ("TensorBase native::half_cpu(const TensorBase& self, double factor) {\n"
            '  throw Error("CPU kernel half_cpu of aten::half is not implemented");\n}') in text
    assert "void meta::structured_cube::meta(const TensorBase& self) {" in text
    assert "void native::structured_cube_out::impl(const TensorBase& self, const TensorBase& out) {" in text
    assert "3 stubbed." in text
    # A kernel two groups declare alike is defined once.
    twice = render_missing_kernels(missing + [Missing("other", groups["half"].declarations[0])], KEYS)
    assert twice.count("native::half_cpu(") == 1 and '#include "ops/other_native.h"' in twice
