"""External backend yaml (pytorch/xla's format): one test per validation rule, kernels, and the real file.

Each rule case is a small backend yaml read against a small model.  The line the error must point
at is marked with a trailing ``#<`` comment, as in test_validation_rules.py.
"""
import json
import os

import pytest

from opgen import cli
from opgen.errors import OpgenError
from opgen.model import BackendYaml, DispatchKey, OperatorName, load_model, parse_backend_yaml

MARK = "#<"
NATIVE_FUNCTIONS = """
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  dispatch:
    CPU: add
- func: add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
  dispatch:
    CPU: add_
- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CPU: add_out
- func: relu(Tensor self) -> Tensor
  dispatch:
    CPU: relu
- func: narrow_copy(Tensor self, int dim, SymInt start, SymInt length) -> Tensor
  dispatch:
    CPU: narrow_copy
"""
HEADER = "# an external backend\nbackend: XLA\ncpp_namespace: torch_xla\n"


@pytest.fixture
def model(yaml_files):
    return yaml_files.load(NATIVE_FUNCTIONS)


def backend_errors(text: str, model) -> OpgenError:
    with pytest.raises(OpgenError) as info:
        parse_backend_yaml(text, model, "xla.yaml")
    return info.value


CASES = [
    # --- the file and its keys ----------------------------------------------------------------
    pytest.param("# backend\n- backend: XLA  #<\n", "a backend yaml is a mapping", id="not-a-mapping"),
    pytest.param(HEADER + "supported:\n  - relu\n  oops: [  #<\n", "yaml syntax error", id="yaml-syntax-error"),
    pytest.param(HEADER + "supported: [relu]\nsupported: [add.Tensor]  #<\n", "duplicate key 'supported' (first at line 4)",
                 id="duplicate-yaml-key"),
    pytest.param(HEADER + "suported:  #<\n  - relu\n", "unknown key 'suported'; did you mean 'supported'?", id="unknown-key-close"),
    pytest.param(HEADER + "lowering: []  #<\n", "unknown key 'lowering'; known keys: backend, cpp_namespace", id="unknown-key"),

    # --- backend --------------------------------------------------------------------------------
    pytest.param("# no backend\ncpp_namespace: torch_xla  #<\nsupported: [relu]\n", "missing 'backend:'; give the dispatch key",
                 id="missing-backend"),
    pytest.param("# empty\nbackend: ''  #<\ncpp_namespace: torch_xla\n", "'backend' is empty; give the dispatch key",
                 id="empty-backend"),
    pytest.param("# list\nbackend: [XLA]  #<\ncpp_namespace: torch_xla\n", "'backend' must be a string, got a list",
                 id="backend-not-a-string"),
    pytest.param("# case\nbackend: xla  #<\ncpp_namespace: torch_xla\n", "backend 'xla' is not a backend dispatch key; did you mean 'XLA'?",
                 id="backend-key-case"),
    pytest.param("# typo\nbackend: XLAA  #<\ncpp_namespace: torch_xla\n", "backend 'XLAA' is not a backend dispatch key; did you mean 'XLA'?",
                 id="backend-not-a-dispatch-key"),
    pytest.param("# composite\nbackend: CompositeExplicitAutograd  #<\ncpp_namespace: torch_xla\n",
                 "backend 'CompositeExplicitAutograd' is not a backend dispatch key", id="backend-composite-key"),
    pytest.param("# in-tree\nbackend: CPU  #<\ncpp_namespace: torch_xla\n",
                 "already has kernels for CPU; an external backend needs a dispatch key of its own", id="backend-key-taken"),
    pytest.param("# no AutogradMPS\nbackend: MPS\ncpp_namespace: mps\nautograd:  #<\n  - relu\n",
                 "'autograd' registers to AutogradMPS, a dispatch key opgen does not know", id="autograd-key-unknown"),

    # --- cpp_namespace and class_name -----------------------------------------------------------
    pytest.param("# no namespace\nbackend: XLA  #<\nsupported: [relu]\n", "missing 'cpp_namespace:'; give the C++ namespace",
                 id="missing-cpp-namespace"),
    pytest.param("# empty\nbackend: XLA\ncpp_namespace: ' '  #<\n", "'cpp_namespace' is empty", id="empty-cpp-namespace"),
    pytest.param("# deep\nbackend: XLA\ncpp_namespace: a::b::c  #<\n", "cpp_namespace 'a::b::c' is 3 levels deep; use at most 2, e.g. 'a::b'",
                 id="cpp-namespace-too-deep"),
    pytest.param("# dash\nbackend: XLA\ncpp_namespace: torch-xla  #<\n", "cpp_namespace 'torch-xla' is not a C++ namespace",
                 id="cpp-namespace-not-identifier"),
    pytest.param(HEADER + "class_name: XLA Functions  #<\n", "'class_name' must be a C++ class name, got str 'XLA Functions'; omit it for XLANativeFunctions",
                 id="class-name-not-identifier"),

    # --- types of the lists and flags -----------------------------------------------------------
    pytest.param(HEADER + "supported: relu  #<\n", "'supported' must be a list of operator names, got str 'relu'", id="supported-not-a-list"),
    pytest.param(HEADER + "full_codegen: {relu: 1}  #<\n", "'full_codegen' must be a list of operator names, got a mapping",
                 id="full-codegen-not-a-list"),
    pytest.param(HEADER + "autograd: relu  #<\n", "'autograd' must be a list of operator names", id="autograd-not-a-list"),
    pytest.param(HEADER + "symint: narrow_copy  #<\n", "'symint' must be a list of operator names", id="symint-not-a-list"),
    pytest.param(HEADER + "ir_gen: relu  #<\n", "'ir_gen' must be a list of operator names, got str 'relu'", id="ir-gen-not-a-list"),
    pytest.param(HEADER + "extra_headers: [a.h]  #<\n", "'extra_headers' must be a str, got a list", id="extra-headers-not-a-string"),
    pytest.param(HEADER + "use_out_as_primary: 1  #<\n", "'use_out_as_primary' must be True or False, got int 1",
                 id="use-out-as-primary-not-a-bool"),
    pytest.param(HEADER + "device_guard: 'False'  #<\n", "'device_guard' must be True or False, got str 'False'",
                 id="device-guard-not-a-bool"),

    # --- operator names -------------------------------------------------------------------------
    pytest.param(HEADER + "supported:\n  - relu\n  - add(  #<\n", "'add(' is not an operator name", id="malformed-operator-name"),
    pytest.param(HEADER + "supported:\n  - add.  #<\n", "'add.' is not an operator name (overload name '' in 'add.'", id="empty-overload"),
    pytest.param(HEADER + "supported:\n  - aten::relu  #<\n", "'aten::relu' is not an operator name", id="namespaced-operator-name"),
    pytest.param(HEADER + "supported:\n  - [relu]  #<\n", "'supported' lists a list; write operator names such as add.Tensor",
                 id="operator-not-a-string"),
    pytest.param(HEADER + "supported:\n  - ad.Tensor  #<\n", "native_functions.yaml; did you mean 'add.Tensor'?",
                 id="unknown-operator-close"),
    pytest.param(HEADER + "autograd:\n  - convolution  #<\n", "native_functions.yaml: renamed or removed?", id="unknown-operator"),
    pytest.param(HEADER + "supported:\n  - add  #<\n", "native_functions.yaml; its overloads there: add.Tensor, add.out",
                 id="unknown-overload"),
    pytest.param(HEADER + "supported:\n  - rlu  #<\n", "native_functions.yaml; did you mean 'relu'?", id="one-typo-in-a-short-name"),
    pytest.param(HEADER + "symint:\n  - narow_copy  #<\n", "native_functions.yaml; did you mean 'narrow_copy'?",
                 id="unknown-symint-operator"),

    # --- across lists ---------------------------------------------------------------------------
    pytest.param(HEADER + "supported:\n  - relu\n  - relu  #<\n", "relu is listed twice (first under 'supported' at line 5); remove one",
                 id="duplicate-in-supported"),
    pytest.param(HEADER + "supported:\n  - relu\nfull_codegen:\n  - relu  #<\n", "relu is listed twice (first under 'supported' at line 5)",
                 id="duplicate-across-lists"),
    pytest.param(HEADER + "supported: [narrow_copy]\nsymint:\n  - narrow_copy\n  - narrow_copy  #<\n",
                 "narrow_copy is listed twice under 'symint' (first at line 6)", id="duplicate-in-symint"),
    pytest.param(HEADER + "supported: [relu]\nsymint:\n  - narrow_copy  #<\n", "'symint' lists narrow_copy, which has no kernel here",
                 id="symint-without-kernel"),
    pytest.param(HEADER + "supported:\n  - add.Tensor\n  - add.out\nautograd:\n  - add_.Tensor  #<\n",
                 "add_.Tensor is under 'autograd' but its variant add.Tensor is under 'supported' (line 5); list every variant",
                 id="variant-group-split"),
]


def _expected_line(text: str) -> int:
    lines = [i for i, line in enumerate(text.splitlines(), 1) if line.rstrip().endswith(MARK)]
    assert len(lines) == 1, "each case marks exactly one line"
    return lines[0]


@pytest.mark.parametrize("text, fragment", CASES)
def test_validation_rule_names_file_line_and_reason(model, text, fragment):
    error = backend_errors(text, model)
    assert len(error.diagnostics) == 1, str(error)
    diagnostic = error.diagnostics[0]
    assert str(diagnostic).startswith(f"xla.yaml:{_expected_line(text)}: error: "), str(diagnostic)
    assert fragment in diagnostic.message, diagnostic.message


def test_every_problem_of_a_file_is_reported_at_once_in_line_order(model):
    text = "backend: XLAA\ncpp_namespace: a::b::c\nsupported:\n  - relu\n  - ad.Tensor\n  - relu\ndevice_guard: 2\nextra: 1\n"
    error = backend_errors(text, model)
    lines = [d.location.line for d in error.diagnostics]
    assert lines == [1, 2, 5, 6, 7, 8]


def test_empty_file(model, tmp_path):
    path = tmp_path / "xla.yaml"
    path.write_text("# nothing\n", encoding="utf-8")
    with pytest.raises(OpgenError, match="a backend yaml is a mapping"):
        parse_backend_yaml(str(path), model)


def test_missing_file(model, tmp_path):
    with pytest.raises(OpgenError, match="cannot read yaml: No such file"):
        parse_backend_yaml(str(tmp_path / "nope.yaml"), model)


# --- what a valid file gives ------------------------------------------------------------------

VALID = HEADER + """\
supported:
  - add.Tensor
  - add_.Tensor
  - add.out
full_codegen:
  - narrow_copy
autograd:
  - relu
symint:
  - narrow_copy
ir_gen:
  - relu
non_native:
  - func: custom(Tensor self) -> Tensor
extra_headers: "#include <foo.h>"
"""


def kernels(index):
    return {str(name): meta.kernel for name, meta in index.index.items()}


def test_happy_path_builds_both_indices(model):
    backend = parse_backend_yaml(VALID, model, "xla.yaml")
    assert isinstance(backend, BackendYaml)
    assert (backend.source, backend.backend_key, backend.autograd_key) == ("xla.yaml", DispatchKey.XLA, DispatchKey.AutogradXLA)
    assert (backend.cpp_namespace, backend.class_name) == ("torch_xla", "XLANativeFunctions")
    assert kernels(backend.backend_index) == {
        "add.Tensor": "add", "add_.Tensor": "add_", "add.out": "add_out", "narrow_copy": "narrow_copy_symint"}
    assert kernels(backend.autograd_index) == {"relu": "relu"}
    for index in backend.indices.values():
        assert index.external and not index.use_out_as_primary and not index.device_guard
        assert {meta.cpp_namespace for meta in index.index.values()} == {"torch_xla"}
        assert not any(meta.structured for meta in index.index.values())
    assert backend.backend_index.get(OperatorName.parse("narrow_copy")).supports_symint()
    assert list(backend.indices) == [DispatchKey.XLA, DispatchKey.AutogradXLA]


def test_settings_and_empty_lists(model):
    text = "backend: Lazy\ncpp_namespace: torch::lazy\nclass_name: LazyFunctions\nuse_out_as_primary: True\n" \
           "device_guard: True\nsupported:\nautograd: []\n"
    backend = parse_backend_yaml(text, model)
    assert (backend.cpp_namespace, backend.class_name, backend.source) == ("torch::lazy", "LazyFunctions", "<backend yaml>")
    assert backend.backend_index.use_out_as_primary and backend.backend_index.device_guard
    assert kernels(backend.backend_index) == {} and kernels(backend.autograd_index) == {}


def test_path_and_text_give_the_same_backend(model, tmp_path):
    path = tmp_path / "xla.yaml"
    path.write_text(VALID, encoding="utf-8")
    assert parse_backend_yaml(str(path), model, "xla.yaml") == parse_backend_yaml(VALID, model, "xla.yaml")
    assert parse_backend_yaml(path, model).source == str(path)


def test_reading_leaves_the_model_unchanged(yaml_files, model):
    fresh = load_model(yaml_files.yaml, yaml_files.tags)
    backend = parse_backend_yaml(VALID, model, "xla.yaml")
    assert model == fresh
    assert set(model.indices) == {DispatchKey.CPU}
    merged = backend.apply_to(model)
    assert model == fresh and set(model.indices) == {DispatchKey.CPU}
    assert merged.functions is model.functions
    assert {key: merged.indices[key] for key in model.indices} == model.indices
    assert set(merged.indices) - set(model.indices) == {DispatchKey.XLA, DispatchKey.AutogradXLA}
    with pytest.raises(OpgenError, match="already has kernels for XLA, AutogradXLA"):
        backend.apply_to(merged)


# --- command line -----------------------------------------------------------------------------

def test_cli_prints_the_backend_summary(yaml_files, model, tmp_path, capsys):
    path = tmp_path / "xla.yaml"
    path.write_text(VALID, encoding="utf-8")
    assert cli.main(["model", yaml_files.yaml, "--tags", yaml_files.tags, "--no-cache", "--backend-yaml", str(path)]) == 0
    out = capsys.readouterr().out
    assert "XLA" in out and "(1 take SymInt)" in out
    counts = {line.split()[0]: int(line.split()[1]) for line in out.splitlines() if line.startswith("    ")}
    assert counts == {"XLA": 4, "AutogradXLA": 1}


def test_cli_reports_bad_backend_yaml_with_file_line_and_exit_2(yaml_files, model, tmp_path, capsys):
    path = tmp_path / "xla.yaml"
    path.write_text(HEADER + "supported:\n  - relu\n  - rleu\n", encoding="utf-8")
    assert cli.main(["model", yaml_files.yaml, "--tags", yaml_files.tags, "--no-cache", "--backend-yaml", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == f"{path}:6: error: 'rleu' is not an operator of {yaml_files.yaml}; did you mean 'relu'?\n"


# --- the real pair ------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def xla_yaml(real_data_dir):
    path = os.path.join(os.path.dirname(real_data_dir), "pytorch-xla", "xla_native_functions.yaml")
    if not os.path.isfile(path):
        pytest.skip(f"pytorch/xla's backend yaml not found at {path}")
    return path


def test_real_xla_yaml_declares_torchgens_389_kernels(real_model, xla_yaml):
    backend = parse_backend_yaml(xla_yaml, real_model)
    counts = {str(key): len(index.index) for key, index in backend.indices.items()}
    assert counts == {"XLA": 289 + 95, "AutogradXLA": 5}
    assert sum(counts.values()) == 389
    assert sum(m.supports_symint() for m in backend.backend_index.index.values()) == 12
    assert (backend.cpp_namespace, backend.class_name) == ("torch_xla", "XLANativeFunctions")
    assert kernels(backend.backend_index)["arange.start_out"] == "arange_out"
    assert kernels(backend.backend_index)["empty.memory_format"] == "empty_symint"
    assert kernels(backend.autograd_index)["max_pool2d"] == "max_pool2d"
    assert set(backend.apply_to(real_model).indices) == set(real_model.indices) | {DispatchKey.XLA, DispatchKey.AutogradXLA}


def test_real_xla_yaml_on_the_command_line(real_paths, xla_yaml, capsys):
    assert cli.main(["model", real_paths[0], "--tags", real_paths[1], "--no-cache", "--backend-yaml", xla_yaml]) == 0
    out = capsys.readouterr().out
    assert "XLA                                        384  (12 take SymInt)" in out
    assert "AutogradXLA                                  5" in out


def test_cli_json_with_a_backend_yaml_dumps_the_model_with_its_kernels(yaml_files, model, tmp_path, capsys):
    path = tmp_path / "xla.yaml"
    path.write_text(VALID, encoding="utf-8")
    args = ["model", yaml_files.yaml, "--tags", yaml_files.tags, "--no-cache", "--backend-yaml", str(path), "--json"]
    assert cli.main(args) == 0
    functions = json.loads(capsys.readouterr().out)["functions"]
    assert functions["add.out"]["kernels"] == {"CPU": "add_out", "XLA": "add_out"}
    assert functions["relu"]["kernels"] == {"AutogradXLA": "relu", "CPU": "relu"}


def test_operators_gone_from_pytorch_are_not_given_a_far_fetched_suggestion(real_paths, xla_yaml, tmp_path, capsys):
    """Issue 38: pytorch/xla's older yamls list operators PyTorch 2.13 no longer has. No operator
    of 2.13 is close to them ('kl_div_backward' scored 0.80 against '_pdist_backward'), so the
    message says where the name is missing and asks whether it was renamed or removed; a typo
    still gets its suggestion."""
    with open(xla_yaml, encoding="utf-8") as handle:
        text = handle.read()
    path = tmp_path / "xla_native_functions.yaml"
    path.write_text(text.replace("supported:\n", "supported:\n  - kl_div_backward\n  - symeig\n  - maximun\n", 1), encoding="utf-8")
    line = text.splitlines().index("supported:") + 2
    assert cli.main(["model", real_paths[0], "--tags", real_paths[1], "--no-cache", "--backend-yaml", str(path)]) == 2
    err = capsys.readouterr().err.splitlines()
    where = f"{real_paths[0]} (PyTorch 2.13's set)"
    assert err == [f"{path}:{line}: error: 'kl_div_backward' is not an operator of {where}: renamed or removed?",
                   f"{path}:{line + 1}: error: 'symeig' is not an operator of {where}: renamed or removed?",
                   f"{path}:{line + 2}: error: 'maximun' is not an operator of {where}; did you mean 'maximum'?"]
