// Lazy tensors: TensorImpls on device "lazy" (DispatchKey::Lazy) with no storage. Each holds
// either a pending IR value or its materialized data (a cpu tensor, never written in place).
// Every live lazy tensor is known to the runtime, so mark_step() can find what is pending.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "backends/lazy/ir.h"
#include "core/tensor.h"

namespace op::lazy {

// Registers "lazy" with DispatchKey::Lazy on first use (the library also does it when loaded).
DeviceType lazy_device_type();
Device lazy_device();
bool is_lazy(const TensorBase& t);  // a plain lazy tensor (not a functional wrapper of one)

struct LazyTensorState final : BackendTensorState {
  LazyTensorState();
  ~LazyTensorState() override;
  const uint64_t id;  // creation order: mark_step() visits tensors in it
  Value ir;           // pending: what the tensor will be
  TensorBase data;    // materialized: a cpu tensor of the tensor's sizes and dtype
  Value data_leaf;    // the data node other nodes use for `data` (made once)
};

// The state of a plain lazy tensor; op::Error naming `what` for anything else.
LazyTensorState& state_of(const TensorBase& t, const char* what);

TensorBase make_data_tensor(TensorBase cpu_data, Device device);
// A new lazy tensor with t's value: its pending IR, or the same data (data is never written).
TensorBase share_value(const TensorBase& t, Device device);
// Points an existing lazy tensor at a new value or data (copy_, fill_, the fallback's writes);
// its sizes follow.
void set_value(const TensorBase& t, Value value);
void set_data(const TensorBase& t, TensorBase cpu_data);
// t takes `from`'s value (pending IR or data) as its own; sizes and dtypes must agree.
void set_same_value(const TensorBase& t, const TensorBase& from);

// The states of every live lazy tensor with a pending value, oldest first.
std::vector<std::shared_ptr<LazyTensorState>> pending_states();
std::shared_ptr<LazyTensorState> shared_state(const TensorBase& t);

// The data of lazy tensor t, running its pending graph first (graph.h).
TensorBase materialize(const TensorBase& t);

// True while the Functionalize key is excluded on this thread: the kernel runs below
// functionalization and must return plain lazy tensors; above it, new lazy tensors are
// wrapped (PR 75527: lazy tensors live under functionalization).
bool below_functionalization();
TensorBase wrap_if_above(TensorBase t);

}  // namespace op::lazy
