// Overload resolution as _OpPacket (every overload of a name, python/operator_bindings.cpp) and
// _OverloadSet (a fixed list, python/overload_set.cpp) share it: candidates are tried in order,
// the first whose schema binds the arguments runs, and when none does the message lists every
// candidate's schema with the reason it refused. (Which candidates there are, and which an
// overload set rules out before parsing, stays with each.)
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "core/ivalue.h"
#include "python/argument_parser.h"
#include "python/ivalue_conversion.h"
#include "python/py_operator.h"

namespace opy {

// One call's attempts: each binds the arguments into the same fresh locals (operators may be
// called from several threads, so nothing is kept between calls).
class OverloadAttempts {
 public:
  // Whether `parser`'s schema accepts the arguments; why not is error() until the next attempt.
  bool binds(const ArgumentParser& parser, PyObject* args, PyObject* kwargs) {
    error_.clear();
    return parser.parse(args, kwargs, stack_, given_, error_);
  }
  const std::string& error() const { return error_; }

  // Runs the overload whose parser bound last.
  py::object run(PyOperator& overload, const ArgumentParser& parser) {
    return overload.run(parser, stack_, given_, nullptr);
  }

 private:
  op::Stack stack_;
  std::vector<PyObject*> given_;
  std::string error_;
};

// "Tensor, int, alpha=float": the Python types of a call's arguments, from positional `first` on.
inline std::string describe_arguments(PyObject* args, PyObject* kwargs, size_t first = 0) {
  std::string out;
  auto tuple = py::reinterpret_borrow<py::tuple>(args);
  for (size_t i = first; i < tuple.size(); ++i) out += (out.empty() ? "" : ", ") + python_type_name(tuple[i]);
  if (kwargs)
    for (auto item : py::reinterpret_borrow<py::dict>(kwargs))
      out += (out.empty() ? "" : ", ") + py::str(item.first).cast<std::string>() + "=" + python_type_name(item.second);
  return out;
}

// "<display>(): no overload accepts the arguments (<types>); candidates:" and one line per
// candidate: "  <schema>  -- <why it refused>".
inline std::string no_overload_message(const std::string& display, const std::string& described,
                                       const std::vector<std::string>& schemas, const std::vector<std::string>& errors) {
  std::string out = display + "(): no overload accepts the arguments (" + described + "); candidates:";
  for (size_t i = 0; i < schemas.size(); ++i) out += "\n  " + schemas[i] + "  -- " + errors[i];
  return out;
}

}  // namespace opy
