#include "native/reduce_plan.h"

#include <algorithm>

namespace op::native {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

ReducePlan plan_reduction(int64_t nout, int64_t nreduced, ReduceAxis axis, int multiprocessors) {
  const int64_t sms = std::max(multiprocessors, 1);
  ReducePlan plan;
  int64_t outputs_per_block = 1;
  int64_t threads_per_output = ReduceBlock::kThreads;
  switch (axis) {
    case ReduceAxis::kRows:
      if (ceil_div(nout, ReduceBlock::kWarps) >= 2 * sms) {
        plan.layout = ReduceLayout::kWarpRows;
        plan.blocks = static_cast<unsigned>(std::min<int64_t>(ceil_div(nout, ReduceBlock::kWarps), 0x7fffffff));
        return plan;  // the GPU is busy: never split
      }
      plan.layout = ReduceLayout::kBlockRows;
      break;
    case ReduceAxis::kColumns:
      plan.layout = ReduceLayout::kColumns;
      outputs_per_block = ReduceBlock::kColumns;
      threads_per_output = ReduceBlock::kRowsPerColumn;
      break;
    case ReduceAxis::kPacketColumns:
      plan.layout = ReduceLayout::kPacketColumns;
      outputs_per_block = int64_t(ReduceBlock::kColumns) * ReduceBlock::kPacket;
      threads_per_output = ReduceBlock::kRowsPerColumn;
      break;
  }
  const int64_t out_blocks = std::max<int64_t>(1, ceil_div(nout, outputs_per_block));
  plan.blocks = static_cast<unsigned>(std::min<int64_t>(out_blocks, 0x7fffffff));
  // Eight blocks of 256 threads fill a multiprocessor; each split keeps 16 elements per thread.
  const int64_t target_blocks = sms * 8;
  const int64_t min_chunk = threads_per_output * 16;
  if (out_blocks < target_blocks) {
    const int64_t wanted = ceil_div(target_blocks, out_blocks);
    const int64_t affordable = ceil_div(nreduced, min_chunk);
    plan.splits = static_cast<int>(std::clamp<int64_t>(std::min(wanted, affordable), 1, 65535));
  }
  return plan;
}

bool fold_partials_along_columns(int64_t nout) { return nout >= ReduceBlock::kColumns; }

}  // namespace op::native
