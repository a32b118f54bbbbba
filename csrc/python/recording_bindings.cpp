// opdispatch._C._OperatorRecorder: the C++ OperatorRecorder (dispatch/operator_recorder.h) that
// opdispatch/recording.py's record_operators starts and stops around the program it records.
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "dispatch/operator_recorder.h"
#include "python/bindings.h"

namespace opy {

namespace {

std::vector<std::tuple<std::string, bool>> as_pairs(const std::vector<op::RecordedOperator>& recorded) {
  std::vector<std::tuple<std::string, bool>> pairs;
  pairs.reserve(recorded.size());
  for (const op::RecordedOperator& r : recorded) pairs.emplace_back(r.name, r.is_root);
  return pairs;
}

}  // namespace

void init_recording(py::module_& m) {
  py::class_<op::OperatorRecorder>(m, "_OperatorRecorder",
                                   "Records every operator called, from every thread, while it is active (created "
                                   "active; opdispatch.Error while another recorder is).")
      .def(py::init<>())
      .def("stop", [](op::OperatorRecorder& r) { return as_pairs(r.stop()); },
           "Stops recording; returns [(name, is_root)] sorted by name.")
      .def("operators", [](const op::OperatorRecorder& r) { return as_pairs(r.operators()); },
           "[(name, is_root)] recorded so far, sorted by name.")
      .def_property_readonly("recording", &op::OperatorRecorder::recording);
}

}  // namespace opy
