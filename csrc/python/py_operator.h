// An operator as Python sees it (opdispatch.ops.<ns>.<op>.<overload>): parses the call
// against the schema, runs it through the boxed path with the GIL released, and converts
// the results. The parser is rebuilt when the operator's definition changes.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <vector>

#include "dispatch/dispatcher.h"
#include "python/argument_parser.h"

namespace opy {

namespace py = pybind11;

class PyOperator {
 public:
  explicit PyOperator(op::OperatorHandle handle) : handle_(handle) {}

  std::string name() const { return handle_.name(); }
  const op::OperatorHandle& handle() const { return handle_; }
  // Throws op::Error when the operator has no definition (any more).
  std::shared_ptr<const ArgumentParser> parser();

  // args: a tuple; kwargs: a dict or nullptr (the tp_call convention).
  py::object call(PyObject* args, PyObject* kwargs);
  // Dispatches on `ks` as given (no thread-local sets): for kernels continuing below their key.
  py::object redispatch(op::DispatchKeySet ks, const py::args& args, const py::kwargs& kwargs);
  // Runs a stack that `parser` bound; `ks` null: a normal call.
  py::object run(const ArgumentParser& parser, op::Stack& stack, const std::vector<PyObject*>& given,
                 const op::DispatchKeySet* ks);

 private:
  op::OperatorHandle handle_;
  std::shared_ptr<const ArgumentParser> parser_;
  uint64_t def_id_ = 0;
};

}  // namespace opy
