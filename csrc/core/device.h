// Where a tensor lives. CPU, CUDA and Meta are built in; external backends (e.g. "xla")
// register a device type by name together with the dispatch key their tensors carry.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/dispatch_key_set.h"

namespace op {

// Built-in device types; register_device_type() hands out the ids from kFirstExternal on.
enum class DeviceType : int8_t { CPU = 0, CUDA = 1, Meta = 2 };
constexpr int kFirstExternalDeviceType = 3;
constexpr int kMaxDeviceTypes = 16;

class Device {
 public:
  Device(DeviceType type = DeviceType::CPU, int index = -1);  // NOLINT: Device(DeviceType::Meta)
  // Parses "cpu", "cuda:1", "meta", "xla:0"; throws op::Error for unknown device types.
  explicit Device(const std::string& spec);

  DeviceType type() const { return type_; }
  int index() const { return index_; }  // -1: unspecified
  bool has_index() const { return index_ >= 0; }
  bool is_cpu() const { return type_ == DeviceType::CPU; }
  bool is_meta() const { return type_ == DeviceType::Meta; }
  std::string str() const;

  bool operator==(const Device& o) const { return type_ == o.type_ && index_ == o.index_; }
  bool operator!=(const Device& o) const { return !(*this == o); }

 private:
  DeviceType type_;
  int8_t index_;
};

// Registers an external device type (idempotent for the same name and key). The backend key
// must be a backend dispatch key (XLA, Lazy, PrivateUse1, ...); tensors on the device then
// carry that key and its autograd key.
DeviceType register_device_type(const std::string& name, DispatchKey backend);
std::optional<DeviceType> find_device_type(const std::string& name);
const char* device_type_name(DeviceType type);  // "cpu", "cuda", "meta", "xla"

// The backend key of a device type and the key set its tensors carry (the backend key, and its
// autograd key with ADInplaceOrView when the backend has one).
DispatchKey backend_key_of(DeviceType type);
DispatchKeySet key_set_of(DeviceType type);

}  // namespace op
