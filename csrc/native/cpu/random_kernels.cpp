// CPU loops of uniform_ and normal_: element i (row-major) takes counter offset + i of the
// Philox stream, exactly like the CUDA kernels, so both devices give the same values.
#include <cstdint>
#include <type_traits>

#include "core/error.h"
#include "core/strided_loop.h"
#include "native/random_counter.h"
#include "native/stubs.h"

namespace op::native {

namespace {

// Stores draw(T{}, k) into element k (row-major) of a float32 or float64 tensor; the first
// argument only carries the element type.
template <class Draw>
void fill_floating(const TensorBase& self, const char* what, Draw&& draw) {
  self.check_host_data(what);
  auto run = [&](auto* base) {
    using T = std::remove_pointer_t<decltype(base)>;
    uint64_t k = 0;
    for_each_offset(self.sizes(), self.strides(), self.storage_offset(), [&](int64_t o) { base[o] = draw(T{}, k++); });
  };
  switch (self.dtype()) {
    case ScalarType::Float32: run(static_cast<float*>(self.storage().data())); break;
    case ScalarType::Float64: run(static_cast<double*>(self.storage().data())); break;
    default: fail(str(what, ": expected a floating point tensor, got ", to_string(self.dtype())));
  }
}

void uniform_kernel(const TensorBase& self, double from, double to, uint64_t seed, uint64_t offset) {
  fill_floating(self, "uniform_", [&](auto type, uint64_t k) {
    return rng::uniform_value<decltype(type)>(seed, offset + k, from, to);
  });
}

void normal_kernel(const TensorBase& self, double mean, double std, uint64_t seed, uint64_t offset) {
  fill_floating(self, "normal_", [&](auto type, uint64_t k) {
    return rng::normal_value<decltype(type)>(seed, offset + k, mean, std);
  });
}

}  // namespace

OP_REGISTER_STUB(uniform_stub, CPU, &uniform_kernel);
OP_REGISTER_STUB(normal_stub, CPU, &normal_kernel);

}  // namespace op::native
