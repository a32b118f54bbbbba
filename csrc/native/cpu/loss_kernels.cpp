// CPU loops of the loss stubs: mse (squared errors over the iterator), mse_backward (four
// strided operands walked together) and nll_loss forward / backward over contiguous rows.
// nll_loss's reductions accumulate in double. The optimize pragma comes first: see
// binary_kernels.cpp.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic", "no-trapping-math", "no-math-errno")
#endif

#include <algorithm>
#include <array>
#include <cstdint>

#include "core/error.h"
#include "core/strided_loop.h"
#include "core/tensor_iterator.h"
#include "native/cpu/pointwise_math.h"
#include "native/stubs.h"

namespace op::native::cpu {
namespace {

constexpr int64_t kNone = 0, kMean = 1;

void mse_kernel(TensorIteratorBase& it) {
  visit_floating_dtype(it.common_dtype(), "mse_loss", [&](auto tag) {
    using T = decltype(tag);
    it.for_each_element<T>([](T x, T y) {
      const T d = x - y;
      return d * d;
    });
  });
}

void mse_backward_kernel(const TensorBase& grad_input, const TensorBase& self, const TensorBase& target,
                         const TensorBase& grad_output, double norm) {
  visit_floating_dtype(grad_input.dtype(), "mse_loss_backward", [&](auto tag) {
    using T = decltype(tag);
    T* gi = grad_input.data_ptr<T>();
    const T *x = self.data_ptr<T>(), *t = target.data_ptr<T>(), *g = grad_output.data_ptr<T>();
    const T scale = static_cast<T>(norm);
    const std::array<IntArrayRef, 4> strides{grad_input.strides(), self.strides(), target.strides(),
                                             grad_output.strides()};
    for_each_offsets<4>(grad_input.sizes(), strides, {0, 0, 0, 0}, [&](const std::array<int64_t, 4>& o) {
      gi[o[0]] = scale * (x[o[1]] - t[o[2]]) * g[o[3]];
    });
  });
}

// The class of row i, checked (ignored rows are skipped before).
int64_t checked_class(const int64_t* target, int64_t i, int64_t classes, const char* op_name) {
  const int64_t c = target[i];
  OP_CHECK(c >= 0 && c < classes, op_name, ": Target ", c, " is out of bounds (", classes, " classes, row ", i, ")");
  return c;
}

template <class T>
void nll_forward(const TensorBase& output, const TensorBase& total_weight, const TensorBase& self,
                 const TensorBase& target, const TensorBase& weight, int64_t reduction, int64_t ignore_index) {
  const int64_t rows = self.size(0), classes = self.size(1);
  const T* x = self.data_ptr<T>();
  const int64_t* t = target.data_ptr<int64_t>();
  const T* w = weight.defined() ? weight.data_ptr<T>() : nullptr;
  T* out = output.data_ptr<T>();
  if (reduction == kNone) {
    for (int64_t i = 0; i < rows; ++i) {
      if (t[i] == ignore_index) {
        out[i] = T(0);
        continue;
      }
      const int64_t c = checked_class(t, i, classes, "nll_loss_forward");
      out[i] = -x[i * classes + c] * (w ? w[c] : T(1));
    }
    *total_weight.data_ptr<T>() = T(0);
    return;
  }
  double loss = 0, total = 0;
  for (int64_t i = 0; i < rows; ++i) {
    if (t[i] == ignore_index) continue;
    const int64_t c = checked_class(t, i, classes, "nll_loss_forward");
    const double wc = w ? static_cast<double>(w[c]) : 1.0;
    loss -= static_cast<double>(x[i * classes + c]) * wc;
    total += wc;
  }
  *total_weight.data_ptr<T>() = static_cast<T>(total);
  *out = static_cast<T>(reduction == kMean ? loss / total : loss);  // mean of nothing: 0/0 = nan
}

template <class T>
void nll_backward(const TensorBase& grad_input, const TensorBase& grad_output, const TensorBase& target,
                  const TensorBase& weight, const TensorBase& total_weight, int64_t reduction, int64_t ignore_index) {
  const int64_t rows = grad_input.size(0), classes = grad_input.size(1);
  T* gi = grad_input.data_ptr<T>();
  const T* g = grad_output.data_ptr<T>();
  const int64_t* t = target.data_ptr<int64_t>();
  const T* w = weight.defined() ? weight.data_ptr<T>() : nullptr;
  std::fill(gi, gi + rows * classes, T(0));
  // none: each row's own gradient; otherwise one for all, divided by the total weight for mean.
  T shared = T(0);
  if (reduction != kNone) shared = reduction == kMean ? -g[0] / *total_weight.data_ptr<T>() : -g[0];
  for (int64_t i = 0; i < rows; ++i) {
    if (t[i] == ignore_index) continue;
    const int64_t c = checked_class(t, i, classes, "nll_loss_backward");
    const T grad = reduction == kNone ? -g[i] : shared;
    gi[i * classes + c] = w ? w[c] * grad : grad;
  }
}

void nll_loss_forward_kernel(const TensorBase& output, const TensorBase& total_weight, const TensorBase& self,
                             const TensorBase& target, const TensorBase& weight, int64_t reduction,
                             int64_t ignore_index) {
  visit_floating_dtype(self.dtype(), "nll_loss_forward", [&](auto tag) {
    nll_forward<decltype(tag)>(output, total_weight, self, target, weight, reduction, ignore_index);
  });
}

void nll_loss_backward_kernel(const TensorBase& grad_input, const TensorBase& grad_output, const TensorBase& target,
                              const TensorBase& weight, const TensorBase& total_weight, int64_t reduction,
                              int64_t ignore_index) {
  visit_floating_dtype(grad_input.dtype(), "nll_loss_backward", [&](auto tag) {
    nll_backward<decltype(tag)>(grad_input, grad_output, target, weight, total_weight, reduction, ignore_index);
  });
}

}  // namespace

OP_REGISTER_STUB(mse_stub, CPU, &mse_kernel);
OP_REGISTER_STUB(mse_backward_stub, CPU, &mse_backward_kernel);
OP_REGISTER_STUB(nll_loss_forward_stub, CPU, &nll_loss_forward_kernel);
OP_REGISTER_STUB(nll_loss_backward_stub, CPU, &nll_loss_backward_kernel);

}  // namespace op::native::cpu
