// Introspection (dump, dump_table, check_invariants), DispatchKeySet, thread-local
// include/exclude guards, and device types for Python.
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <thread>

#include "core/device.h"
#include "core/error.h"
#include "dispatch/dispatcher.h"
#include "dispatch/local_dispatch_key_set.h"
#include "dispatch/registration.h"
#include "python/bindings.h"

namespace opy {

op::DispatchKey parse_key(const std::string& name) {
  try {
    return op::parse_dispatch_key(name);
  } catch (const op::Error& e) {
    throw py::value_error(e.what());
  }
}

namespace {

using op::DispatchKey;
using op::DispatchKeySet;

DispatchKey parse_runtime_key(const std::string& name) {
  DispatchKey k = parse_key(name);
  if (!op::is_runtime_key(k)) throw py::value_error(name + " is an alias key, not a runtime key");
  return k;
}

// A key name or an iterable of them; alias keys stand for the runtime keys they cover.
DispatchKeySet keyset_from(py::handle keys) {
  DispatchKeySet ks;
  if (py::isinstance<DispatchKeySet>(keys)) return keys.cast<DispatchKeySet>();
  if (py::isinstance<py::str>(keys)) return op::runtime_keys_of(parse_key(keys.cast<std::string>()));
  for (py::handle k : keys) ks = ks | keyset_from(k);
  return ks;
}

std::vector<std::string> key_names(DispatchKeySet ks) {
  std::vector<std::string> names;
  for (DispatchKey k : ks.keys_high_to_low()) names.emplace_back(op::to_string(k));
  return names;
}

// `with include_keys(...)` / `with exclude_keys(...)`: a guard entered and exited on one thread.
class KeyGuard {
 public:
  KeyGuard(bool include, DispatchKeySet keys) : include_(include), keys_(keys) {}
  ~KeyGuard() {
    if (std::this_thread::get_id() != thread_) {  // collected elsewhere: must not touch this thread's sets
      (void)include_guard_.release();
      (void)exclude_guard_.release();
    }
  }
  void enter() {
    if (include_guard_ || exclude_guard_) throw py::value_error("this key guard is already active");
    thread_ = std::this_thread::get_id();
    if (include_) include_guard_ = std::make_unique<op::IncludeKeyGuard>(keys_);
    else exclude_guard_ = std::make_unique<op::ExcludeKeyGuard>(keys_);
  }
  void exit() {
    if (std::this_thread::get_id() != thread_) throw py::value_error("a key guard must be exited on the thread that entered it");
    include_guard_.reset();
    exclude_guard_.reset();
  }
  DispatchKeySet keys() const { return keys_; }

 private:
  bool include_;
  DispatchKeySet keys_;
  std::thread::id thread_ = std::this_thread::get_id();
  std::unique_ptr<op::IncludeKeyGuard> include_guard_;
  std::unique_ptr<op::ExcludeKeyGuard> exclude_guard_;
};

}  // namespace

void init_dispatcher(py::module_& m) {
  py::class_<DispatchKeySet>(m, "DispatchKeySet", "A set of runtime dispatch keys; the highest one runs.")
      .def(py::init([](py::object keys) { return keyset_from(keys); }), py::arg("keys") = py::tuple())
      .def("highest", [](DispatchKeySet ks) { return op::to_string(ks.highest()); },
           "The highest-priority key ('Undefined' for the empty set).")
      .def("without_highest", &DispatchKeySet::without_highest)
      .def("below", [](DispatchKeySet ks, const std::string& k) { return ks.below(parse_runtime_key(k)); })
      .def("add", [](DispatchKeySet ks, const std::string& k) { return ks.add(parse_runtime_key(k)); })
      .def("remove", [](DispatchKeySet ks, const std::string& k) { return ks.remove(parse_runtime_key(k)); })
      .def("has", [](DispatchKeySet ks, const std::string& k) { return ks.has(parse_runtime_key(k)); })
      .def("__contains__", [](DispatchKeySet ks, const std::string& k) { return ks.has(parse_runtime_key(k)); })
      .def("keys", &key_names, "Key names, highest priority first.")
      .def("__len__", [](DispatchKeySet ks) { return ks.keys_high_to_low().size(); })
      .def("__or__", [](DispatchKeySet a, DispatchKeySet b) { return a | b; })
      .def("__sub__", [](DispatchKeySet a, DispatchKeySet b) { return a - b; })
      .def("__eq__", [](DispatchKeySet a, py::object b) {
        return py::isinstance<DispatchKeySet>(b) && b.cast<DispatchKeySet>() == a;
      })
      .def("__hash__", [](DispatchKeySet ks) { return py::hash(py::int_(ks.raw())); })
      .def("__repr__", [](DispatchKeySet ks) { return "DispatchKeySet(" + ks.to_string() + ")"; });

  py::class_<KeyGuard>(m, "_KeyGuard")
      .def(py::init([](bool include, py::object keys) { return std::make_unique<KeyGuard>(include, keyset_from(keys)); }),
           py::arg("include"), py::arg("keys"))
      .def("__enter__", [](KeyGuard& g) { g.enter(); return g.keys(); })
      .def("__exit__", [](KeyGuard& g, py::args) { g.exit(); return false; });

  m.def("_local_keys", []() {
    const op::LocalDispatchKeySet& local = op::tls_local_dispatch_key_set;
    return py::make_tuple(local.included, local.excluded);
  }, "(included, excluded): this thread's key sets.");
  m.def("_dispatch_keyset_of", [](py::object keys) { return keyset_from(keys); });

  m.def("_dump", [](const std::string& name) { return op::Dispatcher::singleton().dump(name); }, py::arg("name"));
  m.def("_dump_table", [](const std::string& name) {
    py::dict table;
    for (const auto& [key, label] : op::Dispatcher::singleton().dump_table(name)) table[py::str(key)] = py::str(label);
    return table;
  }, py::arg("name"));
  m.def("_check_invariants", [](const std::string& name) { op::Dispatcher::singleton().check_invariants(name); },
        py::arg("name"));
  m.def("_op_names", []() { return op::Dispatcher::singleton().op_names(); });
  m.def("_static_registration_errors", &op::static_registration_errors);

  m.def("_register_device_type", [](const std::string& name, const std::string& key) {
    return std::string(op::device_type_name(op::register_device_type(name, parse_key(key))));
  }, py::arg("name"), py::arg("dispatch_key"));
  m.def("_backend_key_of", [](const std::string& device) {
    return std::string(op::to_string(op::backend_key_of(op::Device(device).type())));
  }, py::arg("device"));
}

}  // namespace opy
