// Random sampling: uniform_ and normal_ (one device-generic kernel each, drawing from the
// given or the device's default generator and calling the device's loop), their Meta kernels
// (shapes only, no draws) and the factories rand and randn built on them.
#include <cmath>
#include <cstdint>

#include "core/error.h"
#include "core/generator.h"
#include "core/memory_overlap.h"
#include "native/stubs.h"
#include "ops/empty.h"
#include "ops/normal.h"
#include "ops/normal_native.h"
#include "ops/rand_native.h"
#include "ops/randn_native.h"
#include "ops/uniform.h"
#include "ops/uniform_native.h"

namespace op {

namespace {

void check_floating(ScalarType dtype, const char* what) {
  OP_CHECK(is_floating(dtype), what, ": expected a floating point dtype, got ", to_string(dtype));
}

void check_uniform_args(const TensorBase& self, double from, double to) {
  check_floating(self.dtype(), "uniform_");
  OP_CHECK(from <= to, "uniform_: expected from <= to, got from=", from, " and to=", to);
  OP_CHECK(std::isfinite(to - from), "uniform_: the range [", from, ", ", to, ") must be finite");
}

void check_normal_args(const TensorBase& self, double mean, double std) {
  check_floating(self.dtype(), "normal_");
  OP_CHECK(std::isfinite(mean), "normal_: mean must be finite, got ", mean);
  OP_CHECK(std::isfinite(std) && std >= 0, "normal_: std must be finite and >= 0, got ", std);
}

// Reserves self.numel() draws from the generator passed in, or the default one of self's
// device type; a generator must belong to that device type.
Generator::Draws reserve_draws(const TensorBase& self, const std::optional<Generator>& generator, const char* what) {
  const DeviceType type = self.device().type();
  Generator gen = generator ? *generator : default_generator(type);
  OP_CHECK(gen.device().type() == type, what, ": the generator is for device ", gen.device().str(),
           " but the tensor is on ", self.device().str());
  return gen.reserve(static_cast<uint64_t>(self.numel()));
}

}  // namespace

TensorBase& native::uniform_(TensorBase& self, double from, double to, const std::optional<Generator>& generator) {
  check_uniform_args(self, from, to);
  if (self.numel() == 0) return self;
  assert_no_internal_overlap(self);  // before drawing: a shared location would get several draws
  const Generator::Draws draws = reserve_draws(self, generator, "uniform_");
  uniform_stub(self.device().type(), self, from, to, draws.seed, draws.offset);
  return self;
}

TensorBase& native::uniform_meta_(TensorBase& self, double from, double to, const std::optional<Generator>& generator) {
  (void)generator;  // nothing is drawn for a tensor without data
  check_uniform_args(self, from, to);
  return self;
}

TensorBase& native::normal_(TensorBase& self, double mean, double std, const std::optional<Generator>& generator) {
  check_normal_args(self, mean, std);
  if (self.numel() == 0) return self;
  assert_no_internal_overlap(self);  // before drawing: a shared location would get several draws
  const Generator::Draws draws = reserve_draws(self, generator, "normal_");
  normal_stub(self.device().type(), self, mean, std, draws.seed, draws.offset);
  return self;
}

TensorBase& native::normal_meta_(TensorBase& self, double mean, double std, const std::optional<Generator>& generator) {
  (void)generator;
  check_normal_args(self, mean, std);
  return self;
}

TensorBase native::rand(IntArrayRef size, const std::optional<Generator>& generator, std::optional<ScalarType> dtype,
                    std::optional<Layout> layout, std::optional<Device> device, std::optional<bool> pin_memory) {
  check_floating(dtype.value_or(ScalarType::Float32), "rand");
  TensorBase t = op::empty(size, dtype, layout, device, pin_memory);
  return ops::uniform_::call(t, 0, 1, generator);
}

TensorBase native::randn(IntArrayRef size, const std::optional<Generator>& generator, std::optional<ScalarType> dtype,
                     std::optional<Layout> layout, std::optional<Device> device, std::optional<bool> pin_memory) {
  check_floating(dtype.value_or(ScalarType::Float32), "randn");
  TensorBase t = op::empty(size, dtype, layout, device, pin_memory);
  return ops::normal_::call(t, 0, 1, generator);
}

}  // namespace op
