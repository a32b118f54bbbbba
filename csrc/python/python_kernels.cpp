#include "python/python_kernels.h"

#include <memory>
#include <string>
#include <utility>

#include "core/error.h"
#include "dispatch/operator_handle.h"
#include "python/ivalue_conversion.h"
#include "python/py_operator.h"

namespace opy {

namespace {

// Owns a Python callable for the dispatcher, which may drop it from any thread: the last
// reference is released under the GIL (or leaked once the interpreter is gone).
class PyCallable {
 public:
  explicit PyCallable(py::object fn) : fn_(std::move(fn)) {}
  ~PyCallable() {
    if (!Py_IsInitialized()) {
      fn_.release();
      return;
    }
    py::gil_scoped_acquire gil;
    fn_ = py::object();
  }
  PyCallable(const PyCallable&) = delete;
  PyCallable& operator=(const PyCallable&) = delete;
  const py::object& fn() const { return fn_; }

 private:
  py::object fn_;
};

// The operator's arguments at the top of the stack, as fn(*args, **kwargs) takes them.
// `prefix` objects come first (the keyset, the operator).
std::pair<py::tuple, py::dict> python_arguments(const op::FunctionSchema& schema, const op::Stack& stack,
                                                std::initializer_list<py::object> prefix) {
  const auto& arguments = schema.arguments();
  OP_CHECK(stack.size() >= arguments.size(), schema.name().str(), ": the stack holds ", stack.size(),
           " value(s) but the schema takes ", arguments.size(), " argument(s)");
  const size_t base = stack.size() - arguments.size();
  const size_t positional = schema.num_positional();
  py::tuple args(prefix.size() + positional);
  py::dict kwargs;
  size_t k = 0;
  for (const py::object& p : prefix) args[k++] = p;
  for (size_t i = 0; i < arguments.size(); ++i) {
    py::object value = to_python(stack[base + i], &arguments[i].type);
    if (i < positional) args[k++] = std::move(value);
    else kwargs[py::str(arguments[i].name)] = std::move(value);
  }
  return {std::move(args), std::move(kwargs)};
}

// Replaces the arguments on the stack by what the Python function returned.
void push_results(const op::OperatorHandle& op, const char* who, const py::object& result, op::Stack& stack) {
  const op::FunctionSchema& schema = op.schema();
  const auto& returns = schema.returns();
  stack.erase(stack.end() - static_cast<std::ptrdiff_t>(schema.arguments().size()), stack.end());
  const std::string where = op.name() + ": the Python " + who + " ";
  if (returns.empty()) {
    if (!result.is_none())
      throw py::type_error(where + "returned " + python_type_name(result) + " but the schema returns nothing");
    return;
  }
  auto push = [&](py::handle value, size_t i) {
    op::IValue v;
    std::string why;
    if (!to_ivalue(value, returns[i].type, v, why))
      throw py::type_error(where + "returned a bad value for result " + std::to_string(i) + ": expected " + why);
    stack.push_back(std::move(v));
  };
  if (returns.size() == 1) return push(result, 0);
  if (!(py::isinstance<py::tuple>(result) || py::isinstance<py::list>(result)) || py::len(result) != returns.size())
    throw py::type_error(where + "must return a tuple of " + std::to_string(returns.size()) + " values, not " +
                         python_type_name(result));
  py::sequence values = py::reinterpret_borrow<py::sequence>(result);
  for (size_t i = 0; i < returns.size(); ++i) push(values[i], i);
}

void identity(const op::OperatorHandle& op, op::DispatchKeySet, op::Stack* stack) {
  const op::FunctionSchema& schema = op.schema();
  const size_t n = schema.arguments().size();
  OP_CHECK(stack->size() >= n, op.name(), ": identity kernel found ", stack->size(), " value(s) on the stack");
  const op::IValue* args = stack->data() + (stack->size() - n);
  const op::IValue* first_tensor = nullptr;
  for (size_t i = 0; i < n && !first_tensor; ++i)
    if (args[i].is_tensor()) first_tensor = &args[i];
  op::Stack results;
  for (const op::Return& r : schema.returns()) {
    if (r.type.is_tensor_like() && first_tensor && op::ivalue_matches(*first_tensor, r.type)) results.push_back(*first_tensor);
    else if (n > 0 && op::ivalue_matches(args[0], r.type)) results.push_back(args[0]);
    else if (r.type.is_optional()) results.push_back(op::IValue());
    else op::fail(op::str(op.name(), ": the identity test kernel cannot produce a ", r.type.str(), " result from its arguments"));
  }
  stack->erase(stack->end() - static_cast<std::ptrdiff_t>(n), stack->end());
  for (op::IValue& v : results) stack->push_back(std::move(v));
}

}  // namespace

op::KernelFunction python_kernel(py::object fn, bool with_keyset) {
  auto callable = std::make_shared<PyCallable>(std::move(fn));
  return op::KernelFunction::from_boxed([callable, with_keyset](const op::OperatorHandle& op, op::DispatchKeySet ks,
                                                                op::Stack* stack) {
    const std::shared_ptr<PyCallable> fn = callable;  // the kernel may be released while it runs
    py::gil_scoped_acquire gil;
    auto [args, kwargs] = with_keyset ? python_arguments(op.schema(), *stack, {py::cast(ks)})
                                      : python_arguments(op.schema(), *stack, {});
    py::object result = fn->fn()(*args, **kwargs);
    push_results(op, "kernel", result, *stack);
  });
}

op::KernelFunction python_fallback(py::object fn) {
  auto callable = std::make_shared<PyCallable>(std::move(fn));
  return op::KernelFunction::from_boxed([callable](const op::OperatorHandle& op, op::DispatchKeySet ks, op::Stack* stack) {
    const std::shared_ptr<PyCallable> fn = callable;  // the fallback may be released while it runs
    py::gil_scoped_acquire gil;
    auto [args, kwargs] = python_arguments(op.schema(), *stack, {py::cast(PyOperator(op)), py::cast(ks)});
    py::object result = fn->fn()(*args, **kwargs);
    push_results(op, "fallback", result, *stack);
  });
}

op::KernelFunction identity_kernel() { return op::KernelFunction::make_boxed<&identity>(); }

}  // namespace opy
