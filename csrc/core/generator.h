// Seedable random number state for rand, randn, uniform_ and normal_. Kernels use a
// counter-based generator: a call reserves `numel` consecutive draws (seed, offset .. offset+n)
// and element i uses draw offset + i, so results depend only on the seed and the number of
// values drawn before, never on threads or the device. Copies share one state, like
// torch.Generator objects do.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>

#include "core/device.h"

namespace op {

class Generator {
 public:
  static constexpr uint64_t kDefaultSeed = 67280421310721ULL;

  explicit Generator(Device device = Device(), uint64_t seed = kDefaultSeed);

  Device device() const { return state_->device; }
  uint64_t seed() const;
  uint64_t offset() const;  // draws handed out since the last manual_seed
  Generator& manual_seed(uint64_t seed);  // restarts the stream

  struct Draws {
    uint64_t seed;
    uint64_t offset;
  };
  // Hands out the next n draws (thread-safe) and advances past them.
  Draws reserve(uint64_t n);

  bool operator==(const Generator& other) const { return state_ == other.state_; }

 private:
  struct State {
    Device device;
    uint64_t seed;
    uint64_t offset = 0;
    mutable std::mutex mutex;
  };
  std::shared_ptr<State> state_;
};

// The generator factories use when none is passed, one per device type.
Generator& default_generator(DeviceType type);

}  // namespace op
