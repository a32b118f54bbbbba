// neg (structured elementwise) and relu / relu_ (plain CPU kernels over host memory).
#include "core/error.h"
#include "core/scalar_type.h"
#include "core/strided_loop.h"
#include "core/tensor.h"
#include "ops/neg_native.h"
#include "ops/relu_native.h"

namespace op {

void meta::structured_neg::meta(const Tensor& self) {
  OP_CHECK(self.defined() && self.dtype() != ScalarType::Bool,
           "neg: bool tensors cannot be negated; use logical negation instead");
  build_borrowing_unary_op(maybe_get_output(), self, "neg");
}

void native::structured_neg_out::impl(const Tensor& self, const Tensor& out) {
  OP_DISPATCH_ALL_TYPES(common_dtype(), "neg", {
    for_each_element<scalar_t>([](scalar_t x) -> scalar_t { return static_cast<scalar_t>(-x); });
  });
}

namespace {

// dst = max(src, 0) elementwise; src and dst have the same sizes and may be the same tensor.
// NaN stays NaN.
void relu_into(const Tensor& src, const Tensor& dst) {
  OP_CHECK(src.dtype() != ScalarType::Bool, "relu: bool tensors are not supported");
  src.check_host_data("relu");
  dst.check_host_data("relu");
  OP_DISPATCH_ALL_TYPES(src.dtype(), "relu", {
    const scalar_t* in = static_cast<const scalar_t*>(src.storage().data());
    scalar_t* out = static_cast<scalar_t*>(dst.storage().data());
    for_each_offsets<2>(src.sizes(), {dst.strides(), src.strides()}, {dst.storage_offset(), src.storage_offset()},
                        [&](const std::array<int64_t, 2>& o) {
                          const scalar_t x = in[o[1]];
                          out[o[0]] = x < scalar_t(0) ? scalar_t(0) : x;
                        });
  });
}

}  // namespace

Tensor native::relu(const Tensor& self) {
  Tensor out = Tensor::empty(self.sizes(), TensorOptions(self.dtype()).with_device(self.device()));
  relu_into(self, out);
  return out;
}

Tensor& native::relu_(Tensor& self) {
  relu_into(self, self);
  return self;
}

}  // namespace op
