// Binding a Python call to an operator's schema: positional and keyword arguments, defaults,
// keyword-only and out= arguments become one IValue stack in schema order; the results on
// the stack afterwards become a value, a tuple or None. One parser per schema, built once.
#pragma once

#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <vector>

#include "core/ivalue.h"
#include "dispatch/schema.h"

namespace opy {

namespace py = pybind11;

class ArgumentParser {
 public:
  explicit ArgumentParser(const op::FunctionSchema& schema);

  const op::FunctionSchema& schema() const { return schema_; }

  // Fills `stack` with the schema's arguments and `given` with the Python object passed for
  // each (nullptr where a default was used). `args` is a tuple, `kwargs` a dict or nullptr.
  // On a mismatch returns false with `error` saying which argument and why, e.g.
  // "argument 'other' (position 2) must be Tensor, not str"; never throws for bad input.
  bool parse(PyObject* args, PyObject* kwargs, op::Stack& stack, std::vector<PyObject*>& given,
             std::string& error) const;

  // The results left on the stack: one -> the value, several -> a tuple, none -> None. A
  // result that aliases a mutable argument (out=, in-place) is the object that was passed.
  py::object results(const op::Stack& stack, const std::vector<PyObject*>& given) const;

 private:
  struct Arg {
    const op::Argument* argument;
    py::str key;                         // the name, as a Python string for dict lookups
    std::optional<op::IValue> default_value;
    std::string default_problem;         // set when the default cannot be represented
  };

  bool bind_one(size_t i, PyObject* value, op::IValue& out, std::string& error) const;

  op::FunctionSchema schema_;
  std::vector<Arg> args_;
  size_t num_positional_;
  std::vector<size_t> out_arguments_;  // several out= arguments also accept out=(a, b)
  bool out_tuple_ = false;
  std::vector<int> return_aliases_;    // per result: the mutable argument it aliases, or -1
};

}  // namespace opy
