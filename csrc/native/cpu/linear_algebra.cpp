// mm: structured matrix product of two 2-d tensors (meta + CPU impl).
#include <type_traits>
#include <vector>

#include "core/error.h"
#include "core/scalar_type.h"
#include "core/strided_loop.h"
#include "ops/mm_native.h"

namespace op {

void meta::structured_mm::meta(const Tensor& self, const Tensor& mat2) {
  OP_CHECK(self.defined() && mat2.defined(), "mm: undefined input");
  OP_CHECK(self.dim() == 2, "mm: self must be a matrix (2-d), got a ", self.dim(), "-d tensor");
  OP_CHECK(mat2.dim() == 2, "mm: mat2 must be a matrix (2-d), got a ", mat2.dim(), "-d tensor");
  OP_CHECK(self.size(1) == mat2.size(0), "mm: mat1 and mat2 shapes cannot be multiplied (", self.size(0), "x",
           self.size(1), " and ", mat2.size(0), "x", mat2.size(1), ")");
  OP_CHECK(self.dtype() == mat2.dtype(), "mm: expected mat1 and mat2 to have the same dtype, but got ",
           to_string(self.dtype()), " and ", to_string(mat2.dtype()));
  OP_CHECK(self.device() == mat2.device(), "mm: expected mat1 and mat2 on the same device, but got ",
           self.device().str(), " and ", mat2.device().str());
  set_output_contiguous(0, {self.size(0), mat2.size(1)}, TensorOptions(self.dtype()).with_device(self.device()));
}

void native::structured_mm_out::impl(const Tensor& self, const Tensor& mat2, const Tensor& out) {
  self.check_host_data("mm");
  mat2.check_host_data("mm");
  out.check_host_data("mm");
  const int64_t n = self.size(0), k = self.size(1), p = mat2.size(1);
  OP_DISPATCH_ALL_TYPES(out.dtype(), "mm", {
    // Accumulate wide, in a separate buffer: out may be one of the inputs.
    using acc_t = std::conditional_t<std::is_floating_point_v<scalar_t>, double, int64_t>;
    std::vector<acc_t> acc(static_cast<size_t>(n * p), acc_t(0));
    const scalar_t* a = self.data_ptr<scalar_t>();
    const scalar_t* b = mat2.data_ptr<scalar_t>();
    const int64_t a0 = self.stride(0), a1 = self.stride(1), b0 = mat2.stride(0), b1 = mat2.stride(1);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t l = 0; l < k; ++l) {
        const acc_t x = static_cast<acc_t>(a[i * a0 + l * a1]);
        acc_t* row = &acc[static_cast<size_t>(i * p)];
        for (int64_t j = 0; j < p; ++j) row[j] += x * static_cast<acc_t>(b[l * b0 + j * b1]);
      }
    scalar_t* dst = static_cast<scalar_t*>(out.storage().data());
    size_t i = 0;
    for_each_offset(out.sizes(), out.strides(), out.storage_offset(),
                    [&](int64_t offset) { dst[offset] = static_cast<scalar_t>(acc[i++]); });
  });
}

}  // namespace op
