#include "dispatch/local_dispatch_key_set.h"

namespace op {

thread_local LocalDispatchKeySet tls_local_dispatch_key_set;

}  // namespace op
