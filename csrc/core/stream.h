// Stream: a queue of work on a device (`Stream` in schemas: record_stream), as an identity: the
// device and a stream id (0: the device's default stream), as c10::Stream is. A CUDA stream's id
// is its cudaStream_t (opdispatch.cuda.Stream, native/cuda/record_stream.cpp). Boxed as its own
// IValue kind; from Python an opdispatch.Stream.
#pragma once

#include <cstdint>
#include <string>

#include "core/device.h"

namespace op {

class Stream {
 public:
  explicit Stream(Device device = Device(), int64_t id = 0) : device_(device), id_(id) {}

  Device device() const { return device_; }
  int64_t id() const { return id_; }
  std::string str() const { return "Stream(device=" + device_.str() + ", id=" + std::to_string(id_) + ")"; }

  bool operator==(const Stream& other) const { return device_ == other.device_ && id_ == other.id_; }
  bool operator!=(const Stream& other) const { return !(*this == other); }

 private:
  Device device_;
  int64_t id_;
};

}  // namespace op
