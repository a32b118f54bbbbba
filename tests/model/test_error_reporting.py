"""Every problem of a file is reported in one run, in file order, up to ERROR_CAP."""
import pytest

from opgen.model import loader

THREE_BROKEN = """\
- func: good(Tensor self) -> Tensor

- func: bad_key(Tensor self) -> Tensor
  dispatch:
    CPUU: bad_key

- func: bad_type(Tensr self) -> Tensor

- func: good_too(Tensor self) -> Tensor

- func: bad_variant(Tensor self) -> Tensor
  variants: functoin
"""


def test_independent_errors_are_all_reported_in_one_run(yaml_files):
    error = yaml_files.errors(THREE_BROKEN)
    lines = [str(d) for d in error.diagnostics]
    assert len(lines) == 3
    assert lines[0].startswith(f"{yaml_files.yaml}:5: error: unknown dispatch key 'CPUU'")
    assert lines[1].startswith(f"{yaml_files.yaml}:7: error: unknown type 'Tensr'")
    assert lines[2].startswith(f"{yaml_files.yaml}:12: error: unknown variant 'functoin'")
    assert str(error) == "\n".join(lines)


def test_entry_errors_and_cross_entry_errors_come_together(yaml_files):
    error = yaml_files.errors("""\
        - func: foo(Tensor self) -> Tensor
          structured_delegate: foo.out
        - func: bar(Tensor self) -> Tensor
          variants: nope
        - func: foo(Tensor self) -> Tensor
        """)
    assert [(d.location.line, d.message.split(";")[0]) for d in error.diagnostics] == [
        (1, "structured_delegate foo.out does not exist"),
        (4, "unknown variant 'nope'"),
        (5, "duplicate function foo (first defined at line 1)"),
    ]


def test_broken_delegate_target_does_not_cascade(yaml_files):
    """An entry that fails to parse is not also reported as a missing structured_delegate target."""
    error = yaml_files.errors("""\
        - func: foo(Tensor self) -> Tensor
          structured_delegate: foo.out
        - func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
          structured: True
          dispatch:
            CPUU: foo_out
        """)
    assert [d.location.line for d in error.diagnostics] == [6]


def test_error_cap_is_honoured_with_a_count_of_the_rest(yaml_files):
    assert loader.ERROR_CAP == 50
    n = loader.ERROR_CAP + 7
    text = "".join(f"- func: op{i}(Tensor self) -> Tensor\n  variants: bogus\n" for i in range(n))
    error = yaml_files.errors(text)
    assert len(error.diagnostics) == loader.ERROR_CAP + 1
    shown = error.diagnostics[:-1]
    assert [d.location.line for d in shown] == [2 * i + 2 for i in range(loader.ERROR_CAP)]
    assert str(error.diagnostics[-1]) == "error: ... and 7 more errors not shown"


def test_exactly_cap_errors_has_no_more_line(yaml_files):
    text = "".join(f"- func: op{i}(Tensor self) -> Tensor\n  variants: bogus\n" for i in range(loader.ERROR_CAP))
    error = yaml_files.errors(text)
    assert len(error.diagnostics) == loader.ERROR_CAP
    assert "more errors not shown" not in str(error)


def test_every_problem_of_one_entry_is_reported(yaml_files):
    """A bad type, an unknown key and an unknown dispatch key in one entry: three errors, by line."""
    error = yaml_files.errors("""\
        - func: good(Tensor self) -> Tensor
        - func: foo(Tensor self, flaot alpha) -> Tensor
          dispath: nothing
          variants: function
          dispatch:
            CPU: foo
            CUDAA: foo_cuda
        """)
    assert [str(d) for d in error.diagnostics] == [
        f"{yaml_files.yaml}:2: error: unknown type 'flaot'; did you mean 'float'?",
        f"{yaml_files.yaml}:3: error: unknown key 'dispath'; did you mean 'dispatch'?",
        f"{yaml_files.yaml}:7: error: unknown dispatch key 'CUDAA' for kernel foo_cuda; did you mean 'CUDA'?",
    ]


def test_every_bad_row_of_a_dispatch_table_is_reported(yaml_files):
    error = yaml_files.errors("""\
        - func: foo(Tensor self) -> Tensor
          dispatch:
            CPUU: foo
            CUDA: class
            Meta, Metaa: foo
        """)
    assert [(d.location.line, d.message.split(";")[0]) for d in error.diagnostics] == [
        (3, "unknown dispatch key 'CPUU' for kernel foo"),
        (4, "kernel name 'class' is a C++ keyword"),
        (5, "unknown dispatch key 'Metaa' for kernel foo"),
    ]


def test_independent_keys_of_one_entry_are_each_reported(yaml_files):
    error = yaml_files.errors("""\
        - func: foo(Tensor self) -> Tensor
          variants: functoin
          device_check: Maybe
          device_guard: perhaps
          tags: [cor]
          structured_delegate: 3
        """)
    assert [d.location.line for d in error.diagnostics] == [2, 3, 4, 5, 6]
    assert "did you mean 'core'?" in error.diagnostics[3].message


def test_a_broken_key_does_not_also_blame_what_depends_on_it(yaml_files):
    """With 'structured' unreadable, precomputed and ufunc_inner_loop are not judged against a default."""
    error = yaml_files.errors("""\
        - func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
          structured: 'True'
          precomputed:
          - int k
          ufunc_inner_loop:
            Generic: foo (AllAndComplex)
        """)
    assert [d.location.line for d in error.diagnostics] == [2]


def test_a_broken_delegate_does_not_also_blame_the_dispatch_table(yaml_files):
    error = yaml_files.errors("""\
        - func: foo(Tensor self) -> Tensor
          structured_delegate: foo.out(
          dispatch:
            CompositeImplicitAutograd: foo_impl
        """)
    assert [d.location.line for d in error.diagnostics] == [2]


def test_problems_are_sorted_by_line_within_and_across_entries(yaml_files):
    error = yaml_files.errors("""\
        - func: foo(Tensor self) -> Tensor
          structured_delegate: fooo.out
        - func: bar(Tensr self) -> Tensor
          bogus_key: 1
          variants: nope
        """)
    assert [(d.location.line, d.message.split(";")[0]) for d in error.diagnostics] == [
        (1, "structured_delegate fooo.out does not exist"),
        (3, "unknown type 'Tensr'"),
        (4, "unknown key 'bogus_key'"),
        (5, "unknown variant 'nope'"),
    ]


@pytest.mark.parametrize("word, choices, expected", [
    ("flaot", ["float", "int", "bool"], "did you mean 'float'?"),
    ("cpu", ["CPU", "CUDA"], "did you mean 'CPU'?"),       # case is ignored, the choice comes back as written
    ("banana", ["CPU", "CUDA"], "known: CPU, CUDA"),       # nothing close: the fallback
])
def test_did_you_mean_is_the_one_helper_for_unknown_names(word, choices, expected):
    from opgen.errors import did_you_mean

    assert did_you_mean(word, choices, "known: CPU, CUDA") == expected
    assert did_you_mean(word, reversed(choices), "known: CPU, CUDA") == expected  # order-independent
