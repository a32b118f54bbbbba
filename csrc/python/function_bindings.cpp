// The C++ side of custom autograd Functions (opdispatch/function.py, PyTorch's
// torch.autograd.Function): _FunctionNode, the backward node of one Function.apply call (named
// "<Class>Backward"; apply calls back into the Python ctx), _function_wrap_outputs, which gives
// the forward's outputs their history, and _SavedVariable, what ctx.save_for_backward keeps.
// csrc/autograd/ knows nothing of Python, so the node lives here. The engine runs without the
// GIL: apply and release_variables take it, and the ctx is released under it.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "autograd/autograd_meta.h"
#include "autograd/helpers.h"
#include "autograd/node.h"
#include "autograd/saved_values.h"
#include "autograd/saved_variable.h"
#include "autograd/views.h"
#include "core/error.h"
#include "python/bindings.h"
#include "python/held_object.h"
#include "python/ivalue_conversion.h"
#include "python/tensor_object.h"
#include "python/tensor_sequence.h"

namespace opy {

namespace function_node {

namespace ag = op::autograd;
using op::TensorBase;

// The node of one Function.apply call. Its next edges are the tensor inputs' gradient edges; its
// inputs are the forward's outputs, in order (non-tensor and non-differentiable ones hold a
// placeholder). The ctx (opdispatch.autograd.function.FunctionCtx) does the Python part:
// _run_backward(grads) calls the user's backward and checks its result, _release_saved() frees
// the saved tensors.
struct PyFunctionNode final : ag::Node {
  PyFunctionNode(std::string name, ag::edge_list edges, py::object ctx)
      : ag::Node(std::move(edges)), name_(std::move(name)), ctx_(held_object(std::move(ctx))) {}

  std::string name() const override { return name_; }

  ag::variable_list apply(ag::variable_list&& grads) override {
    py::gil_scoped_acquire gil;
    const bool materialize = ctx_->attr("_materialize_grads").cast<bool>();
    py::tuple given(grads.size());
    for (size_t i = 0; i < grads.size(); ++i) {
      if (!grads[i].defined() && materialize && i < zeros_for_.size() && zeros_for_[i])
        grads[i] = zeros_for_[i]->zeros();  // set_materialize_grads(True): None becomes zeros
      given[i] = wrap_tensor(grads[i]);
    }
    // The node goes along: saved outputs unpack with it as their grad_fn under create_graph.
    py::object result = ctx_->attr("_run_backward")(given, py::cast(shared_from_this()));
    ag::variable_list out = tensors_of(result, true, [this](py::handle item) {
      return "function " + name_ + " returned a gradient of type " + python_type_name(item) +
             ", but expected a Tensor or None";
    });
    OP_CHECK(out.size() == num_outputs(), "function ", name_, " returned ", out.size(), " gradients for ",
             num_outputs(), " tensor inputs");
    return out;
  }

  void release_variables() override {
    py::gil_scoped_acquire gil;
    ctx_->attr("_release_saved")();
  }

  py::object ctx() const { return *ctx_; }

  // Shape, dtype and device of each tensor output (nullopt for the others): what a missing
  // gradient is materialized as.
  std::vector<std::optional<ag::TypeAndSize>> zeros_for_;

 private:
  std::string name_;
  std::shared_ptr<py::object> ctx_;
};

bool same_tensor(const TensorBase& a, const TensorBase& b) { return a.unsafe_impl() == b.unsafe_impl(); }

bool among(const TensorBase& t, const std::vector<TensorBase>& tensors) {
  for (const TensorBase& other : tensors)
    if (same_tensor(t, other)) return true;
  return false;
}

std::vector<TensorBase> tensor_list(py::handle sequence, const char* what) {
  return tensors_of(sequence, false, [what](py::handle item) {
    return std::string(what) + " must be Tensors, not " + python_type_name(item);
  });
}

// PyTorch's _wrap_outputs: each output, in order, becomes an input of `node`. A dirty tensor (an
// input changed in place) gets the node as its new history (rebase_history: a view's base gets
// CopySlices); an input returned as it is, or a tensor that already has history, is returned as
// a new alias with the node's history, so the caller's tensor keeps its own; non-tensors,
// non-floating tensors and those marked non-differentiable get no history.
py::list wrap_outputs(const std::shared_ptr<PyFunctionNode>& node, py::sequence inputs_seq, py::sequence outputs,
                      py::sequence dirty_seq, py::sequence non_differentiable_seq) {
  const std::vector<TensorBase> inputs = tensor_list(inputs_seq, "inputs");
  const std::vector<TensorBase> dirty = tensor_list(dirty_seq, "mark_dirty's arguments");
  const std::vector<TensorBase> non_differentiable =
      tensor_list(non_differentiable_seq, "mark_non_differentiable's arguments");
  py::list result;
  size_t dirty_returned = 0;
  for (py::handle item : outputs) {
    const TensorBase* output = as_tensor(item);
    if (output == nullptr) {
      ag::set_history(TensorBase(), node);  // a placeholder: backward gets None for it
      node->zeros_for_.emplace_back();
      result.append(item);
      continue;
    }
    const TensorBase t = *output;
    node->zeros_for_.emplace_back(ag::TypeAndSize(t));
    const bool is_dirty = among(t, dirty);
    const bool differentiable = !among(t, non_differentiable) && ag::helpers::isDifferentiableType(t.dtype());
    dirty_returned += is_dirty ? 1 : 0;
    if (is_dirty && differentiable) {
      ag::check_inplace(t);
      ag::rebase_history(t, node);
      result.append(item);
      continue;
    }
    const bool keep_caller_history = !is_dirty && (among(t, inputs) || ag::requires_grad(t));
    TensorBase out = keep_caller_history ? ag::detach(t) : t;
    const bool restricted_view = differentiable && ag::is_view(t);
    if (restricted_view)  // an in-place change to it would bypass the custom backward: refused, as PyTorch does
      out = ag::as_view(ag::view_base(t), out, ag::CreationMeta::InCustomFunction);
    ag::set_history(differentiable ? out : TensorBase(), node);  // undefined: a placeholder
    result.append(keep_caller_history || restricted_view ? wrap_tensor(out) : py::reinterpret_borrow<py::object>(item));
  }
  OP_CHECK(dirty_returned >= dirty.size(),
           "Some elements marked as dirty during the forward method were not returned as output. The inputs that "
           "are modified inplace must all be outputs of the Function.");
  return result;
}

}  // namespace function_node

void init_function(py::module_& m) {
  namespace ag = op::autograd;
  using function_node::PyFunctionNode;
  py::class_<PyFunctionNode, ag::Node, std::shared_ptr<PyFunctionNode>>(
      m, "_FunctionNode", "The backward node of a custom autograd Function (opdispatch.autograd.Function).")
      .def(py::init([](std::string name, py::sequence inputs, py::object ctx) {
             return std::make_shared<PyFunctionNode>(
                 std::move(name), ag::collect_next_edges(function_node::tensor_list(inputs, "inputs")), std::move(ctx));
           }),
           py::arg("name"), py::arg("inputs"), py::arg("ctx"))
      .def_property_readonly("_ctx", &PyFunctionNode::ctx, "The Function's ctx.")
      // As in PyTorch, where grad_fn is the ctx: y.grad_fn.saved_tensors, y.grad_fn.needs_input_grad.
      .def("__getattr__", [](const PyFunctionNode& node, const std::string& name) {
        return py::getattr(node.ctx(), name.c_str());
      });

  m.def("_function_wrap_outputs", &function_node::wrap_outputs, py::arg("node"), py::arg("inputs"),
        py::arg("outputs"), py::arg("dirty"), py::arg("non_differentiable"));

  py::class_<ag::SavedVariable>(m, "_SavedVariable",
                                "A tensor saved for backward with its version (csrc/autograd/saved_variable.h).")
      .def(py::init([](py::object value, const std::shared_ptr<ag::Node>& node) {
             if (value.is_none()) return ag::SavedVariable(TensorBase(), false);
             const TensorBase* t = as_tensor(value);
             if (t == nullptr) throw py::type_error("expected a Tensor or None, not " + python_type_name(value));
             // An output of `node` is kept as a history-less alias: holding it would be a cycle.
             const bool is_output = node != nullptr && ag::grad_fn(*t) == node;
             return ag::SavedVariable(*t, is_output);
           }),
           py::arg("tensor"), py::arg("node"))
      .def("unpack", [](const ag::SavedVariable& saved, const std::string& saved_for,
                        const std::shared_ptr<ag::Node>& node) {
        // With the node running backward, a saved output comes back with its history when grad
        // mode is on (create_graph), as a generated node's does.
        return wrap_tensor(node ? saved.unpack(*node) : saved.unpack(saved_for));
      }, py::arg("saved_for") = "", py::arg("node") = nullptr)
      .def("reset", &ag::SavedVariable::reset);
}

}  // namespace opy
