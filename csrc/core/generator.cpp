#include "core/generator.h"

namespace op {

Generator::Generator(Device device, uint64_t seed) : state_(std::make_shared<State>()) {
  state_->device = device;
  state_->seed = seed;
}

uint64_t Generator::seed() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->seed;
}

uint64_t Generator::offset() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->offset;
}

Generator& Generator::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->seed = seed;
  state_->offset = 0;
  return *this;
}

Generator::Draws Generator::reserve(uint64_t n) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  Draws draws{state_->seed, state_->offset};
  state_->offset += n;
  return draws;
}

Generator& default_generator(DeviceType type) {
  // Leaked on purpose: kernels may draw during static destruction of other libraries.
  static Generator* generators[kMaxDeviceTypes] = {};
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  Generator*& slot = generators[static_cast<int>(type)];
  if (!slot) slot = new Generator(Device(type));
  return *slot;
}

}  // namespace op
