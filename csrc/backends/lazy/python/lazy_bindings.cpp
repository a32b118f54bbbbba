// opdispatch._lazy: loads the lazy backend (libopdispatch_lazy.so registers its kernels, its
// fallback and the "lazy" device when it is loaded) and exposes the step boundary, the pending
// IR and the metrics. The Python API is opdispatch/lazy.py. Tensors arrive as opdispatch.Tensor
// (the type opdispatch._C registers with pybind11, shared between extensions).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "backends/lazy/graph.h"
#include "backends/lazy/lazy_tensor.h"
#include "backends/lazy/metrics.h"

namespace py = pybind11;

namespace {

py::dict metrics_dict() {
  using op::lazy::Counter;
  const op::lazy::Metrics m = op::lazy::metrics();
  py::dict out;
  out["ir_nodes_created"] = m[Counter::IrNodesCreated];
  out["ir_nodes_reused"] = m[Counter::IrNodesReused];
  out["graphs_compiled"] = m[Counter::GraphsCompiled];
  out["graph_cache_hits"] = m[Counter::GraphCacheHits];
  out["graph_cache_misses"] = m[Counter::GraphCacheMisses];
  out["graphs_executed"] = m[Counter::GraphsExecuted];
  out["nodes_executed"] = m[Counter::NodesExecuted];
  out["tensors_materialized"] = m[Counter::TensorsMaterialized];
  py::dict plan;
  plan["nodes"] = m.last_plan_nodes;
  plan["buffers"] = m.last_plan_buffers;
  out["last_plan"] = plan;
  out["graph_cache_size"] = op::lazy::graph_cache_size();
  out["fallbacks"] = py::cast(m.fallbacks);
  return out;
}

}  // namespace

PYBIND11_MODULE(_lazy, m) {
  m.doc() = "The lazy-tensor backend: IR recorded per operator, run by mark_step() through a graph cache.";
  m.def("mark_step", &op::lazy::mark_step, "Runs the pending IR of every live lazy tensor as one graph.");
  m.def("sync", &op::lazy::sync_tensors, py::arg("tensors"), "Runs what the given tensors need and materializes them.");
  m.def("ir_text", &op::lazy::ir_text, py::arg("tensors"), "The pending graph of the tensors (all when empty).");
  m.def("metrics", &metrics_dict, "Counters since the last reset_metrics(); see opdispatch/lazy.py.");
  m.def("reset_metrics", &op::lazy::reset_metrics, "Sets every counter to zero (compiled plans stay cached).");
  m.def("device_type_name", [] { return std::string(op::device_type_name(op::lazy::lazy_device_type())); },
        "The device name the backend registered ('lazy').");
}
