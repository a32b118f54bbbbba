// Autograd hooks from Python (csrc/autograd/hooks.h): Tensor.register_hook, retain_grad and
// retains_grad, Node.register_hook and Node.register_prehook, and the handle each registration
// returns (remove(), or a `with` block). The engine runs without the GIL, possibly on another
// thread: each hook takes the GIL for its call, and the callable is released under it.
#include <memory>
#include <optional>
#include <string>

#include "autograd/autograd_meta.h"
#include "autograd/hooks.h"
#include "autograd/node.h"
#include "core/error.h"
#include "python/bindings.h"
#include "python/held_object.h"
#include "python/tensor_object.h"
#include "python/tensor_sequence.h"

namespace opy {

namespace {

namespace ag = op::autograd;
using op::TensorBase;

TensorBase tensor_or_undefined(const py::object& value, const char* what) {
  if (value.is_none()) return TensorBase();
  const TensorBase* t = as_tensor(value);
  if (t == nullptr) throw py::type_error(std::string(what) + " must return a Tensor or None, not " + python_type_name(value));
  return *t;
}

// None keeps the gradients; otherwise a sequence of Tensors or None, one per gradient.
std::optional<ag::variable_list> replacement(const py::object& result, const char* what) {
  if (result.is_none()) return std::nullopt;
  if (!py::isinstance<py::sequence>(result) || py::isinstance<py::str>(result))
    throw py::type_error(std::string(what) + " must return None or a tuple of Tensors or None, not " +
                         python_type_name(result));
  return tensors_of(result, true, [what](py::handle item) {
    return std::string(what) + " must return a Tensor or None, not " + python_type_name(item);
  });
}

// PyTorch's check of a Python hook's result, in its words, naming the hook (the runtime's own
// check, autograd/hooks.cpp, stands behind it for hooks registered from C++).
void check_hook_result(const py::object& hook, const TensorBase& grad, const TensorBase& result) {
  if (!result.defined()) return;
  const std::string name = py::hasattr(hook, "__name__") ? py::str(hook.attr("__name__")).cast<std::string>() : "hook";
  OP_CHECK(result.sizes() == grad.sizes(), "hook '", name, "' has changed the size of value");
  OP_CHECK(result.dtype() == grad.dtype(), "hook '", name, "' has changed the type of value (was ",
           op::to_string(grad.dtype()), " got ", op::to_string(result.dtype()), ")");
  OP_CHECK(result.device() == grad.device(), "hook '", name, "' has changed the type of value (was ",
           grad.device().str(), " got ", result.device().str(), ")");
}

ag::TensorHook tensor_hook(py::function fn) {
  return [held = held_object(std::move(fn))](const TensorBase& grad) {
    py::gil_scoped_acquire gil;
    TensorBase result = tensor_or_undefined((*held)(wrap_tensor(grad)), "a tensor hook");
    check_hook_result(*held, grad, result);
    return result;
  };
}

ag::NodePreHook node_prehook(py::function fn) {
  return [held = held_object(std::move(fn))](const ag::variable_list& grad_outputs) {
    py::gil_scoped_acquire gil;
    return replacement((*held)(tuple_of(grad_outputs)), "a node's pre-hook");
  };
}

ag::NodePostHook node_posthook(py::function fn) {
  return [held = held_object(std::move(fn))](const ag::variable_list& grad_inputs, const ag::variable_list& grad_outputs) {
    py::gil_scoped_acquire gil;
    return replacement((*held)(tuple_of(grad_inputs), tuple_of(grad_outputs)), "a node's hook");
  };
}

}  // namespace

void init_hooks(py::module_& m) {
  py::class_<ag::HookHandle>(m, "RemovableHandle", "What registering a hook returns: remove() takes the hook out.")
      .def("remove", &ag::HookHandle::remove, "Takes the hook out (again: nothing).")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](ag::HookHandle& handle, py::args) { handle.remove(); });

  auto tensor = py::reinterpret_borrow<py::class_<TensorBase>>(m.attr("Tensor"));
  tensor
      .def("register_hook", [](const TensorBase& t, py::function hook) {
        return ag::register_tensor_hook(t, tensor_hook(std::move(hook)));
      }, py::arg("hook"),
           "hook(grad) -> Tensor or None runs when this tensor's gradient is computed, before it is used; a Tensor "
           "it returns replaces the gradient. Hooks run in registration order.")
      .def("retain_grad", [](const TensorBase& t) { ag::retain_grad(t); },
           "Keeps this non-leaf's gradient in .grad at each backward() (leaves always do).")
      .def_property_readonly("retains_grad", [](const TensorBase& t) { return ag::retains_grad(t); },
                             "True once retain_grad() was called on this non-leaf.");

  auto node = py::reinterpret_borrow<py::class_<ag::Node, std::shared_ptr<ag::Node>>>(m.attr("Node"));
  node.def("register_hook", [](const std::shared_ptr<ag::Node>& self, py::function hook) {
        return ag::register_node_posthook(self, node_posthook(std::move(hook)));
      }, py::arg("hook"),
           "hook(grad_inputs, grad_outputs) -> tuple or None runs after the node computed the gradients of its "
           "inputs; a tuple it returns replaces grad_inputs.")
      .def("register_prehook", [](const std::shared_ptr<ag::Node>& self, py::function hook) {
        return ag::register_node_prehook(self, node_prehook(std::move(hook)));
      }, py::arg("hook"),
           "hook(grad_outputs) -> tuple or None runs before the node; a tuple it returns replaces grad_outputs.");
}

}  // namespace opy
