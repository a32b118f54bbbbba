// The receipt of one registration: release() (or destruction) undoes exactly that
// registration and nothing else. Move-only, so each registration is undone once.
#pragma once

#include <functional>
#include <utility>

namespace op {

class RegistrationHandle {
 public:
  RegistrationHandle() = default;
  explicit RegistrationHandle(std::function<void()> undo) : undo_(std::move(undo)) {}
  RegistrationHandle(RegistrationHandle&& other) noexcept : undo_(std::move(other.undo_)) { other.undo_ = nullptr; }
  RegistrationHandle& operator=(RegistrationHandle&& other) noexcept {
    if (this != &other) {
      release();
      undo_ = std::move(other.undo_);
      other.undo_ = nullptr;
    }
    return *this;
  }
  RegistrationHandle(const RegistrationHandle&) = delete;
  RegistrationHandle& operator=(const RegistrationHandle&) = delete;
  ~RegistrationHandle() { release(); }

  void release() {
    if (!undo_) return;
    std::function<void()> undo = std::move(undo_);
    undo_ = nullptr;
    undo();
  }
  bool active() const { return static_cast<bool>(undo_); }

 private:
  std::function<void()> undo_;
};

}  // namespace op
