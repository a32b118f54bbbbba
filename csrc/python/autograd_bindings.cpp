// Autograd from Python: the Tensor attributes (requires_grad, grad, grad_fn, is_leaf, detach,
// _version), backward nodes as _C.Node (name(), next_functions), grad mode, and the engine's
// entry points _C._autograd_backward / _C._autograd_grad that opdispatch/autograd.py wraps.
// Misuse raises op::Error (opdispatch.Error) in PyTorch's words, from csrc/autograd/.
#include <pybind11/stl.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "autograd/accumulate_grad.h"
#include "autograd/autograd_meta.h"
#include "autograd/backward.h"
#include "autograd/forward_ad.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "python/bindings.h"
#include "python/ivalue_conversion.h"
#include "python/tensor_object.h"
#include "python/tensor_sequence.h"

namespace opy {

namespace {

namespace ag = op::autograd;
using op::TensorBase;

// A list or tuple of tensors (None entries: undefined tensors) as the engine takes them.
ag::variable_list tensors_from(py::handle sequence, const char* what) {
  return tensors_of(sequence, true, [what](py::handle item) {
    return std::string(what) + " must be Tensors or None, not " + python_type_name(item);
  });
}

// ((node or None, input_nr), ...): where the node sends each of its gradients, as PyTorch shows it.
py::tuple next_functions(const ag::Node& node) {
  const ag::edge_list& edges = node.next_edges();
  py::tuple out(edges.size());
  for (size_t i = 0; i < edges.size(); ++i)
    out[i] = py::make_tuple(edges[i].function ? py::cast(edges[i].function) : py::none(), edges[i].input_nr);
  return out;
}

void set_grad_from(const TensorBase& t, py::handle value) {
  if (value.is_none()) {
    ag::set_grad(t, TensorBase());
    return;
  }
  const TensorBase* grad = as_tensor(value);
  if (grad == nullptr)
    throw py::type_error("assigned grad expected to be a Tensor or None but got grad of type " +
                         python_type_name(value));
  ag::set_grad(t, *grad);
}

py::object grad_of(const TensorBase& t) {
  if (!ag::is_leaf(t) && !ag::retains_grad(t) &&
      PyErr_WarnEx(PyExc_UserWarning,
                   "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute "
                   "won't be populated during autograd.backward(). If you access the non-leaf Tensor by mistake, "
                   "make sure you access the leaf Tensor instead.",
                   1) != 0)
    throw py::error_already_set();  // warnings turned into errors
  return wrap_tensor(ag::grad(t));
}

void init_nodes(py::module_& m) {
  py::class_<ag::Node, std::shared_ptr<ag::Node>>(m, "Node",
                                                  "A backward node (t.grad_fn): computes the gradients of a forward "
                                                  "operator's inputs from those of its outputs.")
      .def("name", &ag::Node::name, "torchgen's class name: 'AddBackward0', 'torch::autograd::AccumulateGrad'.")
      .def_property_readonly("next_functions", &next_functions,
                             "One (node, input_nr) per input of the forward operator: the node its gradient goes "
                             "to (None when it needs none) and which of that node's inputs it is.")
      .def_property_readonly("variable", [](const ag::Node& node) {
        const auto* accumulate = dynamic_cast<const ag::AccumulateGrad*>(&node);
        if (accumulate == nullptr)
          throw py::attribute_error("'" + node.name() + "' object has no attribute 'variable'");
        return wrap_tensor(accumulate->variable());
      }, "AccumulateGrad only: the leaf it accumulates into.")
      .def("_sequence_nr", &ag::Node::sequence_nr)
      .def("__repr__", [](py::handle self) {
        const std::string name = self.cast<const ag::Node&>().name();
        char address[32];
        std::snprintf(address, sizeof address, "%p", static_cast<void*>(self.ptr()));
        return "<" + name.substr(name.rfind(':') == std::string::npos ? 0 : name.rfind(':') + 1) + " object at " +
               address + ">";
      });
}

void init_tensor_attributes(py::module_& m) {
  auto tensor = py::reinterpret_borrow<py::class_<TensorBase>>(m.attr("Tensor"));
  tensor
      .def_property("requires_grad", [](const TensorBase& t) { return ag::requires_grad(t); },
                    [](const TensorBase& t, bool requires_grad) { ag::set_requires_grad(t, requires_grad); },
                    "Whether gradients are computed for this tensor (a leaf's flag; true for results with a grad_fn).")
      .def("requires_grad_", [](py::object self, bool requires_grad) {
        ag::set_requires_grad(*as_tensor(self), requires_grad);
        return self;
      }, py::arg("requires_grad") = true, "Sets requires_grad in place; returns the tensor.")
      .def_property("grad", &grad_of, &set_grad_from,
                    "The gradient backward() accumulated into this leaf (None until then); assignable (a Tensor "
                    "of the same size, dtype and device, or None).")
      .def_property_readonly("grad_fn", [](const TensorBase& t) -> py::object {
        const std::shared_ptr<ag::Node>& node = ag::grad_fn(t);
        return node ? py::cast(node) : py::none();
      }, "The backward node that made this tensor; None for leaves.")
      .def_property_readonly("is_leaf", [](const TensorBase& t) { return ag::is_leaf(t); },
                             "True when the tensor has no grad_fn (made by the user, or by an operation that "
                             "recorded no history).")
      .def_property_readonly("_version", [](const TensorBase& t) { return ag::version(t); },
                             "The version counter in-place operators bump (shared by every view of the storage).")
      .def("detach", [](const TensorBase& t) { return ag::detach(t); },
           "A new tensor over the same memory (and version counter) without autograd history.");
}

}  // namespace

void init_autograd(py::module_& m) {
  init_nodes(m);
  init_tensor_attributes(m);
  m.def("is_grad_enabled", &ag::GradMode::is_enabled, "Whether operators record history (thread-local).");
  m.def("_set_grad_enabled", &ag::GradMode::set_enabled, py::arg("enabled"));
  m.def("_autograd_backward", [](py::sequence tensors, py::sequence grad_tensors, bool retain_graph,
                                 bool create_graph) {
    ag::variable_list roots = tensors_from(tensors, "tensors"), grads = tensors_from(grad_tensors, "grad_tensors");
    py::gil_scoped_release nogil;  // nodes call operators; Python kernels take the GIL back
    ag::backward(roots, grads, retain_graph, create_graph);
  }, py::arg("tensors"), py::arg("grad_tensors"), py::arg("retain_graph"), py::arg("create_graph") = false);
  m.def("_autograd_grad", [](py::sequence outputs, py::sequence inputs, py::sequence grad_outputs, bool retain_graph,
                             bool allow_unused, bool create_graph) {
    ag::variable_list roots = tensors_from(outputs, "outputs"), wrt = tensors_from(inputs, "inputs"),
                      grads = tensors_from(grad_outputs, "grad_outputs");
    ag::variable_list result;
    {
      py::gil_scoped_release nogil;
      result = ag::grad(roots, wrt, grads, retain_graph, allow_unused, create_graph);
    }
    return tuple_of(result);
  }, py::arg("outputs"), py::arg("inputs"), py::arg("grad_outputs"), py::arg("retain_graph"), py::arg("allow_unused"),
     py::arg("create_graph") = false);
  // Forward mode (autograd/forward_ad.h); the Python side is opdispatch/forward_ad.py.
  m.def("_enter_dual_level", &ag::enter_dual_level);
  m.def("_exit_dual_level", &ag::exit_dual_level, py::arg("level"));
  m.def("_current_dual_level", &ag::current_dual_level);
  m.def("_make_dual", [](const TensorBase& t, const TensorBase& tangent) { return wrap_tensor(ag::make_dual(t, tangent)); },
        py::arg("tensor"), py::arg("tangent"));
  m.def("_set_forward_ad_enabled", &ag::set_forward_ad_enabled, py::arg("enabled"));
  m.def("_has_fw_grad", [](const TensorBase& t) { return ag::has_fw_grad(t); }, py::arg("tensor"));
  m.def("_set_fw_grad", [](const TensorBase& t, const TensorBase& tangent) { ag::set_fw_grad_of_output(t, tangent); },
        py::arg("tensor"), py::arg("tangent"));
  m.def("_unpack_dual", [](const TensorBase& t) -> py::tuple {
    TensorBase tangent = ag::fw_grad(t);
    if (!tangent.defined()) return py::make_tuple(wrap_tensor(t), py::none());
    return py::make_tuple(wrap_tensor(ag::primal_alias(t)), wrap_tensor(tangent));
  }, py::arg("tensor"));
}

}  // namespace opy
