// Python sequences of tensors as the autograd bindings take and give them (the engine's roots,
// hook and Function results): None stands for an undefined tensor where one is allowed; any other
// item raises TypeError in the caller's words.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "python/tensor_object.h"

namespace opy {

// `message(item)` is the TypeError's text for an item that is not a Tensor (nor None, when allowed).
inline std::vector<op::TensorBase> tensors_of(py::handle sequence, bool none_allowed,
                                              const std::function<std::string(py::handle)>& message) {
  std::vector<op::TensorBase> out;
  for (py::handle item : py::reinterpret_borrow<py::sequence>(sequence)) {
    if (none_allowed && item.is_none()) {
      out.emplace_back();
      continue;
    }
    const op::TensorBase* t = as_tensor(item);
    if (t == nullptr) throw py::type_error(message(item));
    out.push_back(*t);
  }
  return out;
}

// One entry per tensor, None for an undefined one.
inline py::tuple tuple_of(const std::vector<op::TensorBase>& tensors) {
  py::tuple out(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) out[i] = wrap_tensor(tensors[i]);
  return out;
}

}  // namespace opy
