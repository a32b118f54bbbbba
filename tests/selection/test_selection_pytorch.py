"""Closures over PyTorch 2.13's yaml (with its derivatives.yaml): a small selection closes in well
under a second of rendering, the rules hold at that scale, and the checkout's runtime sources
resolve against PyTorch's groups. csrc/native implements our yaml, so as `scons --kernels=auto`
does for another yaml, its kernel sources are left out here."""
import os
import time

import pytest

from opgen.model import load_model
from opgen.selection import GeneratedCallees, ReasonKind, close_selection, index_sources, read_csrc
from opgen.selection.load import parse_selection

from selection_helpers import CSRC, build_config

MLP = """\
operators:
  aten::addmm: {is_root_operator: true, include_all_overloads: false}
  aten::relu: {is_root_operator: true, include_all_overloads: false}
  aten::_log_softmax: {is_root_operator: true, include_all_overloads: false}
  aten::nll_loss_nd: {is_root_operator: true, include_all_overloads: false}
  aten::sum: {is_root_operator: true}
  aten::view: {is_root_operator: false, include_all_overloads: false}
"""


@pytest.fixture(scope="module")
def pytorch(real_data_dir):
    model = load_model(os.path.join(real_data_dir, "native_functions.yaml"), os.path.join(real_data_dir, "tags.yaml"))
    config = build_config(model, os.path.join(real_data_dir, "derivatives.yaml"))
    sources, runtime = read_csrc(CSRC, kernels=False)
    return model, config, index_sources(sources, {g.name for g in model.operator_groups}, runtime)


def test_a_small_selection_closes_quickly(pytorch):
    model, config, hand = pytorch
    callees = GeneratedCallees(model, config)
    started = time.perf_counter()
    selection = parse_selection(MLP.encode(), "mlp.yaml", model)
    closure = close_selection(selection, model, callees, hand)
    seconds = time.perf_counter() - started
    print(f"\nPyTorch 2.13: {len(selection.keys)} operators selected -> {len(closure.groups)} of "
          f"{len(model.operator_groups)} groups, {len(closure.operators)} operators, {len(closure.sources)} "
          f"hand-written sources; {callees.rendered} groups rendered; {seconds:.2f} s")
    assert seconds < 20  # ~0.1 s here: only reached groups are rendered
    assert callees.rendered == len(closure.groups) < len(model.operator_groups) // 4
    # aten::sum with torchgen's default include_all_overloads: every overload of sum
    assert {"sum", "sum.dim_IntList", "sum.IntList_out"} <= set(selection.keys)
    assert closure.explain("addmm.out").startswith("addmm.out: structured: addmm delegates to addmm.out; addmm: selected")
    assert closure.reasons["view_copy"][0].kind in (ReasonKind.RUNTIME_CALL, ReasonKind.GENERATED)
    assert ("view", "ops/view_Functionalize.cpp") in [(r.via, r.source) for r in closure.reasons["view_copy"]]
    assert closure.explain("_log_softmax_backward_data").startswith(
        "_log_softmax_backward_data: called by _log_softmax's generated ops/_log_softmax_Autograd.cpp")
    # the runtime calls only operators PyTorch's yaml has
    assert closure.unresolved == ()
    assert all(closure.source_reasons[path].kind == "runtime" for path in closure.sources)
