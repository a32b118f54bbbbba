"""The lazy-tensor backend (scons --backend=lazy), end to end: programs recorded as IR, run by
mark_step() through the graph cache, checked against eager CPU. The backend's kernels live at
the Lazy key, where the other runtime tests register Python kernels, so every program runs in
its own interpreter (lazy_programs.py) over the one tree the `lazy` fixture builds."""
import json
import os
import re
import subprocess
import sys

import pytest

PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lazy_programs.py")


def run_program(python_path: str, name: str) -> dict:
    env = dict(os.environ, PYTHONPATH=python_path)
    run = subprocess.run([sys.executable, PROGRAMS, name], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, f"lazy program {name} failed:\n{run.stdout[-2000:]}\n{run.stderr[-6000:]}"
    return json.loads(run.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def program(lazy_python):
    return lambda name: run_program(lazy_python, name)


def test_mlp_forward_matches_eager_and_the_second_step_hits_the_graph_cache(program):
    facts = program("mlp")
    first, second = facts["first"], facts["second"]
    assert first["graphs_compiled"] == 1 and first["graph_cache_misses"] == 1 and first["graph_cache_hits"] == 0
    # New data, same structure: the plan is found, nothing is compiled again.
    assert second["graphs_compiled"] == 1 and second["graph_cache_hits"] == 1 and second["graph_cache_misses"] == 1
    assert second["graph_cache_size"] == 1
    # addmm, relu, addmm, sum, mean per step; the inputs are data nodes, not calls
    assert first["nodes_executed"] == 5 and second["nodes_executed"] == 10
    # five calls over five data nodes (x, w1, b1, w2, b2) and the constants of addmm's beta and alpha
    assert first["last_plan"]["nodes"] == 5 + 5 + 4
    assert first["fallbacks"] == {} and second["fallbacks"] == {}
    ops = re.findall(r"^%\d+ = ([\w:.]+)\(", facts["ir"], re.M)
    assert sorted(set(ops)) == ["aten::addmm", "aten::mean", "aten::relu", "aten::sum", "lazy::device_data", "scalar"]
    assert facts["ir"].splitlines()[-1].startswith("roots: ")


def test_pointwise_chains_broadcast_and_promote_as_eager(program):
    facts = program("pointwise")
    assert facts["first"]["graphs_compiled"] == 1 and facts["first"]["fallbacks"] == {}
    assert facts["second"]["graphs_compiled"] == 1 and facts["second"]["graph_cache_hits"] == 1


def test_views_and_mutations_reach_the_ir_as_copies_only(program):
    facts = program("views")
    ops = facts["ops"]
    assert {"aten::view_copy", "aten::t_copy", "aten::select_copy.int", "aten::slice_copy.Tensor",
            "aten::unsqueeze_copy"} <= set(ops), facts["ir"]
    assert any(op.endswith("_scatter") for op in ops), facts["ir"]  # writes through a view go back to the base
    names = {op.split("::")[-1].split(".")[0] for op in ops}
    assert not names & {"view", "t", "transpose", "select", "slice", "unsqueeze", "unsqueeze_"}, facts["ir"]
    assert not [op for op in ops if op.split("::")[-1].split(".")[0].endswith("_")], facts["ir"]  # no in-place op
    assert facts["metrics"]["fallbacks"] == {}


def test_aliasing_survives_mark_step(program):
    facts = program("aliasing_across_steps")
    assert facts["metrics"]["fallbacks"] == {}


def test_unlisted_operators_fall_back_to_cpu_and_are_counted(program):
    fallbacks = program("fallbacks")["metrics"]["fallbacks"]
    # rand: uniform_ on the cpu; arange: its out= variant; matmul decomposes into mm, which the backend lists
    assert fallbacks == {"aten::uniform_": 1, "aten::arange.start_out": 1}


def test_plans_reuse_buffers_and_scalar_constants_are_not_structure(program):
    facts = program("cache_and_buffers")
    first, second = facts["3.0"], facts["5.0"]
    assert first["graphs_compiled"] == 1 and second["graphs_compiled"] == 1 and second["graph_cache_hits"] == 1
    # x, the constant, its expand, add, add's alpha and 20 unary nodes; at most four values are alive at once
    assert first["last_plan"]["nodes"] == 25 and first["last_plan"]["buffers"] <= 4


def test_a_new_python_float_each_step_reuses_one_graph(program):
    """Scalars are IR operands (constant nodes whose value is read when the graph runs), as lazy
    tensor core makes them: multiplying by a different float each step compiles one graph (one
    cache miss, then hits) and gives eager's values (checked in the program). As attributes, each
    step's value was part of the graph's hash: six steps compiled six graphs."""
    facts = program("scalar_loop")
    steps = facts["steps"]
    assert [s["graphs_compiled"] for s in steps] == [1] * 6
    assert [s["graph_cache_misses"] for s in steps] == [1] * 6
    assert [s["graph_cache_hits"] for s in steps] == [0, 1, 2, 3, 4, 5]
    # mul.Scalar(x, s): the float is a float64 constant operand; add.Scalar's other and alpha too
    assert re.search(r"^%1 = scalar\(\), value=0\.9\d*, type=float64 -> float64\[\]$", facts["ir"], re.M), facts["ir"]
    assert "aten::mul.Scalar(%0, %1) -> float32[3, 4]" in facts["ir"]
    assert steps[-1]["nodes_executed"] == 6 * 3  # constants are inputs, not calls: mul, tanh, add per step
    assert steps[-1]["fallbacks"] == {}


def test_a_long_chain_runs_and_is_freed_without_deep_recursion(program):
    facts = program("long_chain")
    assert facts["lines"] == 200_000 + 2  # the data node, every neg, the roots line
    assert facts["metrics"]["nodes_executed"] == 200_000 and facts["metrics"]["last_plan"]["buffers"] == 2


def test_bad_programs_raise_errors_that_say_what_is_wrong(program):
    messages = program("errors")
    assert messages["device"] == "Error: aten::add.Tensor: lazy: expected all tensors on the lazy device, but found one on cpu"
    assert "The size of tensor a (3) must match the size of tensor b (4)" in messages["shape"]
    assert messages["plain_view"].startswith("Error: ")  # a view of a plain lazy tensor has no memory to view
    assert messages["ir_text"] == "Error: ir_text: expected lazy tensors, got one on cpu"
    assert messages["ir_text_type"] == "TypeError: ir_text: expected opdispatch.Tensor arguments, got list"


def test_dtype_changes_copies_and_factories(program):
    facts = program("dtypes_and_moves")
    assert facts["ops"].count("cast") == 2 and "aten::expand_copy" in facts["ops"]  # conversions stay in the graph
    assert facts["metrics"]["fallbacks"] == {}


def test_mlp_training_steps_match_eager_and_reuse_the_first_steps_graph(program):
    """Forward, loss.backward(), SGD under no_grad, grads dropped, mark_step(): three steps give
    eager's losses and weights (checked in the program, within 1e-5), in one graph per step that
    holds forward, backward and update, compiled once."""
    facts = program("mlp_training")
    first, second, third = facts["steps"]
    assert first["graphs_compiled"] == 1 and first["graph_cache_misses"] == 1 and first["graph_cache_hits"] == 0
    for step, hits in ((second, 1), (third, 2)):  # same structure, new data: no new graph
        assert step["graphs_compiled"] == 1 and step["graph_cache_misses"] == 1 and step["graph_cache_hits"] == hits
        assert step["graph_cache_size"] == 1 and step["graphs_executed"] == hits + 1
    assert third["fallbacks"] == {}  # every backward formula's operator has an IR node
    ops = facts["ops"]
    assert ops.count("aten::mm") == 2 + 3  # forward; the gradients of hidden, w1 and w2
    assert {"aten::relu", "aten::le.Scalar", "aten::masked_fill.Scalar", "aten::mean", "aten::sum.dim_IntList",
            "aten::t_copy"} <= set(ops), facts["ir"]
    assert not [op for op in ops if op.startswith("aten::") and op.split("::")[1].split(".")[0].endswith("_")]
    assert facts["ir"].splitlines()[-1].count("%") == 5  # roots: the loss and the four updated weights


def test_training_with_gradients_zeroed_in_place_compiles_a_second_structure_once(program):
    steps = program("mlp_training_zeroed_grads")["steps"]  # values checked against eager in the program
    # Step 1 makes the gradients, step 2 adds into them: two structures, then step 3 hits step 2's.
    assert [s["graphs_compiled"] for s in steps] == [1, 2, 2]
    assert [s["graph_cache_hits"] for s in steps] == [0, 0, 1]
    assert steps[-1]["fallbacks"] == {}


def test_gradients_cross_devices_and_flow_through_views_of_lazy_tensors(program):
    # cpu leaf -> lazy, lazy leaf -> cpu, a 0-d cpu tensor requiring grad among lazy tensors (its
    # gradient moves back to the cpu), CopySlices over a lazy base: same gradients as on the cpu.
    assert program("autograd_across_devices")["metrics"]["fallbacks"] == {}


def test_module_without_the_backend_imports_and_says_how_to_build_it(python_tree_without):
    script = (
        "import opdispatch.lazy as lazy\n"
        "assert not lazy.is_built() and lazy.device() == 'lazy'\n"
        "try:\n"
        "    lazy.mark_step()\n"
        "except RuntimeError as e:\n"
        "    print(e)\n"
    )
    env = dict(os.environ, PYTHONPATH=python_tree_without("_lazy"))
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    assert "build it with scons --backend=lazy" in run.stdout
