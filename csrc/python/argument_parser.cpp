#include "python/argument_parser.h"

#include "core/error.h"
#include "python/ivalue_conversion.h"
#include "python/tensor_object.h"

namespace opy {

ArgumentParser::ArgumentParser(const op::FunctionSchema& schema)
    : schema_(schema), num_positional_(schema_.num_positional()) {
  const auto& arguments = schema_.arguments();
  args_.reserve(arguments.size());
  bool has_out_name = false;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const op::Argument& a = arguments[i];
    Arg arg{&a, py::str(a.name), std::nullopt, ""};
    if (a.has_default()) {
      try {
        arg.default_value = a.default_value();
      } catch (const op::Error& e) {
        arg.default_problem = e.what();
      }
    }
    if (a.is_out) out_arguments_.push_back(i);
    has_out_name = has_out_name || a.name == "out";
    args_.push_back(std::move(arg));
  }
  out_tuple_ = out_arguments_.size() > 1 && !has_out_name;
  for (const op::Return& r : schema_.returns()) {
    const std::optional<size_t> alias = schema_.written_argument_of(r);
    return_aliases_.push_back(alias ? static_cast<int>(*alias) : -1);
  }
}

bool ArgumentParser::bind_one(size_t i, PyObject* value, op::IValue& out, std::string& error) const {
  std::string why;
  if (to_ivalue(value, args_[i].argument->type, out, why)) return true;
  error = "argument '" + args_[i].argument->name + "' (position " + std::to_string(i + 1) + ") must be " + why;
  return false;
}

bool ArgumentParser::parse(PyObject* args, PyObject* kwargs, op::Stack& stack, std::vector<PyObject*>& given,
                           std::string& error) const {
  const size_t nargs = static_cast<size_t>(PyTuple_GET_SIZE(args));
  const size_t nkwargs = kwargs ? static_cast<size_t>(PyDict_GET_SIZE(kwargs)) : 0;
  if (nargs > num_positional_) {
    error = "takes " + std::to_string(num_positional_) + " positional argument(s) but " + std::to_string(nargs) +
            " were given";
    return false;
  }
  // out=(a, b) for several out= arguments: element k goes to the k-th out argument.
  PyObject* out_tuple = nullptr;
  if (out_tuple_ && nkwargs > 0) {
    out_tuple = PyDict_GetItemString(kwargs, "out");
    if (out_tuple && (!PyTuple_Check(out_tuple) || static_cast<size_t>(PyTuple_GET_SIZE(out_tuple)) != out_arguments_.size())) {
      error = "out= must be a tuple of " + std::to_string(out_arguments_.size()) + " tensors";
      return false;
    }
  }
  stack.clear();
  stack.resize(args_.size());
  given.assign(args_.size(), nullptr);
  size_t used_kwargs = out_tuple ? 1 : 0;
  size_t out_index = 0;
  for (size_t i = 0; i < args_.size(); ++i) {
    const Arg& arg = args_[i];
    PyObject* value = nullptr;
    if (i < nargs) value = PyTuple_GET_ITEM(args, i);
    if (nkwargs > 0) {
      PyObject* keyword = PyDict_GetItemWithError(kwargs, arg.key.ptr());
      if (keyword == nullptr && PyErr_Occurred()) PyErr_Clear();
      if (keyword != nullptr) {
        if (value != nullptr) {
          error = "got multiple values for argument '" + arg.argument->name + "'";
          return false;
        }
        value = keyword;
        ++used_kwargs;
      }
    }
    if (out_tuple && arg.argument->is_out) {
      if (value != nullptr) {
        error = "got multiple values for argument '" + arg.argument->name + "' (also in out=)";
        return false;
      }
      value = PyTuple_GET_ITEM(out_tuple, out_index++);
    }
    if (value != nullptr) {
      given[i] = value;
      if (!bind_one(i, value, stack[i], error)) return false;
      continue;
    }
    if (arg.default_value) {
      stack[i] = *arg.default_value;
      continue;
    }
    if (!arg.default_problem.empty()) {
      error = "argument '" + arg.argument->name + "' has a default this runtime cannot use (" + arg.default_problem +
              "); pass it explicitly";
      return false;
    }
    error = std::string("missing required ") + (arg.argument->kwarg_only ? "keyword-only " : "") + "argument '" +
            arg.argument->name + "'" + (arg.argument->kwarg_only ? "" : " (position " + std::to_string(i + 1) + ")");
    return false;
  }
  if (used_kwargs < nkwargs) {
    PyObject *key = nullptr, *value = nullptr;
    Py_ssize_t pos = 0;
    while (PyDict_Next(kwargs, &pos, &key, &value)) {
      bool known = out_tuple && PyUnicode_Check(key) && PyUnicode_CompareWithASCIIString(key, "out") == 0;
      for (const Arg& arg : args_) known = known || PyObject_RichCompareBool(key, arg.key.ptr(), Py_EQ) == 1;
      if (!known) {
        error = "got an unexpected keyword argument " + py::repr(key).cast<std::string>();
        return false;
      }
    }
  }
  return true;
}

py::object ArgumentParser::results(const op::Stack& stack, const std::vector<PyObject*>& given) const {
  const auto& returns = schema_.returns();
  auto one = [&](size_t i) -> py::object {
    const int alias = i < return_aliases_.size() ? return_aliases_[i] : -1;
    if (alias >= 0 && given[alias] != nullptr && stack[i].is_tensor()) {
      const op::TensorBase* passed = as_tensor(given[alias]);
      if (passed && passed->unsafe_impl() == stack[i].to_tensor().unsafe_impl())
        return py::reinterpret_borrow<py::object>(given[alias]);
    }
    return to_python(stack[i], i < returns.size() ? &returns[i].type : nullptr);
  };
  if (stack.empty()) return py::none();
  if (stack.size() == 1) return one(0);
  py::tuple out(stack.size());
  for (size_t i = 0; i < stack.size(); ++i) out[i] = one(i);
  return out;
}

}  // namespace opy
