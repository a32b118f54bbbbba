#include "dispatch/local_dispatch_key_set.h"

namespace op {

thread_local LocalDispatchKeySet tls_local_dispatch_key_set;

IncludeKeyGuard::IncludeKeyGuard(DispatchKeySet keys) {
  LocalDispatchKeySet& local = tls_local_dispatch_key_set;
  added_ = keys - local.included;
  local.included = local.included | added_;
}

IncludeKeyGuard::~IncludeKeyGuard() {
  LocalDispatchKeySet& local = tls_local_dispatch_key_set;
  local.included = local.included - added_;
}

ExcludeKeyGuard::ExcludeKeyGuard(DispatchKeySet keys) {
  LocalDispatchKeySet& local = tls_local_dispatch_key_set;
  added_ = keys - local.excluded;
  local.excluded = local.excluded | added_;
}

ExcludeKeyGuard::~ExcludeKeyGuard() {
  LocalDispatchKeySet& local = tls_local_dispatch_key_set;
  local.excluded = local.excluded - added_;
}

}  // namespace op
