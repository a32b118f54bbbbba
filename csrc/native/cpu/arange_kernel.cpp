// CPU loop of arange: out[i] = start + i * step into a contiguous 1-d tensor. Floating
// outputs compute in double, integral ones in int64 (a fractional start or step truncates,
// as the conversion to the output type would).
#include <cstdint>
#include <type_traits>

#include "native/stubs.h"

namespace op::native {

namespace {

void arange_kernel(const TensorBase& out, const Scalar& start, const Scalar& step) {
  out.check_host_data("arange");
  OP_DISPATCH_ALL_TYPES(out.dtype(), "arange", {
    using acc_t = std::conditional_t<std::is_floating_point_v<scalar_t>, double, int64_t>;
    const acc_t first = start.to<acc_t>(), delta = step.to<acc_t>();
    scalar_t* data = out.data_ptr<scalar_t>();
    const int64_t n = out.numel();
    for (int64_t i = 0; i < n; ++i) data[i] = static_cast<scalar_t>(first + static_cast<acc_t>(i) * delta);
  });
}

}  // namespace

OP_REGISTER_STUB(arange_stub, CPU, &arange_kernel);

}  // namespace op::native
