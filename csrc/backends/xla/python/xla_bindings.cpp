// opdispatch._xla: loads the xla backend (libopdispatch_xla.so registers its kernels, its
// fallback and the "xla" device when it is loaded) and exposes its metrics. The Python API is
// opdispatch/xla.py.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "backends/xla/metrics.h"
#include "backends/xla/xla_device.h"

namespace py = pybind11;

namespace {

py::dict metrics_dict() {
  const op::xla::Metrics m = op::xla::metrics();
  py::list trace;
  for (const auto& [kind, name] : m.trace) trace.append(py::make_tuple(op::xla::to_string(kind), name));
  py::dict out;
  out["kernels"] = py::cast(m.kernels);
  out["fallbacks"] = py::cast(m.fallbacks);
  out["autograd"] = py::cast(m.autograd);
  out["trace"] = trace;
  return out;
}

}  // namespace

PYBIND11_MODULE(_xla, m) {
  m.doc() = "The sample xla backend: its kernels, CPU fallback and per-operator metrics.";
  m.def("metrics", &metrics_dict,
        "{'kernels': {op: calls}, 'fallbacks': {op: calls}, 'autograd': {op: calls}, "
        "'trace': [(kind, op), ...] in call order}");
  m.def("reset_metrics", &op::xla::reset_metrics, "Sets every counter to zero and empties the trace.");
  m.def("device_type_name", [] { return std::string(op::device_type_name(op::xla::xla_device_type())); },
        "The device name the backend registered ('xla').");
}
