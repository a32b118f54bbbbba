"""One test per validation rule: the error names FILE:LINE of the offending entry or key, and says why.

Each case is a small native_functions.yaml.  The line the error must point at is marked with a
trailing ``#<`` comment (yaml ignores it); a valid entry is prepended so no case sits on line 1.
"""
import os
import subprocess
import sys
import textwrap

import pytest

from opgen.errors import OpgenError
from opgen.model import load_model

PRELUDE = "# a valid entry first, so errors are not trivially on line 1\n- func: prelude(Tensor self) -> Tensor\n\n"
MARK = "#<"
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

FACTORY_ARGS = "int[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None"

CASES = [
    # --- the yaml itself ---------------------------------------------------------------------
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          variants: function: method  #<
        """, "yaml syntax error: mapping values are not allowed", id="yaml-syntax-error"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          variants: function
          variants: method  #<
        """, "duplicate key 'variants' (first at line 5); remove one of them", id="duplicate-yaml-key"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
        - just a string  #<
        """, "each entry must be a mapping", id="entry-not-a-mapping"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
        - [a, list]  #<
        """, "each entry must be a mapping", id="entry-is-a-list"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          ? [a, b]  #<
          : c
        """, "mapping keys must be scalars", id="non-scalar-yaml-key"),
    pytest.param("""
        - func: !weird foo(Tensor self) -> Tensor  #<
        """, "yaml error: could not determine a constructor for the tag '!weird'", id="unknown-yaml-tag"),

    # --- keys and their types ----------------------------------------------------------------
    pytest.param("""
        - variants: function  #<
          dispatch:
            CPU: foo
        """, "entry has no 'func:' key", id="missing-func"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          dispach:  #<
            CPU: foo
        """, "unknown key 'dispach'; did you mean 'dispatch'?", id="unknown-entry-key"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          lowering: foo  #<
        """, "unknown key 'lowering'; known keys: func, variants, dispatch", id="unknown-entry-key-far"),
    pytest.param("""
        - func: [foo]  #<
        """, "'func' must be a schema string, got a list", id="func-not-a-string"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          variants: [function, method]  #<
        """, "'variants' must be 'function', 'method' or 'function, method', got a list", id="variants-not-a-string"),
    pytest.param("""
        - func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
          structured: 1  #<
        """, "'structured' must be True or False, got int 1", id="structured-not-a-bool"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          device_guard: "False"  #<
        """, "'device_guard' must be True or False, got str 'False'", id="device-guard-not-a-bool"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          dispatch: CPU  #<
        """, "'dispatch' must be a mapping of dispatch keys to kernel names, got str 'CPU'", id="dispatch-not-a-mapping"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          tags: {core: 1}  #<
        """, "'tags' must be a tag or a list of tags, got a mapping", id="tags-not-a-list-or-string"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          cpp_no_default_args: self  #<
        """, "'cpp_no_default_args' must be a list of argument names, got str 'self'", id="cpp-no-default-args-not-a-list"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          variants: function, methods  #<
        """, "unknown variant 'methods'; use 'function', 'method' or 'function, method'", id="unknown-variant"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          device_check: Sometimes  #<
        """, "device_check must be ExactSame or NoCheck, got 'Sometimes'", id="unknown-device-check"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          variants: function, method
          python_module: linalg  #<
        """, "functions in a python_module cannot be methods", id="python-module-with-method"),
    pytest.param("""
        - func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
          use_const_ref_for_mutable_tensors: True  #<
        """, "use_const_ref_for_mutable_tensors is not supported on out= functions", id="const-ref-on-out"),
    pytest.param("""
        - func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
          structured: True
          structured_inherits: Tensor-Iterator  #<
        """, "'Tensor-Iterator' is not a C++ identifier", id="structured-inherits-not-identifier"),

    # --- dispatch tables ---------------------------------------------------------------------
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          dispatch:
            CPU: foo
            CPUU: foo  #<
        """, "unknown dispatch key 'CPUU' for kernel foo; did you mean 'CPU'?", id="unknown-dispatch-key"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          dispatch:
            cuda: foo  #<
        """, "unknown dispatch key 'cuda' for kernel foo; did you mean 'CUDA'?", id="dispatch-key-case"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          dispatch:
            Bogus: foo  #<
        """, "unknown dispatch key 'Bogus' for kernel foo; known keys: CPU, CUDA", id="unknown-dispatch-key-far"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          dispatch:
            CPU, XLA: foo  #<
        """, "unknown dispatch key 'XLA'", id="out-of-tree-dispatch-key"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          dispatch:
            CPU: foo-cpu  #<
        """, "kernel name 'foo-cpu' is not a C++ identifier", id="kernel-not-identifier"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          dispatch:
            CPU: a::b::c::foo  #<
        """, "kernel name 'a::b::c::foo' is not a C++ identifier (optionally 'ns::' qualified, at most 2 levels)",
        id="kernel-namespace-too-deep"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          dispatch:
            CPU: delete  #<
        """, "kernel name 'delete' is a C++ keyword; choose another name", id="kernel-is-cpp-keyword"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          dispatch:
            CPU: [foo, bar]  #<
        """, "dispatch entries must be 'Key1, Key2: kernel_name'", id="kernel-not-a-string"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          dispatch:
            CPU: foo
            CPU, CUDA: foo_cuda  #<
        """, "dispatch key CPU is listed twice", id="dispatch-key-listed-twice"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          dispatch:
            CPU, CPU: foo  #<
        """, "dispatch key CPU is listed twice", id="dispatch-key-twice-in-one-line"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          dispatch:  #<
            CompositeImplicitAutograd: foo
        """, "unnecessary dispatch table: CompositeImplicitAutograd is the default", id="unnecessary-implicit-dispatch"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          dispatch:  #<
            CompositeImplicitAutograd: bar
        """, "a lone CompositeImplicitAutograd kernel must be named foo", id="lone-implicit-kernel-misnamed"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          dispatch:  #<
            CompositeExplicitAutograd: foo
            CompositeImplicitAutograd: foo_implicit
        """, "give at most one of CompositeExplicitAutograd, CompositeExplicitAutogradNonFunctional and "
             "CompositeImplicitAutograd", id="two-composite-keys"),
    pytest.param(f"""
        - func: foo_factory({FACTORY_ARGS}) -> Tensor  #<
        """, "factory function foo_factory needs a dispatch table", id="factory-without-dispatch"),
    pytest.param("""
        - func: new_foo(Tensor self, int[] size) -> Tensor  #<
        """, "factory function new_foo needs a dispatch table", id="new-factory-without-dispatch"),
    pytest.param("""
        - func: foo_like(Tensor self) -> Tensor  #<
        """, "factory function foo_like needs a dispatch table", id="like-factory-without-dispatch"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          manual_kernel_registration: True
          dispatch:  #<
            CPU: foo
        """, "manual_kernel_registration and dispatch cannot be combined", id="manual-registration-with-dispatch"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          structured_delegate: foo.out
          dispatch:  #<
            CPU: foo
        - func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
          structured: True
        """, "a structured_delegate function must not list CPU in dispatch", id="delegate-with-cpu-kernel"),

    # --- the schema (errors point at the func: key) -------------------------------------------
    pytest.param("""
        - func: delete(Tensor self) -> Tensor  #<
        """, "operator name 'delete' is a C++ keyword; rename it", id="operator-name-cpp-keyword"),
    pytest.param("""
        - func: foo(Tensor self, int class) -> Tensor  #<
        """, "argument name 'class' is a C++ keyword; rename it", id="argument-name-cpp-keyword"),
    pytest.param("""
        - func: foo(Tensor self, Tensor self) -> Tensor  #<
        """, "duplicate argument name(s): self", id="duplicate-argument-names"),
    pytest.param("""
        - func: foo(Tensor self, int x=1.5) -> Tensor  #<
        """, "default of argument 'x': '1.5' is not a valid int value", id="int-default-not-int"),
    pytest.param("""
        - func: foo(Tensor self, bool b=yes) -> Tensor  #<
        """, "default of argument 'b': 'yes' is not a valid bool value", id="bool-default-not-bool"),
    pytest.param("""
        - func: foo(Tensor self, Tensor t=None) -> Tensor  #<
        """, "None is only a valid default for optional types; write Tensor? instead of Tensor",
        id="none-default-non-optional"),
    pytest.param("""
        - func: ../evil(Tensor self) -> Tensor  #<
        """, "operator name '../evil' must be an identifier with an optional '.overload'", id="operator-name-escapes-directory"),
    pytest.param("""
        - func: a/b(Tensor self) -> Tensor  #<
        """, "operator name 'a/b' must be an identifier with an optional '.overload'", id="operator-name-with-slash"),
    pytest.param("""
        - func: foo.a/b(Tensor self) -> Tensor  #<
        """, "operator name 'foo.a/b' must be an identifier with an optional '.overload'", id="overload-name-with-slash"),
    pytest.param("""
        - func: ../x::foo(Tensor self) -> Tensor  #<
        """, "namespace '../x' must be one identifier", id="namespace-escapes-directory"),
    pytest.param("""
        - func: foo_out(Tensor self) -> Tensor  #<
        """, "operator name 'foo_out' ends in '_out', which is reserved; use an 'out' overload name",
        id="name-ending-in-out"),
    pytest.param("""
        - func: foo(Tensr self) -> Tensor  #<
        """, "unknown type 'Tensr'; did you mean 'Tensor'?", id="unknown-type"),
    pytest.param("""
        - func: foo(Tensor self, flaot alpha) -> Tensor  #<
        """, "unknown type 'flaot'; did you mean 'float'?", id="unknown-type-close"),
    pytest.param("""
        - func: foo(Tensor self, Banana b) -> Tensor  #<
        """, "unknown type 'Banana'; known types: Device, DeviceIndex", id="unknown-type-far"),
    pytest.param("""
        - func: foo(Tensor self,Tensor other) -> Tensor  #<
        """, "schema is not in canonical form; write it as 'foo(Tensor self, Tensor other) -> Tensor'",
        id="non-canonical-schema"),
    pytest.param("""
        - variants: function
          func: foo( Tensor self) -> Tensor  #<
        """, "write it as 'foo(Tensor self) -> Tensor'", id="schema-error-points-at-func-key"),
    pytest.param("""
        - func: foo_(Tensor(a!) self) -> Tensor  #<
        """, "an in-place operator must return self, e.g. '-> Tensor(a!)'", id="inplace-not-returning-self"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor(a!)  #<
        """, "every mutable return must alias an out argument or 'self'", id="mutable-return-not-aliasing"),
    pytest.param("""
        - func: foo.out(Tensor self, *, Tensor(a!) out, Tensor(b!) out2) -> Tensor(a!)  #<
        """, "an out= operator must return each out argument (or nothing)", id="out-args-not-returned"),
    pytest.param("""
        - func: foo_.dtype(Tensor(a!) self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor(a!)  #<
        """, "tensor options (dtype, layout, device, pin_memory) are only allowed on functional operators",
        id="tensor-options-on-inplace"),

    # --- per-function rules -------------------------------------------------------------------
    pytest.param("""
        - func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
          variants: function, method  #<
        """, "functions with out arguments must have 'variants: function' only", id="out-function-with-method"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          structured: True  #<
        """, "put 'structured: True' on the out= variant", id="structured-on-non-out"),
    pytest.param("""
        - func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
          structured: True
          device_guard: False  #<
        """, "device_guard: False is not supported by structured kernels", id="structured-without-device-guard"),
    pytest.param("""
        - func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
          structured: True
        - func: foo(Tensor self) -> Tensor
          structured_delegate: foo.out
          device_guard: False  #<
        """, "device_guard: False is not supported by structured kernels", id="delegate-without-device-guard"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor  #<
          structured: True
          structured_delegate: foo.out
        - func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
          structured: True
        """, "foo is structured and also has structured_delegate: foo.out", id="structured-and-delegate"),
    pytest.param("""
        - func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
          structured_delegate: foo.other  #<
        """, "out= functions cannot have structured_delegate; did you mean 'structured: True'?",
        id="delegate-on-out-function"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          structured_delegate: aten::foo.out  #<
        """, "structured_delegate names an operator of the same namespace; drop the 'ns::' prefix",
        id="delegate-with-namespace"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          structured_delegate: foo..out  #<
        """, "overload name '.out' in 'foo..out' must be letters, digits and '_'", id="delegate-unparsable"),
    pytest.param("""
        - func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
          structured_inherits: TensorIteratorBase  #<
        """, "structured_inherits requires structured: True", id="inherits-without-structured"),
    pytest.param("""
        - func: foo.out(Tensor self, int k, *, Tensor(a!) out) -> Tensor(a!)
          precomputed:  #<
          - k -> int kH, int kW
        """, "precomputed requires structured: True", id="precomputed-without-structured"),
    pytest.param("""
        - func: foo.out(Tensor self, int k, *, Tensor(a!) out) -> Tensor(a!)
          structured: True
          precomputed:  #<
          - size -> int kH, int kW
        """, "precomputed replaces 'size', which is not an argument of foo.out", id="precomputed-unknown-argument"),
    pytest.param("""
        - func: foo.out(Tensor self, int k, *, Tensor(a!) out) -> Tensor(a!)
          structured: True
          precomputed:  #<
          - k
          - k -> int kH
        """, "precomputed entry 'k' must be 'arg -> type name[, type name]'", id="precomputed-addition-not-last"),
    pytest.param("""
        - func: foo.out(Tensor self, int k, *, Tensor(a!) out) -> Tensor(a!)
          structured: True
          precomputed:  #<
          - k -> Int kH
        """, "unknown type 'Int'", id="precomputed-unknown-type"),
    pytest.param("""
        - func: foo(Tensor self, int dim) -> Tensor
          cpp_no_default_args: [dim]  #<
        """, "cpp_no_default_args names arguments without defaults: dim", id="cpp-no-default-args-without-default"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          tags: [pointwise, cor]  #<
        """, "unknown tag 'cor'; did you mean 'core'? tags must be declared in tags.yaml", id="unknown-tag"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          autogen: foo.out, 1x  #<
        """, "operator name '1x' is not an identifier", id="autogen-unparsable"),
    pytest.param("""
        - func: _foreach_foo(Tensor[] self) -> Tensor[]
          device_check: ExactSame  #<
          dispatch:
            CPU: foreach_foo
        """, "_foreach functions must use 'device_check: NoCheck'", id="foreach-without-nocheck"),
    pytest.param("""
        - func: rand_foo(Tensor self) -> Tensor  #<
          dispatch:
            CPU: rand_foo
        """, "rand_foo looks random; add 'tags: nondeterministic_seeded'", id="random-name-without-tag"),
    pytest.param("""
        - func: foo(Tensor self, *, Generator? generator=None) -> Tensor
          tags: pointwise  #<
          dispatch:
            CPU: foo
        """, "foo looks random; add 'tags: nondeterministic_seeded'", id="generator-argument-without-tag"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          ufunc_inner_loop:  #<
            Generic: foo_kernel (AllAndComplex)
        """, "ufunc_inner_loop requires structured: True", id="ufunc-on-non-structured"),
    pytest.param("""
        - func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
          structured: True
          ufunc_inner_loop:  #<
            Fancy: foo_kernel (AllAndComplex)
        """, "ufunc_inner_loop entry Fancy: 'foo_kernel (AllAndComplex)' must be KEY: 'name (Dtype, ...)'",
        id="ufunc-unknown-loop-key"),
    pytest.param("""
        - func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
          structured: True
          ufunc_inner_loop: foo_kernel(All)  #<
        """, "must be KEY: 'name (Dtype, ...)'", id="ufunc-malformed-loop"),
    pytest.param("""
        - func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
          structured: True
          ufunc_inner_loop: foo_kernel (All)
          dispatch:  #<
            CPU: foo_out
        """, "a ufunc_inner_loop function must not list CPU in dispatch; it is generated", id="ufunc-with-cpu-kernel"),

    # --- rules across entries -----------------------------------------------------------------
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
        - func: bar(Tensor self) -> Tensor
        - func: foo(Tensor self) -> Tensor  #<
        """, "duplicate function foo (first defined at line 4); rename the overload or remove one",
        id="duplicate-function"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor  #<
          structured_delegate: foo.out
        """, "structured_delegate foo.out does not exist; point it at the structured out= variant",
        id="delegate-to-missing-op"),
    pytest.param("""
        - func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
          structured: True
          dispatch:
            CPU: foo_out
        - func: foo(Tensor self) -> Tensor  #<
          structured_delegate: foo.outt
        """, "structured_delegate foo.outt does not exist; did you mean 'foo.out'?", id="missing-delegate-close"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor  #<
          structured_delegate: foo.out
        - func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
          dispatch:
            CPU: foo_out
        """, "structured_delegate foo.out is not structured; add 'structured: True' to foo.out",
        id="delegate-to-non-structured-op"),
    pytest.param("""
        - func: foo(Tensor(a) self) -> Tensor(a)  #<
          tags: inplace_view
        """, "foo is tagged inplace_view but its name has no trailing '_'", id="inplace-view-not-inplace"),
    pytest.param("""
        - func: foo_(Tensor(a!) self) -> Tensor(a!)  #<
          tags: inplace_view
          dispatch:
            CPU: foo_
        """, "foo_ is tagged inplace_view but there is no out-of-place view 'foo'", id="inplace-view-without-view"),
    pytest.param("""
        - func: foo_(Tensor(a!) self) -> Tensor(a!)  #<
          dispatch:
            CPU: foo_
          autogen: bar.out
        """, "autogen lists bar.out, which is not a variant of foo_; autogen names the derived out= or "
             "functional variant (e.g. foo.out)", id="autogen-names-other-operator"),
    pytest.param("""
        - func: foo(Tensor self) -> int  #<
          dispatch:
            CPU: foo
          autogen: foo.out
        """, "autogen asks for an out= variant of foo, but it returns no tensor", id="autogen-out-without-tensor-return"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor  #<
          dispatch:
            CompositeExplicitAutograd: foo
          autogen: foo.out
        - func: foo.out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)
          dispatch:
            CPU: foo_dim_out
        """, "already defines foo.out with other arguments; list the derived variant under another overload name",
        id="autogen-name-clash"),
    pytest.param("""
        - func: foo.a(Tensor self) -> Tensor
          dispatch:
            CPU: foo_a
        - func: foo.b(Tensor self) -> Tensor  #<
          dispatch:
            CPU: foo_b
        """, "foo.b and foo.a (line 4) are both functional variants of the same signature", id="two-variants-same-kind"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor  #<
          dispatch:
            CPU: foo
        - func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
          structured: True
          dispatch:
            CPU: foo_out
        """, "foo and foo.out form one variant group but only one of them is structured", id="half-structured-group"),
    pytest.param("""
        - func: myops::foo(Tensor self) -> Tensor  #<
          dispatch:
            CPU: foo
        - func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
          dispatch:
            CPU: foo_out
        """, "foo is in namespace myops but its out= variant is in aten", id="group-across-namespaces"),
    pytest.param("""
        - func: foo(Tensor self, Tensor buf) -> (Tensor, Tensor)  #<
          dispatch:
            CPU: foo
        - func: foo.mut(Tensor self, Tensor(a!) buf) -> Tensor
          dispatch:
            CPU: foo_mut
        - func: foo.out(Tensor self, Tensor(a!) buf, *, Tensor(b!) out) -> Tensor(b!)
          dispatch:
            CPU: foo_out
        """, "foo pairs with the mutable foo.mut; name it foo_functional", id="mutable-twin-not-named-functional"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor  #<
          structured_delegate: bar.out
        - func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
          structured: True
        - func: bar.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
          structured: True
        """, "foo delegates to bar.out but its out= variant is foo.out", id="delegate-to-foreign-out"),
    pytest.param("""
        - func: foo(Tensor self) -> Tensor
          dispatch:
            CPU: foo
        - func: foo_copy(Tensor self) -> Tensor  #<
          dispatch:
            CPU: foo_copy
        """, "foo_copy and foo are both functional views of one signature", id="two-views-one-signature"),
]


def _expected_line(snippet: str) -> int:
    lines = [i for i, text in enumerate(snippet.splitlines(), 1) if text.rstrip().endswith(MARK)]
    assert len(lines) == 1, "each case marks exactly one line"
    return lines[0]


@pytest.mark.parametrize("snippet, fragment", CASES)
def test_validation_rule_names_file_line_and_reason(yaml_files, snippet, fragment):
    text = PRELUDE + textwrap.dedent(snippet).lstrip("\n")
    error = yaml_files.errors(text)
    assert len(error.diagnostics) == 1, str(error)
    diagnostic = error.diagnostics[0]
    line = _expected_line(text)
    assert str(diagnostic).startswith(f"{yaml_files.yaml}:{line}: error: "), str(diagnostic)
    assert fragment in diagnostic.message


STRUCTURED_AND_DELEGATE = PRELUDE + """\
- func: add.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  structured_delegate: add.out
  dispatch:
    CPU: add_out
"""
STRUCTURED_AND_DELEGATE_ERROR = (
    "{file}:4: error: add.out is structured and also has structured_delegate: add.out; an out= operator with "
    "structured: True implements the kernel, its functional/in-place variants delegate to it")


def test_structured_and_delegate_is_reported_on_the_entry_line(yaml_files):
    # Before, only the dispatch table's CPU kernel (line 8) was blamed, for a reason unrelated to the mistake.
    error = yaml_files.errors(STRUCTURED_AND_DELEGATE)
    assert str(error) == STRUCTURED_AND_DELEGATE_ERROR.format(file=yaml_files.yaml)


def test_structured_and_delegate_on_the_command_line_exits_2(yaml_files):
    path = yaml_files.write(STRUCTURED_AND_DELEGATE, dedent=False)
    env = dict(os.environ)
    env.pop("OPGEN_DEBUG", None)
    result = subprocess.run([sys.executable, "-m", "opgen", "model", path, "--tags", yaml_files.tags, "--no-cache"],
                            cwd=REPO_ROOT, capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [STRUCTURED_AND_DELEGATE_ERROR.format(file=path)]


def test_top_level_not_a_list(yaml_files):
    error = yaml_files.errors("func: foo(Tensor self) -> Tensor\n")
    assert str(error) == f"{yaml_files.yaml}:1: error: expected a list of entries at the top level (each starting with '- func:')"


def test_file_that_is_not_utf8(yaml_files, tmp_path):
    (tmp_path / "native_functions.yaml").write_bytes(b"- func: caf\xe9(Tensor self) -> Tensor\n")
    with pytest.raises(OpgenError) as info:
        load_model(yaml_files.yaml, yaml_files.tags)
    assert str(info.value).startswith(f"{yaml_files.yaml}:1: error: not UTF-8 text: byte 0xe9 cannot be decoded")


def test_missing_yaml_file(tmp_path):
    missing = str(tmp_path / "nope.yaml")
    with pytest.raises(OpgenError, match="cannot read yaml: No such file"):
        load_model(missing)


@pytest.mark.parametrize("tags_yaml, line, fragment", [
    ("- tag: core\n- desc: no tag here\n", 2, "each tags.yaml entry needs 'tag: NAME'"),
    ("- tag: core\n- tag: pointwise\n- tag: core\n", 3, "tag 'core' is declared twice"),
])
def test_broken_tags_yaml_names_its_own_line(yaml_files, tmp_path, tags_yaml, line, fragment):
    (tmp_path / "tags.yaml").write_text(tags_yaml, encoding="utf-8")
    error = yaml_files.errors("- func: foo(Tensor self) -> Tensor\n")
    assert str(error) == f"{yaml_files.tags}:{line}: error: {fragment}"


def test_namespace_split_ignores_double_colon_inside_a_string_default(yaml_files):
    model = yaml_files.load('- func: foo(Tensor self, str s="a::b") -> Tensor\n')
    (f,) = model.functions
    assert f.namespace == "aten" and str(f.func) == 'foo(Tensor self, str s="a::b") -> Tensor'


def test_custom_namespace_is_kept_apart_from_the_schema(yaml_files):
    model = yaml_files.load("- func: myops::foo(Tensor self) -> Tensor\n")
    (f,) = model.functions
    assert f.namespace == "myops" and str(f.func.name) == "foo"


def test_autogen_uses_the_overload_names_the_yaml_lists(yaml_files):
    # PyTorch writes `autogen: mean.dtype_out` because mean.out already names another variant.
    model = yaml_files.load("""
- func: mean(Tensor self, *, ScalarType? dtype=None) -> Tensor
  dispatch:
    CompositeExplicitAutograd: mean
  autogen: mean.dtype_out
- func: mean.out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CPU: mean_out
- func: normal_(Tensor(a!) self, float mean=0, *, Generator? generator=None) -> Tensor(a!)
  dispatch:
    CPU: normal_
  autogen: normal.functional, normal.out
  tags: nondeterministic_seeded
""")
    names = sorted(str(f.func.name) for f in model.functions)
    assert names == ["mean", "mean.dtype_out", "mean.out", "normal.functional", "normal.out", "normal_"]
