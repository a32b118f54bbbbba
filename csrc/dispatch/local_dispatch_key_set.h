// Thread-local include/exclude key sets: code running on a thread can add keys to every call
// (include) or hide them (exclude; e.g. an autograd kernel excludes autograd while it runs
// the backend). Change them only through the RAII guards, which restore exactly what they changed.
#pragma once

#include "dispatch/dispatch_key_set.h"

namespace op {

struct LocalDispatchKeySet {
  DispatchKeySet included;
  DispatchKeySet excluded;
};

// Defined in local_dispatch_key_set.cpp; read on every dispatched call.
extern thread_local LocalDispatchKeySet tls_local_dispatch_key_set;

// The key set a call dispatches on: its tensors' keys, the global and thread-local includes,
// minus the thread-local excludes.
inline DispatchKeySet compute_dispatch_key_set(DispatchKeySet from_arguments) {
  const LocalDispatchKeySet& local = tls_local_dispatch_key_set;
  return (from_arguments | local.included | global_include_set()) - local.excluded;
}

class IncludeKeyGuard {
 public:
  explicit IncludeKeyGuard(DispatchKeySet keys);
  explicit IncludeKeyGuard(DispatchKey key) : IncludeKeyGuard(DispatchKeySet(key)) {}
  ~IncludeKeyGuard();
  IncludeKeyGuard(const IncludeKeyGuard&) = delete;
  IncludeKeyGuard& operator=(const IncludeKeyGuard&) = delete;

 private:
  DispatchKeySet added_;  // only the keys this guard added: nested guards restore correctly
};

class ExcludeKeyGuard {
 public:
  explicit ExcludeKeyGuard(DispatchKeySet keys);
  explicit ExcludeKeyGuard(DispatchKey key) : ExcludeKeyGuard(DispatchKeySet(key)) {}
  ~ExcludeKeyGuard();
  ExcludeKeyGuard(const ExcludeKeyGuard&) = delete;
  ExcludeKeyGuard& operator=(const ExcludeKeyGuard&) = delete;

 private:
  DispatchKeySet added_;
};

}  // namespace op
