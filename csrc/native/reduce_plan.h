// How the CUDA reductions lay their work on the GPU (cuda/reduce_kernels.cu): plain host
// arithmetic on the shapes, kept out of the .cu file so every build compiles it and the unit
// tests check it without a GPU.
#pragma once

#include <cstdint>

namespace op::native {

// The shape of a block of the reduction kernels.
struct ReduceBlock {
  static constexpr int kThreads = 256;
  static constexpr int kColumns = 32;                       // outputs a block covers along columns: one warp
  static constexpr int kRowsPerColumn = kThreads / kColumns;  // threads sharing one of those outputs
};

struct ReducePlan {
  bool along_columns = false;  // a thread per output (kept elements adjacent) rather than a block
  unsigned blocks = 1;         // grid.x: blocks over the outputs
  int splits = 1;              // grid.y: blocks sharing each output's reduced elements; > 1 needs a second pass
};

// `nout` outputs of `nreduced` elements each on a GPU of `multiprocessors` SMs. Splits the
// reduced elements only when the outputs alone leave the GPU idle, and never into chunks too
// small to pay for their partial results.
ReducePlan plan_reduction(int64_t nout, int64_t nreduced, bool along_columns, int multiprocessors);

}  // namespace op::native
