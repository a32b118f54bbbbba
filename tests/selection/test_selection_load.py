"""Selection files: torchgen's selection yaml and plain lists, resolved against our yaml, and
every problem reported at once at FILE:LINE."""
import textwrap

import pytest

from opgen.errors import OpgenError
from opgen.model import load_model
from opgen.selection import load_selection
from opgen.selection.load import LIST_FORMAT, TORCHGEN_FORMAT, parse_selection


def parse(text, model, name="ops.yaml"):
    return parse_selection(textwrap.dedent(text).encode(), name, model)


def problems(text, model, name="ops.yaml"):
    with pytest.raises(OpgenError) as info:
        parse(text, model, name)
    return [str(d) for d in info.value.diagnostics]


# ----- plain lists -----

def test_a_plain_list_names_operators_one_a_line(our_model):
    selection = parse("""\
        # the MLP's forward
        aten::addmm
        relu   # an overload-less operator

        add.Tensor
        mm.default
    """, our_model, "ops.txt")
    assert selection.format == LIST_FORMAT
    assert [(op.name, op.keys, op.location.line) for op in selection.operators] == [
        ("aten::addmm", ("addmm",), 2), ("relu", ("relu",), 3), ("add.Tensor", ("add.Tensor",), 5), ("mm.default", ("mm",), 6)]
    assert all(op.is_root for op in selection.operators)
    assert selection.keys == ("add.Tensor", "addmm", "mm", "relu")
    assert selection.warnings == ()


def test_load_selection_reads_a_file(our_model, tmp_path):
    path = tmp_path / "ops.txt"
    path.write_text("add.Tensor\n")
    assert load_selection(str(path), our_model).keys == ("add.Tensor",)
    with pytest.raises(OpgenError, match="cannot read the selection"):
        load_selection(str(tmp_path / "missing.txt"), our_model)


def test_plain_list_problems_come_together_at_their_lines(our_model):
    found = problems("""\
        add.Tensor
        ad.Tensor
        aten::add.Tensor
        add
        add Tensor
        add.Tensor(x)
    """, our_model, "ops.txt")
    assert found == [
        "ops.txt:2: error: unknown operator 'ad.Tensor'; did you mean 'add.Tensor'?",
        "ops.txt:3: error: duplicate: add.Tensor is already selected at line 1 (as 'add.Tensor'); remove one of them",
        "ops.txt:4: error: unknown operator 'add'; add has no overload without a name; name one (add.Scalar, add.Tensor, "
        "add.out), or select every overload with include_all_overloads: true (torchgen's yaml)",
        "ops.txt:5: error: 'add Tensor' is more than one name; write one operator name a line",
        "ops.txt:6: error: 'add.Tensor(x)' is not an operator name; write name.overload, e.g. aten::add.Tensor or mm",
    ]


def test_suggestions_keep_the_namespace_the_user_wrote(our_model):
    assert problems("aten::ad.Tensor\n", our_model, "ops.txt") == [
        "ops.txt:1: error: unknown operator 'aten::ad.Tensor'; did you mean 'aten::add.Tensor'?"]


def test_an_empty_selection_is_a_warning(our_model):
    selection = parse("# nothing yet\n", our_model, "ops.txt")
    assert selection.operators == ()
    assert selection.warnings == ("ops.txt: warning: selects no operators: the build gets only what the runtime itself calls",)


# ----- torchgen's selection yaml -----

def test_torchgen_yaml_with_its_flags_and_defaults(our_model):
    selection = parse("""\
        include_all_non_op_selectives: false
        build_features: []
        custom_classes: []
        kernel_metadata: {}
        et_kernel_metadata: {}
        debug_info: [model.ptl]
        operators:
          aten::add:
            is_root_operator: true
            is_used_for_training: true
            include_all_overloads: true
            debug_info: [model.ptl]
          aten::mm:
            is_root_operator: false
            is_used_for_training: false
            include_all_overloads: false
          relu.out: {}
          aten::sum:
    """, our_model)
    assert selection.format == TORCHGEN_FORMAT
    add, mm, relu_out, total = selection.operators
    assert add.keys == ("add.Scalar", "add.Tensor", "add.out") and add.include_all_overloads and add.debug_info == ("model.ptl",)
    assert add.location.line == 8
    assert mm.keys == ("mm",) and not mm.is_root and not mm.is_used_for_training
    assert relu_out.keys == ("relu.out",) and relu_out.is_root  # torchgen's defaults: root, training, all overloads
    # torchgen's include_all_overloads defaults to true: aten::sum names every overload of sum
    assert total.keys == ("sum", "sum.IntList_out", "sum.dim_IntList", "sum.out")
    assert selection.warnings == ()
    assert selection.entry_of("add.Tensor") is add


def test_include_all_operators_selects_everything(our_model):
    selection = parse("include_all_operators: true\n", our_model)
    assert selection.include_all is not None and selection.include_all.line == 1
    assert selection.warnings == ()


@pytest.mark.parametrize("key", ["kernel_metadata", "et_kernel_metadata"])
def test_per_dtype_kernel_metadata_is_reported_as_unsupported(our_model, key):
    selection = parse(f"""\
        operators:
          aten::add.Tensor: {{}}
        {key}:
          add_kernel: [Float, Double]
    """, our_model)
    assert selection.keys == ("add.Tensor",)
    assert selection.warnings == (
        f"ops.yaml:3: warning: {key} is not supported: opgen selects whole operators, not kernels per dtype, "
        "so every selected operator keeps all its dtypes",)


def test_torchgen_yaml_problems_come_together_at_their_lines(our_model):
    found = problems("""\
        operators:
          aten::add.Tensor:
            is_root_operator: yes please
            include_all_overloads: 1
          add.Tensor:
            is_used_for_training: true
          aten::mmm:
            include_all_overloads: false
          aten::add:
            include_all_overloads: false
          aten::relu:
            is_root: true
            debug_info: model.ptl
          aten::sum: [1, 2]
          aten::neg:
            name: aten::abs
        custom_class: []
        kernel_metadata: [add]
    """, our_model)
    assert found == [
        "ops.yaml:3: error: 'is_root_operator' of aten::add.Tensor must be true or false, got str 'yes please'",
        "ops.yaml:4: error: 'include_all_overloads' of aten::add.Tensor must be true or false, got int 1",
        "ops.yaml:5: error: duplicate: add.Tensor is already selected at line 2 (as 'aten::add.Tensor'); remove one of them",
        "ops.yaml:7: error: unknown operator 'aten::mmm'; did you mean 'aten::mm'?",
        "ops.yaml:9: error: unknown operator 'aten::add'; aten::add has no overload without a name; name one "
        "(aten::add.Scalar, aten::add.Tensor, aten::add.out), or select every overload with include_all_overloads: true "
        "(torchgen's yaml)",
        "ops.yaml:12: error: unknown key 'is_root' in operator aten::relu; did you mean 'is_root_operator'?",
        "ops.yaml:13: error: 'debug_info' of aten::relu must be a list, got str 'model.ptl'",
        "ops.yaml:14: error: 'aten::sum' must map to a mapping of name, is_root_operator, is_used_for_training, "
        "include_all_overloads, debug_info, got a list",
        "ops.yaml:16: error: 'name: aten::abs' differs from the operator it describes (aten::neg); remove it or make them equal",
        "ops.yaml:17: error: unknown key 'custom_class'; did you mean 'custom_classes'?",
        "ops.yaml:18: error: 'kernel_metadata' must be a mapping, got a list",
    ]


def test_a_base_name_and_every_overload_twice_is_a_duplicate(our_model):
    assert problems("""\
        operators:
          aten::add: {}
          add:
            include_all_overloads: true
    """, our_model) == ["ops.yaml:3: error: duplicate: every overload of add is already selected at line 2 "
                        "(as 'aten::add'); remove one of them"]


def test_a_base_name_beside_one_of_its_overloads_is_fine(our_model):
    selection = parse("""\
        operators:
          aten::add: {}
          aten::add.Tensor:
            include_all_overloads: false
    """, our_model)
    assert selection.keys == ("add.Scalar", "add.Tensor", "add.out")
    assert selection.entry_of("add.Tensor").name == "aten::add.Tensor"  # the entry naming it alone


def test_yaml_syntax_and_shape_errors_are_located(our_model):
    assert problems("operators:\n  aten::add.Tensor: {\n", our_model)[0].startswith("ops.yaml:3: error: yaml syntax error")
    assert problems("operators: [aten::add.Tensor]\n", our_model) == [
        "ops.yaml:1: error: 'operators' must be a mapping of operator names, got a list"]
    assert problems("operators:\n  aten::add.Tensor: {}\noperators: {}\n", our_model) == [
        "ops.yaml:3: error: duplicate key 'operators' (first at line 1); remove one of them"]


def test_binary_files_are_refused_at_their_line(our_model):
    with pytest.raises(OpgenError, match=r"ops.txt:2: error: contains a NUL byte"):
        parse_selection(b"add.Tensor\n\0\n", "ops.txt", our_model)


# ----- namespaces -----

def test_operators_outside_aten_are_written_with_their_namespace(tmp_path):
    (tmp_path / "native_functions.yaml").write_text(
        "- func: myops::scale(Tensor self, float factor) -> Tensor\n"
        "- func: add.Tensor(Tensor self, Tensor other) -> Tensor\n")
    model = load_model(str(tmp_path / "native_functions.yaml"))
    assert parse("myops::scale\naten::add.Tensor\n", model, "ops.txt").keys == ("add.Tensor", "myops::scale")
    assert problems("scale\n", model, "ops.txt") == [
        "ops.txt:1: error: unknown operator 'scale'; did you mean 'myops::scale'? "
        "(names outside aten are written with their namespace)"]
