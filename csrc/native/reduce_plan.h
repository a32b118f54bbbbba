// How the CUDA reductions lay their work on the GPU (cuda/reduce_kernels.cu): plain host
// arithmetic on the shapes, kept out of the .cu file so every build compiles it and the unit
// tests check it without a GPU.
#pragma once

#include <cstdint>

namespace op::native {

// The shape of a block of the reduction kernels.
struct ReduceBlock {
  static constexpr int kThreads = 256;
  static constexpr int kWarp = 32;
  static constexpr int kWarps = kThreads / kWarp;          // outputs a block covers in warp rows
  static constexpr int kColumns = kWarp;                    // threads a block spreads along columns
  static constexpr int kRowsPerColumn = kThreads / kColumns;  // threads sharing one of those columns
  static constexpr int kPacket = 4;                         // outputs a thread covers in packet columns
};

// Where one output's reduced elements lie, as the kernels see it.
enum class ReduceAxis {
  kRows,           // adjacent, or anywhere but where the kept elements are adjacent
  kColumns,        // the kept elements are adjacent: threads walk them side by side
  kPacketColumns,  // the same, every thread's kPacket outputs loaded with one aligned access
};

// The kernel a reduction runs.
enum class ReduceLayout {
  kBlockRows,      // a block folds each output: few outputs, long rows
  kWarpRows,       // a warp folds each output: enough outputs to fill the GPU with warps
  kColumns,        // a thread per output, kRowsPerColumn threads sharing its reduced elements
  kPacketColumns,  // the same with kPacket outputs a thread
};

struct ReducePlan {
  ReduceLayout layout = ReduceLayout::kBlockRows;
  unsigned blocks = 1;  // grid.x: blocks over the outputs
  int splits = 1;       // grid.y: blocks sharing each output's reduced elements; > 1 needs a second pass
};

// `nout` outputs of `nreduced` elements each on a GPU of `multiprocessors` SMs. Rows go to warps
// when a block of warps per multiprocessor, twice over, is busy without splitting; otherwise a
// block per output. Splits the reduced elements only when the outputs alone leave the GPU idle,
// and never into chunks too small to pay for their partial results.
ReducePlan plan_reduction(int64_t nout, int64_t nreduced, ReduceAxis axis, int multiprocessors);

// The second pass over [splits][nout] partial results: a block per output when there are fewer
// outputs than a warp, else columns (the outputs adjacent, threads sharing the splits).
bool fold_partials_along_columns(int64_t nout);

}  // namespace op::native
