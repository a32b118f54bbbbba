// Thread-local include/exclude key sets: code running on a thread can add keys to every call
// (include) or hide them (exclude; e.g. an autograd kernel excludes autograd while it runs
// the backend). Change them only through the RAII guards, which restore exactly what they changed.
#pragma once

#include "core/dispatch_key_set.h"

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

// Adds keys to one of the thread-local sets for its lifetime. It records only the keys it
// added, so nested and overlapping guards each restore exactly their own change.
template <DispatchKeySet LocalDispatchKeySet::*Set>
class LocalKeySetGuard {
 public:
  explicit LocalKeySetGuard(DispatchKeySet keys) {
    DispatchKeySet& set = tls_local_dispatch_key_set.*Set;
    added_ = keys - set;
    set = set | added_;
  }
  explicit LocalKeySetGuard(DispatchKey key) : LocalKeySetGuard(DispatchKeySet(key)) {}
  ~LocalKeySetGuard() {
    DispatchKeySet& set = tls_local_dispatch_key_set.*Set;
    set = set - added_;
  }
  LocalKeySetGuard(const LocalKeySetGuard&) = delete;
  LocalKeySetGuard& operator=(const LocalKeySetGuard&) = delete;

 private:
  DispatchKeySet added_;
};

using IncludeKeyGuard = LocalKeySetGuard<&LocalDispatchKeySet::included>;
using ExcludeKeyGuard = LocalKeySetGuard<&LocalDispatchKeySet::excluded>;

}  // namespace op
