// Calling operators from Python: _Operator (one overload) and _OpPacket (all overloads of a
// name, resolved per call by trying each schema in overload-name order; first that binds wins).
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "python/bindings.h"
#include "python/call_slot.h"
#include "python/ivalue_conversion.h"
#include "python/overload_resolution.h"
#include "python/py_operator.h"

namespace opy {

std::shared_ptr<const ArgumentParser> PyOperator::parser() {
  const auto& def = handle_.entry().def();
  if (!def)
    op::fail(op::str("operator ", handle_.name(),
                     " has no definition (it was removed, or only kernels were registered for it)"));
  if (!parser_ || def->id != def_id_) {
    parser_ = std::make_shared<const ArgumentParser>(def->schema);
    def_id_ = def->id;
  }
  return parser_;
}

py::object PyOperator::run(const ArgumentParser& parser, op::Stack& stack, const std::vector<PyObject*>& given,
                           const op::DispatchKeySet* ks) {
  {
    py::gil_scoped_release nogil;  // Python kernels take it back; C++ kernels run without it
    if (ks) handle_.redispatch_boxed(*ks, stack);
    else handle_.call_boxed(stack);
  }
  return parser.results(stack, given);
}

namespace {

// Every call binds into fresh locals: operators may be called from several threads.
py::object bind_and_run(PyOperator& op, PyObject* args, PyObject* kwargs, const op::DispatchKeySet* ks) {
  std::shared_ptr<const ArgumentParser> parser = op.parser();
  op::Stack stack;
  std::vector<PyObject*> given;
  std::string error;
  if (!parser->parse(args, kwargs, stack, given, error))
    throw py::type_error(op.name() + "(): " + error);
  return op.run(*parser, stack, given, ks);
}

std::string overload_label(const std::string& overload) { return overload.empty() ? "default" : overload; }

// All overloads of "ns::name", callable without naming one.
class PyOpPacket {
 public:
  explicit PyOpPacket(std::string qualified) : qualified_(std::move(qualified)) {
    op::OperatorName name = op::OperatorName::parse(qualified_);
    OP_CHECK(!name.ns.empty() && name.overload.empty(), "expected 'ns::name' without an overload, got '", qualified_,
             "'");
  }

  const std::string& qualified_name() const { return qualified_; }

  std::vector<std::string> overload_names() const {
    std::vector<std::string> names;
    for (const op::OperatorHandle& h : op::Dispatcher::singleton().find_overloads(qualified_))
      names.push_back(overload_label(h.operator_name().overload));
    return names;
  }

  py::object call(PyObject* args, PyObject* kwargs) {
    // A local reference: other threads may refresh the list while this call runs its kernel.
    std::shared_ptr<const std::vector<op::OperatorHandle>> overloads = current_overloads();
    if (overloads->empty()) op::Dispatcher::singleton().find_op_or_throw(qualified_);  // throws the usual message
    OverloadAttempts attempts;
    std::vector<std::string> schemas, errors;
    for (const op::OperatorHandle& h : *overloads) {
      PyOperator& overload = cached(h);
      std::shared_ptr<const ArgumentParser> parser = overload.parser();
      if (attempts.binds(*parser, args, kwargs)) return attempts.run(overload, *parser);
      schemas.push_back(parser->schema().str());
      errors.push_back(attempts.error());
    }
    throw py::type_error(no_overload_message(qualified_, describe_arguments(args, kwargs), schemas, errors));
  }

 private:
  // Looked up again only when the registry has changed since the last call (a lookup parses
  // the name and scans the registry; a call should not).
  std::shared_ptr<const std::vector<op::OperatorHandle>> current_overloads() {
    const op::Dispatcher& d = op::Dispatcher::singleton();
    const uint64_t generation = d.generation();  // read before the lookup, which waits for registrations
    if (!overloads_ || generation != generation_) {
      overloads_ = std::make_shared<const std::vector<op::OperatorHandle>>(d.find_overloads(qualified_));
      generation_ = generation;
    }
    return overloads_;
  }

  PyOperator& cached(const op::OperatorHandle& h) {
    std::unique_ptr<PyOperator>& slot = cache_[&h.entry()];
    if (!slot) slot = std::make_unique<PyOperator>(h);
    return *slot;
  }

  std::string qualified_;
  std::shared_ptr<const std::vector<op::OperatorHandle>> overloads_;
  uint64_t generation_ = 0;
  std::map<const op::OperatorEntry*, std::unique_ptr<PyOperator>> cache_;  // entries are never freed
};

}  // namespace

py::object PyOperator::call(PyObject* args, PyObject* kwargs) { return bind_and_run(*this, args, kwargs, nullptr); }

py::object PyOperator::redispatch(op::DispatchKeySet ks, const py::args& args, const py::kwargs& kwargs) {
  return bind_and_run(*this, args.ptr(), kwargs.ptr(), &ks);
}

void init_operators(py::module_& m) {
  py::class_<PyOperator> operator_class(m, "_Operator", "One overload of an operator; call it like a Python function.");
  operator_class
      .def("redispatch", &PyOperator::redispatch, py::arg("keyset"),
           "Calls the operator dispatching on `keyset` as given, e.g. keyset.without_highest() from a kernel.")
      .def_property_readonly("name", &PyOperator::name)
      .def_property_readonly("overload_name",
                             [](const PyOperator& o) { return overload_label(o.handle().operator_name().overload); })
      .def_property_readonly("schema", [](PyOperator& o) { return o.parser()->schema().str(); })
      .def("__repr__", [](const PyOperator& o) { return "<opdispatch operator " + o.name() + ">"; });

  py::class_<PyOpPacket> packet_class(m, "_OpPacket", py::dynamic_attr(), "All overloads of an operator name.");
  packet_class
      .def(py::init<std::string>(), py::arg("qualified_name"))
      .def_property_readonly("qualified_name", &PyOpPacket::qualified_name)
      .def("overloads", &PyOpPacket::overload_names, "Overload names in resolution order ('default' for none).")
      .def("__getattr__", [](py::object self, const std::string& name) -> py::object {
        // Only reached when normal lookup fails; the overload found is kept as an attribute.
        if (name.rfind("__", 0) == 0) throw py::attribute_error(name);
        const PyOpPacket& packet = self.cast<const PyOpPacket&>();
        const std::string full = name == "default" ? packet.qualified_name() : packet.qualified_name() + "." + name;
        std::optional<op::OperatorHandle> h;
        try {
          h = op::Dispatcher::singleton().find_op(full);
        } catch (const op::Error& e) {  // not a valid overload name: hasattr() must say False
          throw py::attribute_error(e.what());
        }
        if (!h) {
          std::string names;
          for (const std::string& n : packet.overload_names()) names += (names.empty() ? "" : ", ") + n;
          throw py::attribute_error("operator " + packet.qualified_name() + " has no overload '" + name +
                                    "'; overloads: " + (names.empty() ? "(none)" : names));
        }
        py::object overload = py::cast(PyOperator(*h));
        py::setattr(self, name.c_str(), overload);
        return overload;
      })
      .def("__repr__", [](const PyOpPacket& p) { return "<opdispatch operator packet " + p.qualified_name() + ">"; });
  install_call_slot(operator_class);
  install_call_slot(packet_class);

  m.def("_find_op", [](const std::string& name) -> py::object {
    std::optional<op::OperatorHandle> h = op::Dispatcher::singleton().find_op(name);
    return h ? py::cast(PyOperator(*h)) : py::none();
  }, py::arg("name"), "The operator 'ns::name.overload' (or 'ns::name'), or None when it is not defined.");
}

}  // namespace opy
