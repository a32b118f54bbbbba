// opdispatch.functionalization's runtime: functional tensor wrappers, the thread's
// functionalization mode (Functionalize in the thread-local include set) and traces of the calls
// the Functionalize layer issues below itself.
#include <memory>

#include "dispatch/local_dispatch_key_set.h"
#include "functionalization/functionalization.h"
#include "python/bindings.h"

namespace opy {

namespace {

// Functionalize in the thread's include set while entered, so every operator call (factories
// too) goes through the Functionalize layer.
class FunctionalizeMode {
 public:
  void enter() {
    if (!guard_) guard_ = std::make_unique<op::IncludeKeyGuard>(op::DispatchKey::Functionalize);
  }
  void exit() { guard_.reset(); }

 private:
  std::unique_ptr<op::IncludeKeyGuard> guard_;
};

}  // namespace

void init_functionalization(py::module_& m) {
  namespace fz = op::functionalization;
  m.def("_is_functional", [](const op::TensorBase& t) { return t.is_functional(); });
  m.def("_to_functional", [](const op::TensorBase& t) {
    if (t.is_functional()) throw op::Error("to_functional: the tensor is already functional");
    return fz::to_functional(t);
  });
  m.def("_from_functional", [](const op::TensorBase& t) {
    if (!t.is_functional()) throw op::Error("from_functional: the tensor is not functional");
    return fz::from_functional(t);
  });
  m.def("_sync", [](const op::TensorBase& t) { fz::sync(t); });
  m.def("_start_trace", &fz::start_trace);
  m.def("_stop_trace", &fz::stop_trace);
  m.def("_functionalization_enabled", &fz::enabled_on_thread);
  py::class_<FunctionalizeMode>(m, "_FunctionalizeMode")
      .def(py::init<>())
      .def("__enter__", [](FunctionalizeMode& mode) { mode.enter(); })
      .def("__exit__", [](FunctionalizeMode& mode, py::object, py::object, py::object) {
        mode.exit();
        return false;
      });
}

}  // namespace opy
