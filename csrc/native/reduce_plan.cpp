#include "native/reduce_plan.h"

#include <algorithm>

namespace op::native {

ReducePlan plan_reduction(int64_t nout, int64_t nreduced, bool along_columns, int multiprocessors) {
  ReducePlan plan;
  plan.along_columns = along_columns;
  const int64_t outputs_per_block = along_columns ? ReduceBlock::kColumns : 1;
  const int64_t out_blocks = std::max<int64_t>(1, (nout + outputs_per_block - 1) / outputs_per_block);
  plan.blocks = static_cast<unsigned>(std::min<int64_t>(out_blocks, 0x7fffffff));
  // Eight blocks of 256 threads fill a multiprocessor; each split keeps 16 elements per thread.
  const int64_t target_blocks = int64_t(std::max(multiprocessors, 1)) * 8;
  const int64_t min_chunk = (along_columns ? ReduceBlock::kRowsPerColumn : ReduceBlock::kThreads) * int64_t(16);
  if (out_blocks < target_blocks) {
    const int64_t wanted = (target_blocks + out_blocks - 1) / out_blocks;
    const int64_t affordable = (nreduced + min_chunk - 1) / min_chunk;
    plan.splits = static_cast<int>(std::clamp<int64_t>(std::min(wanted, affordable), 1, 65535));
  }
  return plan;
}

}  // namespace op::native
