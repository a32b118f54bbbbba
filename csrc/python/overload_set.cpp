// _C._OverloadSet: one Python-visible function or method over a fixed list of operator
// overloads -- opdispatch.add, Tensor.add, Tensor.__add__. A call binds to the first overload
// (in the given order) whose schema accepts the arguments, like an operator packet, but first
// skips overloads that a look at the positional arguments already rules out (a Tensor where
// the schema wants a number, a number where it wants a Tensor, a missing out=), so the usual
// call parses one schema, not every overload before it.
//
// Objects are method descriptors: on a class, x.add(y) calls the set with x first, without a
// bound-method object; a method overload whose `self` is not its first argument gets x moved
// there. Operator errors (op::Error) keep their message, prefixed with the overload's name
// when the message does not start with the operator's name already.
//
// Factories (an overload with TensorOptions -- dtype, layout, device, pin_memory -- and no Tensor
// input, or a *_like / new_* one) also take `requires_grad=False` by keyword, as PyTorch's Python
// bindings add it: the result's flag is set after the call (opdispatch.ops.aten.* keep the bare
// schemas, as torch.ops does).
#include <pybind11/stl.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "autograd/autograd_meta.h"
#include "core/error.h"
#include "python/bindings.h"
#include "python/call_slot.h"
#include "python/ivalue_conversion.h"
#include "python/overload_resolution.h"
#include "python/py_operator.h"
#include "python/tensor_object.h"

namespace opy {

namespace {

bool is_python_number(PyObject* o) { return PyLong_Check(o) || PyFloat_Check(o); }

// Which schemas take requires_grad= from Python: torchgen's factory and *_like / new_* functions
// (TensorOptions arguments; no Tensor input unless the name says like/new).
bool takes_requires_grad(const op::FunctionSchema& schema) {
  int options = 0;
  bool tensor_input = false;
  for (const op::Argument& a : schema.arguments()) {
    if (a.is_out) continue;
    options += a.name == "dtype" || a.name == "layout" || a.name == "device" || a.name == "pin_memory";
    tensor_input = tensor_input || a.type.is_tensor_like();
  }
  const std::string& name = schema.name().name;
  const bool like = name.size() > 5 && name.compare(name.size() - 5, 5, "_like") == 0;
  const bool like_or_new = like || name.rfind("new_", 0) == 0;
  return options == 4 && (!tensor_input || like_or_new);
}

// A call's requires_grad= keyword, taken out of its keywords.
struct RequiresGradKeyword {
  bool given = false;
  bool value = false;
  py::object kwargs;  // the call's keywords without it (set when given)
};

RequiresGradKeyword take_requires_grad(PyObject* kwargs, const std::string& display) {
  RequiresGradKeyword out;
  if (kwargs == nullptr) return out;
  static PyObject* const key = PyUnicode_InternFromString("requires_grad");  // a constant, made once
  PyObject* value = PyDict_GetItemWithError(kwargs, key);  // borrowed
  if (value == nullptr) {
    if (PyErr_Occurred()) throw py::error_already_set();
    return out;
  }
  if (!PyBool_Check(value))
    throw py::type_error(display + "(): argument 'requires_grad' must be bool, not " + python_type_name(value));
  out.given = true;
  out.value = value == Py_True;
  out.kwargs = py::reinterpret_steal<py::object>(PyDict_Copy(kwargs));
  if (!out.kwargs || PyDict_DelItem(out.kwargs.ptr(), key) != 0) throw py::error_already_set();
  return out;
}

constexpr const char* kUnexpectedRequiresGrad = "got an unexpected keyword argument 'requires_grad'";

// "aten::add_.Tensor" -> "add": the name operator messages start with.
std::string base_name(const std::string& qualified) {
  const size_t start = qualified.find("::") == std::string::npos ? 0 : qualified.find("::") + 2;
  std::string name = qualified.substr(start, qualified.find('.', start) - start);
  while (name.size() > 1 && name.back() == '_') name.pop_back();
  return name;
}

// The message as is when it starts with the operator's name ("add: ...", "add_: ...",
// "aten::add.Tensor: ..."), else prefixed with the overload's qualified name.
std::string with_operator_name(const std::string& qualified, const std::string& message) {
  const std::string base = base_name(qualified);
  const std::string ns = qualified.substr(0, qualified.find("::") + 2);
  const size_t start = message.compare(0, ns.size(), ns) == 0 ? ns.size() : 0;
  const size_t end = start + base.size();
  const bool named = message.compare(start, base.size(), base) == 0 &&
                     (message.size() == end || std::string(":_.( ").find(message[end]) != std::string::npos);
  return named ? message : qualified + ": " + message;
}

class OverloadSet {
 public:
  struct Options {
    std::string display;              // how messages name it: "add", "Tensor.add"
    bool is_method = false;           // the first argument is self
    bool varargs_sizes = false;       // zeros(2, 3) / x.view(2, 3): ints packed into one list
    bool not_implemented = false;     // binary operators: NotImplemented when nothing binds
  };

  OverloadSet(Options options, const std::vector<std::string>& names, const std::vector<int>& self_positions)
      : options_(std::move(options)) {
    OP_CHECK(!names.empty(), options_.display, ": an overload set needs at least one operator");
    OP_CHECK(self_positions.empty() || self_positions.size() == names.size(), options_.display,
             ": one self position per overload");
    for (size_t i = 0; i < names.size(); ++i)
      candidates_.push_back(Candidate{names[i], self_positions.empty() ? 0 : self_positions[i], nullptr, nullptr, {}, {}});
  }

  OverloadSet(OverloadSet&&) = default;
  OverloadSet(const OverloadSet&) = delete;  // owns its operators; tells pybind11 not to copy

  const Options& options() const { return options_; }

  std::vector<std::string> overload_names() const {
    std::vector<std::string> out;
    for (const Candidate& c : candidates_) out.push_back(c.name);
    return out;
  }

  std::string doc() {
    std::string out = options_.display + "(...): calls the first overload the arguments fit:";
    for (Candidate& c : candidates_) out += "\n  " + resolved(c).parser()->schema().str();
    return out;
  }

  py::object call(PyObject* args, PyObject* kwargs) {
    if (options_.is_method && PyTuple_GET_SIZE(args) == 0)
      throw py::type_error(options_.display + "(): needs a Tensor to be called on");
    const RequiresGradKeyword requires_grad = take_requires_grad(kwargs, options_.display);
    PyObject* const given_kwargs = kwargs;
    if (requires_grad.given) kwargs = requires_grad.kwargs.ptr();
    py::object result = try_all(args, kwargs, requires_grad.given);
    if (!result && options_.not_implemented) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
    if (!result) {
      if (py::object packed = packed_sizes(args)) result = try_all(packed.ptr(), kwargs, requires_grad.given);
    }
    if (!result) throw py::type_error(mismatch_message(args, kwargs, requires_grad.given ? given_kwargs : nullptr));
    if (requires_grad.given) {
      const op::TensorBase* t = as_tensor(result);
      if (t != nullptr) op::autograd::set_requires_grad(*t, requires_grad.value);
    }
    return result;
  }

 private:
  struct Candidate {
    std::string name;
    int self_position;                 // methods: where self goes among the positional arguments
    std::unique_ptr<PyOperator> op;    // looked up on first use
    // What ruled_out() looks at, from the schema `analysed` parses (redone if it changes):
    std::shared_ptr<const ArgumentParser> analysed;
    std::vector<bool> tensor_param;    // per positional parameter: Tensor or Tensor?
    std::vector<py::str> required_keywords;
    bool takes_requires_grad = false;
  };

  PyOperator& resolved(Candidate& c) {
    if (!c.op) {
      std::optional<op::OperatorHandle> h = op::Dispatcher::singleton().find_op(c.name);
      OP_CHECK(h.has_value(), options_.display, ": operator ", c.name, " is not registered (is the library older than the package?)");
      c.op = std::make_unique<PyOperator>(*h);
    }
    return *c.op;
  }

  // The candidate's parser, with the facts ruled_out() needs taken from its schema.
  static std::shared_ptr<const ArgumentParser> analysed_parser(Candidate& c) {
    std::shared_ptr<const ArgumentParser> parser = c.op->parser();
    if (parser == c.analysed) return parser;
    c.tensor_param.clear();
    c.required_keywords.clear();
    for (const op::Argument& a : parser->schema().arguments()) {
      const op::Type& t = a.type;
      if (!a.kwarg_only)
        c.tensor_param.push_back((t.is_base() && t.base_ty() == op::BaseTy::Tensor) ||
                                 (t.is_optional() && t.elem().is_base() && t.elem().base_ty() == op::BaseTy::Tensor));
      else if (!a.has_default())
        c.required_keywords.push_back(py::str(a.is_out ? "out" : a.name));  // out=(a, b) names them all "out"
    }
    c.takes_requires_grad = takes_requires_grad(parser->schema());
    c.analysed = parser;
    return parser;
  }

  // `args` with self moved to the candidate's position (a new tuple only when it moves).
  py::tuple arguments_for(const Candidate& c, PyObject* args) const {
    auto given = py::reinterpret_borrow<py::tuple>(args);
    const size_t n = given.size();
    if (!options_.is_method || c.self_position == 0 || n == 0) return given;
    py::list moved;
    for (size_t i = 1; i < n; ++i) moved.append(given[i]);
    moved.insert(std::min<size_t>(static_cast<size_t>(c.self_position), n - 1), given[0]);
    return py::tuple(moved);
  }

  // Whether the call cannot bind, judged without converting anything.
  static bool ruled_out(const Candidate& c, PyObject* args, PyObject* kwargs) {
    const size_t n = static_cast<size_t>(PyTuple_GET_SIZE(args));
    if (n > c.tensor_param.size()) return true;
    for (size_t i = 0; i < n; ++i) {
      PyObject* a = PyTuple_GET_ITEM(args, i);
      const bool tensor = as_tensor(a) != nullptr;
      if (c.tensor_param[i] ? (!tensor && is_python_number(a)) : tensor) return true;
    }
    for (const py::str& key : c.required_keywords) {
      if (kwargs == nullptr) return true;
      PyObject* found = PyDict_GetItemWithError(kwargs, key.ptr());
      if (found == nullptr) {
        PyErr_Clear();
        return true;
      }
    }
    return false;
  }

  // The result of the first overload that binds, or a null object when none does (with
  // requires_grad= given, only a factory can).
  py::object try_all(PyObject* args, PyObject* kwargs, bool requires_grad) {
    OverloadAttempts attempts;
    for (Candidate& c : candidates_) {
      PyOperator& overload = resolved(c);
      std::shared_ptr<const ArgumentParser> parser = analysed_parser(c);
      if (requires_grad && !c.takes_requires_grad) continue;
      py::tuple call_args = arguments_for(c, args);
      if (ruled_out(c, call_args.ptr(), kwargs)) continue;
      if (!attempts.binds(*parser, call_args.ptr(), kwargs)) continue;
      try {
        return attempts.run(overload, *parser);
      } catch (const op::Error& e) {
        throw op::Error(with_operator_name(c.name, e.what()));
      }
    }
    return py::object();
  }

  // zeros(2, 3) -> zeros([2, 3]); x.view(2, 3) -> x.view([2, 3]): a null object unless every
  // positional argument (after self) is an int.
  py::object packed_sizes(PyObject* args) const {
    if (!options_.varargs_sizes) return py::object();
    const Py_ssize_t first = options_.is_method ? 1 : 0, n = PyTuple_GET_SIZE(args);
    if (n <= first) return py::object();
    py::list sizes;
    for (Py_ssize_t i = first; i < n; ++i) {
      PyObject* a = PyTuple_GET_ITEM(args, i);
      if (!PyLong_Check(a) || PyBool_Check(a)) return py::object();
      sizes.append(py::handle(a));
    }
    py::tuple packed(first + 1);
    if (first) packed[0] = py::handle(PyTuple_GET_ITEM(args, 0));
    packed[first] = sizes;
    return packed;
  }

  // `requires_grad_kwargs`: the call's keywords with requires_grad= (which `kwargs` lacks), or
  // null when it was not given.
  std::string mismatch_message(PyObject* args, PyObject* kwargs, PyObject* requires_grad_kwargs) {
    const bool requires_grad = requires_grad_kwargs != nullptr;
    OverloadAttempts attempts;
    std::vector<std::string> schemas, errors;
    for (Candidate& c : candidates_) {
      resolved(c);
      py::tuple call_args = arguments_for(c, args);
      std::shared_ptr<const ArgumentParser> parser = analysed_parser(c);
      schemas.push_back(parser->schema().str());
      if (requires_grad && !c.takes_requires_grad) {
        errors.push_back(kUnexpectedRequiresGrad);
        continue;
      }
      attempts.binds(*parser, call_args.ptr(), kwargs);
      errors.push_back(attempts.error().empty() ? "accepts them" : attempts.error());
    }
    if (candidates_.size() == 1) return options_.display + "(): " + errors[0];
    const std::string described =
        describe_arguments(args, requires_grad ? requires_grad_kwargs : kwargs, options_.is_method ? 1 : 0);
    return no_overload_message(options_.display, described, schemas, errors);
  }

  Options options_;
  std::vector<Candidate> candidates_;
};

// Like a Python function on a class: instance.attr binds, Class.attr is the set itself.
// (Calls through an instance skip this: the type is a method descriptor.)
PyObject* descr_get(PyObject* self, PyObject* obj, PyObject*) {
  if (obj == nullptr || obj == Py_None) {
    Py_INCREF(self);
    return self;
  }
  return PyMethod_New(self, obj);
}

}  // namespace

void init_overload_sets(py::module_& m) {
  py::class_<OverloadSet> cls(m, "_OverloadSet", py::dynamic_attr(),
                              "Operator overloads called as one Python function or method.");
  cls
      .def_property_readonly("overloads", &OverloadSet::overload_names, "Qualified overload names, in the order tried.")
      .def_property_readonly("name", [](const OverloadSet& s) { return s.options().display; })
      .def_property_readonly("__doc__", &OverloadSet::doc)
      .def("__repr__", [](const OverloadSet& s) {
        return std::string("<opdispatch ") + (s.options().is_method ? "method " : "function ") + s.options().display + ">";
      });
  // A factory, not a constructor: the object also gets the names help() and a bound method's
  // repr() look for (on the type, __name__ would name the type itself).
  m.def("_overload_set", [](std::string display, std::vector<std::string> names, std::vector<int> self_positions,
                            bool is_method, bool varargs_sizes, bool not_implemented) {
    py::object set = py::cast(OverloadSet({display, is_method, varargs_sizes, not_implemented}, names, self_positions));
    set.attr("__name__") = display.substr(display.rfind('.') == std::string::npos ? 0 : display.rfind('.') + 1);
    set.attr("__qualname__") = display;
    set.attr("__module__") = "opdispatch";
    return set;
  }, py::arg("display"), py::arg("names"), py::arg("self_positions") = std::vector<int>(), py::kw_only(),
        py::arg("is_method") = false, py::arg("varargs_sizes") = false, py::arg("not_implemented") = false,
        "An _OverloadSet: `display` names it in messages (\"add\", \"Tensor.add\"); `names` are the qualified "
        "overloads in the order tried; `self_positions`, for methods, where each overload takes self.");
  auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  type->tp_descr_get = &descr_get;
  type->tp_flags |= Py_TPFLAGS_METHOD_DESCRIPTOR;
  install_call_slot(cls);
}

}  // namespace opy
