#include "core/device.h"

#include <array>
#include <cstdlib>
#include <mutex>

#include "core/error.h"

namespace op {

namespace {

struct DeviceTypeInfo {
  std::string name;
  DispatchKey backend = DispatchKey::Undefined;
};

// The registry only grows: device types are process-wide names like dtypes. The array never
// reallocates, so device_type_name() can hand out stable pointers.
struct DeviceRegistry {
  std::mutex mutex;
  std::array<DeviceTypeInfo, kMaxDeviceTypes> types;
  int count = kFirstExternalDeviceType;

  DeviceRegistry() {
    types[0] = {"cpu", DispatchKey::CPU};
    types[1] = {"cuda", DispatchKey::CUDA};
    types[2] = {"meta", DispatchKey::Meta};
  }
};

DeviceRegistry& registry() {
  static DeviceRegistry* r = new DeviceRegistry();  // leaked: used by static destructors
  return *r;
}

const DeviceTypeInfo& info(DeviceType type) {
  int i = static_cast<int>(type);
  DeviceRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  OP_CHECK(i >= 0 && i < r.count, "invalid device type id ", i);
  return r.types[i];
}

}  // namespace

DeviceType register_device_type(const std::string& name, DispatchKey backend) {
  OP_CHECK(!name.empty() && name.find(':') == std::string::npos,
           "device type name '", name, "' must be non-empty and must not contain ':'");
  OP_CHECK(is_backend_key(backend), "device type '", name, "' must map to a backend dispatch key, not ",
           to_string(backend));
  DeviceRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (int i = 0; i < r.count; ++i) {
    if (r.types[i].name != name) continue;
    OP_CHECK(r.types[i].backend == backend, "device type '", name, "' is already registered with key ",
             to_string(r.types[i].backend), ", not ", to_string(backend));
    return static_cast<DeviceType>(i);
  }
  OP_CHECK(r.count < kMaxDeviceTypes, "too many device types (at most ", kMaxDeviceTypes, ")");
  r.types[r.count] = {name, backend};
  return static_cast<DeviceType>(r.count++);
}

std::optional<DeviceType> find_device_type(const std::string& name) {
  DeviceRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (int i = 0; i < r.count; ++i)
    if (r.types[i].name == name) return static_cast<DeviceType>(i);
  return std::nullopt;
}

const char* device_type_name(DeviceType type) { return info(type).name.c_str(); }
DispatchKey backend_key_of(DeviceType type) { return info(type).backend; }

DispatchKeySet key_set_of(DeviceType type) {
  DispatchKey backend = backend_key_of(type);
  DispatchKeySet ks(backend);
  DispatchKey autograd = autograd_key_for(backend);
  // A device with an autograd layer has the ADInplaceOrView layer under it too.
  return autograd == DispatchKey::Undefined ? ks : ks.add(autograd).add(DispatchKey::ADInplaceOrView);
}

Device::Device(DeviceType type, int index) : type_(type), index_(static_cast<int8_t>(index)) {
  info(type);  // validates the id
  OP_CHECK(index >= -1 && index < 128, "device index ", index, " out of range");
}

Device::Device(const std::string& spec) : type_(DeviceType::CPU), index_(-1) {
  std::string name = spec;
  size_t colon = spec.find(':');
  if (colon != std::string::npos) {
    name = spec.substr(0, colon);
    std::string digits = spec.substr(colon + 1);
    OP_CHECK(!digits.empty() && digits.size() <= 3 && digits.find_first_not_of("0123456789") == std::string::npos,
             "bad device string '", spec, "': expected e.g. 'cpu', 'cuda:0'");
    int index = std::atoi(digits.c_str());
    OP_CHECK(index < 128, "device index ", index, " out of range in '", spec, "'");
    index_ = static_cast<int8_t>(index);
  }
  std::optional<DeviceType> type = find_device_type(name);
  OP_CHECK(type.has_value(), "unknown device type '", name, "' in '", spec,
           "'; known: cpu, cuda, meta and registered external devices");
  type_ = *type;
}

std::string Device::str() const {
  std::string s = device_type_name(type_);
  return index_ >= 0 ? s + ":" + std::to_string(index_) : s;
}

}  // namespace op
