// _Library: op::Library for Python (opdispatch.library.Library wraps it). Kernels are Python
// callables, the built-in identity kernel (fn=None) or fallthrough; closing the library (or
// collecting it) undoes its registrations.
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>

#include "core/error.h"
#include "dispatch/registration.h"
#include "python/bindings.h"
#include "python/python_kernels.h"

namespace opy {

namespace {

op::Library::Kind parse_kind(const std::string& kind) {
  if (kind == "DEF") return op::Library::DEF;
  if (kind == "IMPL") return op::Library::IMPL;
  if (kind == "FRAGMENT") return op::Library::FRAGMENT;
  throw py::value_error("library kind must be 'DEF', 'IMPL' or 'FRAGMENT', not '" + kind + "'");
}

const char* kind_name(op::Library::Kind kind) {
  return kind == op::Library::DEF ? "DEF" : kind == op::Library::IMPL ? "IMPL" : "FRAGMENT";
}

void check_callable(const py::object& fn, const char* what) {
  if (!PyCallable_Check(fn.ptr())) throw py::type_error(std::string(what) + ": fn must be callable");
}

}  // namespace

void init_library(py::module_& m) {
  py::class_<op::Library>(m, "_Library")
      .def(py::init([](const std::string& ns, const std::string& kind, std::optional<std::string> key) {
             std::optional<op::DispatchKey> k;
             if (key) k = parse_key(*key);
             return std::make_unique<op::Library>(parse_kind(kind), ns, k);
           }),
           py::arg("ns"), py::arg("kind"), py::arg("dispatch_key") = py::none())
      .def("define", [](op::Library& lib, const std::string& schema, const std::string& debug) { lib.def(schema, debug); },
           py::arg("schema"), py::arg("debug") = "")
      .def("impl",
           [](op::Library& lib, const std::string& name, const std::string& key, py::object fn, const std::string& debug,
              bool with_keyset, bool fallthrough) {
             op::KernelFunction kernel;
             if (fallthrough) {
               if (!fn.is_none()) throw py::type_error("impl: pass either fn or fallthrough=True, not both");
               kernel = op::KernelFunction::fallthrough();
             } else if (fn.is_none()) {
               kernel = identity_kernel();
             } else {
               check_callable(fn, "impl");
               kernel = python_kernel(std::move(fn), with_keyset);
             }
             lib.impl(name, parse_key(key), std::move(kernel), debug);
           },
           py::arg("name"), py::arg("dispatch_key"), py::arg("fn") = py::none(), py::arg("debug") = "",
           py::arg("with_keyset") = false, py::arg("fallthrough") = false)
      .def("fallback",
           [](op::Library& lib, const std::string& key, py::object fn, const std::string& debug) {
             op::KernelFunction kernel = op::KernelFunction::fallthrough();
             if (!fn.is_none()) {
               check_callable(fn, "fallback");
               kernel = python_fallback(std::move(fn));
             }
             lib.fallback(parse_key(key), std::move(kernel), debug);
           },
           py::arg("dispatch_key"), py::arg("fn") = py::none(), py::arg("debug") = "")
      .def("close", &op::Library::close)
      .def_property_readonly("ns", &op::Library::ns)
      .def_property_readonly("kind", [](const op::Library& lib) { return kind_name(lib.kind()); })
      .def_property_readonly("num_registrations", &op::Library::num_registrations);
}

}  // namespace opy
