"""Formulas of derivatives.yaml translated to C++ over the method-free API (opgen/gen/layers/autograd_formulas.py):
hand-written cases, every formula of yaml/derivatives.yaml, the headers a group's formulas need,
determinism, and how much of PyTorch 2.13's derivatives.yaml translates (and why the rest does not).
"""
import collections
import os
import re
import subprocess
import sys

import pytest

from opgen.errors import Location, OpgenError
from opgen.gen.layers.autograd_formulas import HELPERS, FormulaError, FormulaTranslator, Scope, translate_all
from opgen.gen.layers.cpp_expr import ExpressionError, parse_expression
from opgen.model import load_model
from opgen.model.derivatives import load_derivatives

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OPS = os.path.join(REPO_ROOT, "yaml", "native_functions.yaml")
TAGS = os.path.join(REPO_ROOT, "yaml", "tags.yaml")
DERIVATIVES = os.path.join(REPO_ROOT, "yaml", "derivatives.yaml")
HERE = Location("formulas.yaml", 12)


@pytest.fixture(scope="module")
def model():
    return load_model(OPS, TAGS)


@pytest.fixture(scope="module")
def derivatives(model):
    return load_derivatives(DERIVATIVES, model, "yaml/derivatives.yaml")


@pytest.fixture(scope="module")
def translator(model):
    return FormulaTranslator(model)


SCOPE = Scope({
    "grad": "Tensor", "self": "Tensor", "other": "Tensor", "mat2": "Tensor", "condition": "Tensor", "mask": "Tensor",
    "result": "Tensor", "alpha": "number", "dim0": "number", "dim1": "number", "keepdim": "bool", "dim": "optional",
    "grads": "tensors",
}, derived_of=("self", "other"))


def cpp(translator, text, scope=SCOPE):
    return translator.translate(text, scope, HERE).cpp


# ----- hand-written cases ----------------------------------------------------------------------

@pytest.mark.parametrize("formula, expected", [
    # C++ precedence and associativity; parentheses group, then disappear into calls
    ("grad + other * self", "op::add(grad, op::mul(other, self))"),
    ("(grad + other) * self", "op::mul(op::add(grad, other), self)"),
    ("grad - other - self", "op::sub(op::sub(grad, other), self)"),
    ("grad - (other - self)", "op::sub(grad, op::sub(other, self))"),
    ("grad / other / self", "op::div(op::div(grad, other), self)"),
    ("grad * other == self + grad", "op::eq(op::mul(grad, other), op::add(self, grad))"),
    ("((grad))", "grad"),
    # unary minus binds tighter than * and than nothing after a call
    ("-grad * self", "op::mul(op::neg(grad), self)"),
    ("-(grad * self)", "op::neg(op::mul(grad, self))"),
    ("-grad.mm(mat2)", "op::neg(op::mm(grad, mat2))"),
    ("- -grad", "op::neg(op::neg(grad))"),
    # Tensor and number: the Scalar overloads; a number on the left swaps where that keeps the meaning
    ("grad * 2", "op::mul(grad, 2)"),
    ("grad / 2.5", "op::div(grad, 2.5)"),
    ("2 * grad", "op::mul(grad, 2)"),
    ("-2 * grad", "op::mul(grad, -2)"),
    ("grad * alpha", "op::mul(grad, alpha)"),
    ("0 < grad", "op::gt(grad, 0)"),
    ("1e-12 <= grad", "op::ge(grad, 1e-12)"),
    ("grad <= 0", "op::le(grad, 0)"),
    # arithmetic between numbers stays C++
    ("grad.transpose(dim0 + 1, dim1 * 2)", "op::transpose(grad, dim0 + 1, dim1 * 2)"),
    ("grad.transpose((dim0 + 1) * 2, -dim1)", "op::transpose(grad, (dim0 + 1) * 2, -dim1)"),
    # nested calls and methods
    ("grad.mm(mat2.t())", "op::mm(grad, op::t(mat2))"),
    ("self.t().mm(grad)", "op::mm(op::t(self), grad)"),
    ("where(self == other, grad / 2, grad)", "op::where(op::eq(self, other), op::div(grad, 2), grad)"),
    # where's self is its second argument
    ("grad.where(condition, other)", "op::where(condition, grad, other)"),
    # trailing defaults: C++ defaults of the free function, or a method-only operator's handle with
    # the defaults filled in as the method fills them
    ("grad.sum(dim, true)", "op::sum(grad, dim, true)"),
    ("grad.sum(dim)", "op::sum(grad, dim)"),
    ("grad.expand(self.sym_sizes())", "op::ops::expand::call(grad, self_sym_sizes, false)"),
    ("grad.contiguous()", "op::ops::contiguous::call(grad, MemoryFormat::Contiguous)"),
    ("grad.to(self.scalar_type())", "op::ops::to_dtype::call(grad, self_scalar_type, false, false, std::nullopt)"),
    # comments (keyword-like argument names) are dropped
    ("grad.sum(dim, /*keepdim=*/true)", "op::sum(grad, dim, true)"),
    # in-place on a named tensor stays in-place; on a temporary it is the functional variant
    ("grad.masked_fill_(mask, 0)", "op::ops::masked_fill__Scalar::call(grad, mask, 0)"),
    ("(grad * 2).masked_fill_(mask, 0)", "op::masked_fill(op::mul(grad, 2), mask, 0)"),
    # accessors: TensorBase's names; saved values where the model saves them (self, other)
    ("grad.sym_sizes()", "grad.sizes()"),
    ("grad.sym_numel()", "grad.numel()"),
    ("grad.sym_strides()", "grad.strides()"),
    ("grad.scalar_type()", "grad.dtype()"),
    ("grad.options()", "op::TensorOptions(grad.dtype()).with_device(grad.device())"),
    ("sum_to(grad, grad.mm(mat2).sym_sizes())", "op::autograd::helpers::sum_to(grad, op::mm(grad, mat2).sizes())"),
    ("self_sym_sizes", "self_sym_sizes"),
    ("self_info.zeros()", "self_info.zeros()"),
    # helpers, free operator calls, conditionals, subscripts
    ("maybe_multiply(-grad, alpha)", "op::autograd::helpers::maybe_multiply(op::neg(grad), alpha)"),
    ("keepdim ? grad : grad.unsqueeze(0)", "keepdim ? grad : op::unsqueeze(grad, 0)"),
    ("grads[0] * grads[1]", "op::mul(grads[0], grads[1])"),
    ("zeros_like(grad)", "op::zeros_like(grad)"),
    ("Tensor()", "op::TensorBase()"),
    # PyTorch's spellings: at::f and f_symint are the operator f; <cmath> on numbers stays std::
    ("at::where(condition, grad, other)", "op::where(condition, grad, other)"),
    ("grad.expand_symint(self.sym_sizes())", "op::ops::expand::call(grad, self_sym_sizes, false)"),
    ("grad * sqrt(M_PI)", "op::mul(grad, std::sqrt(M_PI))"),
    ("select_scatter(grad, grad, 0, {})", "op::select_scatter(grad, grad, 0, {})"),
])
def test_hand_written(translator, formula, expected):
    assert cpp(translator, formula) == expected


def test_backward_formulas_read_the_saved_values(translator, derivatives):
    info = next(i for i in derivatives.infos if str(i.name) == "mean")
    translated = translator.backward(info, info.formulas[0])
    assert translated.cpp == "op::div(op::ops::expand::call(grad, self_sym_sizes, false), self_sym_numel)"
    assert translated.groups == ("div", "expand")
    assert translated.headers == ("ops/div.h", "ops/expand.h")


def test_groups_are_the_operators_called(translator):
    translated = translator.translate("where(self < 0, -grad, grad).masked_fill_(self == 0, 0)", SCOPE, HERE)
    assert translated.groups == ("eq", "lt", "masked_fill", "neg", "where")
    assert translator.translate("maybe_multiply(grad, alpha)", SCOPE, HERE).groups == ()


@pytest.mark.parametrize("formula, construct", [
    ("[&]() { return grad; }()", "lambda"),
    ("static_cast<double>(alpha) * grad", "template arguments"),
    ("at::native::foo(grad)", "qualified call"),
    ("zeros(self.sym_sizes(), grad.options())", "no overload"),
    ("grad & other", "Tensor operator &"),
    ("!grad", "Tensor operator !"),
    ("handle_r_to_c(grad)", "unknown function"),
    ("grad.frobnicate()", "unknown method"),
    ("grad.mm()", "no overload"),
    ("1 - grad", "number - Tensor"),
    ("2 / grad", "number / Tensor"),
    ("undefined_name * grad", "unknown name"),
    ("grad * grads", "Tensor * tensors"),
    ("alpha.conj()", "method of number"),
    ("grad +", "syntax"),
    ("grad = other", "assignment"),
    ("grad $ other", "unknown character"),
    ("(grad * 2).zero_()", "in-place on a temporary"),
])
def test_unknown_constructs_name_file_line_and_construct(translator, formula, construct):
    with pytest.raises(FormulaError) as info:
        translator.translate(formula, SCOPE, HERE)
    assert info.value.construct == construct
    assert str(info.value).startswith("formulas.yaml:12: error: cannot translate formula")
    assert isinstance(info.value, OpgenError)


def test_an_error_shows_the_formula_as_written_and_with_saved_values(translator):
    with pytest.raises(FormulaError) as info:
        translator.translate("self.sym_sizes() & grad", SCOPE, HERE)
    assert "formula 'self.sym_sizes() & grad' (with saved values: 'self_sym_sizes & grad')" in str(info.value)


def test_parser_keeps_cpp_precedence():
    tree = parse_expression("a || b && c == d < e + f * -g.h(i)[j]")
    assert type(tree).__name__ == "Binary" and tree.op == "||"
    with pytest.raises(ExpressionError):
        parse_expression("(a")


def test_helpers_are_the_documented_list():
    with open(DERIVATIVES, encoding="utf-8") as handle:
        block = handle.read().split("# Helpers:", 1)[1].split("\n\n", 1)[0]
    assert set(HELPERS) == {m.group(1) for m in re.finditer(r"^#   (\w+)\(", block, re.M)}


# ----- our derivatives.yaml ----------------------------------------------------------------------

def test_every_formula_of_our_yaml_translates(translator, derivatives):
    done, failed = translate_all(translator, derivatives)
    assert not failed, "\n".join(str(e) for e in failed)
    backward = sum(len(i.formulas) for i in derivatives.infos if i.derived_from is None)
    forward = sum(1 for i in derivatives.infos if i.derived_from is None for f in i.forward_formulas
                  if f.text not in ("auto_element_wise", "auto_linear"))
    assert len(done) == backward + forward
    for _, _, translated in done:  # nothing of the method API is left: TensorBase's accessors only
        assert not re.search(r"\b(?:grad|self|other|result|\w+_[pt])\.(?!zeros\(\)|sizes\(\)|dtype\(\)|numel\(\))",
                             translated.cpp), translated.cpp


SNAPSHOTS = {
    ("div.Tensor", "other"): "op::div(op::mul(op::neg(grad), self), op::mul(other, other))",
    ("maximum", "self"): "op::masked_fill(op::where(op::eq(self, other), op::div(grad, 2), grad), op::lt(self, other), 0)",
    ("sum.dim_IntList", "self"):
        "op::ops::expand::call(op::autograd::helpers::restore_reduced_dims(grad, dim, keepdim), self_sym_sizes, false)",
    ("amax", "self"): "op::autograd::helpers::scale_grad_by_count(op::autograd::helpers::restore_reduced_dims(grad, dim, keepdim), "
                      "op::eq(op::autograd::helpers::restore_reduced_dims(result, dim, keepdim), self), dim)",
    ("select.int", "self"): "op::select_scatter(self_info.zeros(), grad, dim, index)",
    ("as_strided", "self"): "op::autograd::helpers::as_strided_backward(grad, self_geometry, size, stride, storage_offset)",
    ("as_strided_scatter", "src"):
        "op::as_strided(op::ops::contiguous::call(grad, MemoryFormat::Contiguous), size, stride, storage_offset)",
    ("_to_copy", "self"): "op::autograd::helpers::_to_copy_backward(grad, self_options)",
    ("tanh", "self"): "op::sub(grad, op::mul(op::mul(grad, result), result))",
    ("addmm", "result"): "op::add(op::add(op::autograd::helpers::maybe_multiply(self_t, beta), "
                         "op::autograd::helpers::maybe_multiply(op::mm(mat1_t, mat2_p), alpha)), "
                         "op::autograd::helpers::maybe_multiply(op::mm(mat1_p, mat2_t), alpha))",
    ("copy_", "result"): "op::ops::copy_::call(self_t, src_t, false)",
    ("_to_copy", "result"): "op::_to_copy(self_t, dtype, layout, device, pin_memory, non_blocking, memory_format)",
    ("_log_softmax_backward_data", "grad_output"): "op::sub(grad, op::sum(op::mul(grad, op::exp(output)), dim, true))",
    ("nll_loss_forward", "self"):
        "op::nll_loss_backward(grad, self, target, weight, reduction, ignore_index, total_weight)",
    ("mse_loss_backward", "self"): "op::mul(op::mul(grad, grad_output), reduction == 1 ? 2.0 / grad.numel() : 2.0)",
}


def test_snapshots(translator, derivatives):
    got = {}
    for info, formula, translated in translate_all(translator, derivatives)[0]:
        got[(str(info.name), ", ".join(formula.var_names))] = translated.cpp
    assert {key: got[key] for key in SNAPSHOTS} == SNAPSHOTS


@pytest.mark.parametrize("group, headers", [
    ("div", ("ops/div.h", "ops/mul.h", "ops/neg.h", "ops/sub.h")),
    ("maximum", ("ops/add.h", "ops/div.h", "ops/eq.h", "ops/lt.h", "ops/masked_fill.h", "ops/where.h")),
    ("mm", ("ops/add.h", "ops/mm.h", "ops/t.h")),
    ("sum", ("ops/expand.h",)),
    ("expand", ()),   # sum_to is a helper: no operator header
    ("as_strided_scatter", ("ops/as_strided.h", "ops/as_strided_scatter.h", "ops/contiguous.h")),
    ("eq", ("ops/zero.h",)),
])
def test_headers_a_group_needs(translator, derivatives, group, headers):
    assert translator.group_headers(derivatives, group) == headers


def _digest_script():
    return ("import hashlib, sys; sys.path.insert(0, {root!r});"
            "from opgen.model import load_model; from opgen.model.derivatives import load_derivatives;"
            "from opgen.gen.layers.autograd_formulas import FormulaTranslator, translate_all;"
            "m = load_model({ops!r}, {tags!r}); d = load_derivatives({der!r}, m);"
            "done, _ = translate_all(FormulaTranslator(m), d);"
            "print(hashlib.sha256(repr([(str(i.name), f.var_names, t) for i, f, t in done]).encode()).hexdigest())"
            ).format(root=REPO_ROOT, ops=OPS, tags=TAGS, der=DERIVATIVES)


def test_deterministic(model, derivatives):
    first = translate_all(FormulaTranslator(model), derivatives)[0]
    second = translate_all(FormulaTranslator(model), derivatives)[0]
    assert first == second
    digests = set()
    for seed in ("1", "2"):
        run = subprocess.run([sys.executable, "-c", _digest_script()], capture_output=True, text=True, timeout=120,
                             env={**os.environ, "PYTHONHASHSEED": seed})
        assert run.returncode == 0, run.stderr[-2000:]
        digests.add(run.stdout.strip())
    assert len(digests) == 1


# ----- PyTorch 2.13's derivatives.yaml -----------------------------------------------------------

# What PyTorch's formulas use that the formula API does not have, by the construct the translator
# names; each with why. The counts are those of PyTorch 2.13 (backward and non-auto forward formulas
# of entries, *_copy infos not counted twice).
PYTORCH_TRANSLATED = 579
PYTORCH_UNTRANSLATED = {
    "unknown function": "PyTorch's FunctionsManual helpers (handle_r_to_c, not_implemented, "
                        "value_selecting_reduction_backward_symint, batch_norm_jvp ...): not in our helper list",
    "qualified call": "c10::/std::/at::native:: functions (GradMode::is_enabled, c10::fmap); at::f of an operator translates",
    "template arguments": "static_cast<...>, std::vector<...>{}, c10::SymInt ... templates and casts",
    "method of number": "Scalar methods (alpha.conj(), exponent.toDouble()): complex numbers, Scalar API",
    "no overload": "an operator called with a TensorOptions (at::zeros(sizes, self.options()): our C++ API takes dtype, "
                   "layout and device apart), or with arguments no overload takes (the attention backwards' counts)",
    "unknown name": "constants (kCudnnDoubleBackwardMsg) and names that are neither arguments nor saved values",
    "qualified name": "at::Reduction::None and other qualified constants",
    "Tensor operator ==": "comparisons of _foreach_ per-element values (lists)",
    "Tensor operator &": "bool masks combined with & (logical_and is no Tensor operator of the formula API)",
    "method of tensors": "methods on _foreach_ lists (self_t.conj() where self_t is a Tensor list)",
    "unknown method": "methods that are no operator (layout(), is_complex(), sym_blocksize())",
    "number / Tensor": "value / tensor2: a number divided by a Tensor (no rdiv)",
    "lambda": "a lambda in a formula",
    "method of Tensor?": "a method on an optional Tensor (weight.value())",
    "method of ints": "a method on a size list (sizes.size())",
    "Tensor * tensors": "a Tensor times a _foreach_ list",
}


@pytest.fixture(scope="module")
def pytorch_translation(real_data_dir):
    pt_model = load_model(os.path.join(real_data_dir, "native_functions.yaml"), os.path.join(real_data_dir, "tags.yaml"))
    pt_derivatives = load_derivatives(os.path.join(real_data_dir, "derivatives.yaml"), pt_model)
    return translate_all(FormulaTranslator(pt_model), pt_derivatives)


def test_pytorch_formulas_translate(pytorch_translation):
    done, failed = pytorch_translation
    by_construct = collections.Counter(e.construct for e in failed)
    report = [f"PyTorch 2.13: {len(done)} formulas translate, {len(failed)} do not:"]
    report += [f"  {count:4d}  {construct}: {PYTORCH_UNTRANSLATED.get(construct, 'NO REASON WRITTEN')}"
               for construct, count in by_construct.most_common()]
    print("\n".join(report))
    assert len(done) >= PYTORCH_TRANSLATED, "\n".join(report)
    unexplained = sorted(set(by_construct) - set(PYTORCH_UNTRANSLATED))
    assert not unexplained, f"constructs without a reason: {unexplained}\n" + "\n".join(report)


def test_pytorch_translations_use_no_methods(pytorch_translation):
    done, _ = pytorch_translation
    accessors = r"(?:sizes|strides|numel|dtype|device|size|stride|dim|defined|zeros|has_value|value|with_device)\("
    for _, formula, translated in done:
        assert not re.search(r"\.(?!" + accessors + r")[A-Za-z_]\w*\(", translated.cpp), (formula.text, translated.cpp)
