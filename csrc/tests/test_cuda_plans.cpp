// The host-side arithmetic the CUDA loops rely on, checked without a GPU: the 32-bit index
// divider (native/int_divider.h) and the reductions' launch plan (native/reduce_plan.h).
#include <cstdint>
#include <random>

#include "native/int_divider.h"
#include "native/reduce_plan.h"
#include "tests/harness.h"

using op::native::IntDivider;
using op::native::fold_partials_along_columns;
using op::native::plan_reduction;
using op::native::ReduceAxis;
using op::native::ReduceBlock;
using op::native::ReduceLayout;
using op::native::ReducePlan;

namespace {

bool divides_exactly(uint32_t d, uint32_t n) {
  const IntDivider divider(d);
  return divider.div(n) == n / d;
}

}  // namespace

TEST(int_divider_is_exact_for_small_divisors_and_dividends) {
  for (uint32_t d = 1; d <= 300; ++d)
    for (uint32_t n = 0; n <= 5000; ++n) CHECK(divides_exactly(d, n));
}

TEST(int_divider_is_exact_near_the_limits) {
  const uint32_t limit = (uint32_t(1) << 31) - 1;  // the largest dividend the loops pass
  const uint32_t divisors[] = {1, 2, 3, 7, 10, 255, 256, 257, 4095, 4096, 4097, 65535, 65536, 65537,
                               1000003, (1u << 30) - 1, 1u << 30, (1u << 30) + 1, limit - 1, limit, 1u << 31};
  for (uint32_t d : divisors) {
    for (uint32_t n : {0u, 1u, d - 1, d, d + 1, limit - d, limit - 1, limit})
      if (n <= limit) CHECK(divides_exactly(d, n));
    for (uint32_t q = 1; q < 64 && uint64_t(q) * d <= limit; ++q) {
      CHECK(divides_exactly(d, q * d));
      CHECK(divides_exactly(d, q * d - 1));
    }
  }
}

TEST(int_divider_is_exact_on_random_pairs) {
  std::mt19937 random(20261128);
  std::uniform_int_distribution<uint32_t> dividend(0, (1u << 31) - 1), divisor(1, (1u << 31) - 1);
  for (int i = 0; i < 200000; ++i) {
    const uint32_t d = i % 2 ? divisor(random) : divisor(random) % 5000 + 1;
    CHECK(divides_exactly(d, dividend(random)));
  }
}

TEST(a_full_reduction_is_split_across_the_gpu) {
  // sum() of 16M floats on 132 multiprocessors: one output, so the reduced elements are split
  // into 8 blocks per multiprocessor, each folding thousands of them.
  const ReducePlan p = plan_reduction(1, int64_t(1) << 24, ReduceAxis::kRows, 132);
  CHECK(p.layout == ReduceLayout::kBlockRows);
  CHECK_EQ(p.blocks, 1u);
  CHECK_EQ(p.splits, 132 * 8);
  CHECK((int64_t(1) << 24) / p.splits >= ReduceBlock::kThreads * 16);
  CHECK(!fold_partials_along_columns(1));
}

TEST(many_rows_go_to_warps_without_a_second_pass) {
  // sum([1]) of 4096 x 4096: 512 blocks of 8 warps, a warp per row, already fill the GPU.
  const ReducePlan rows = plan_reduction(4096, 4096, ReduceAxis::kRows, 132);
  CHECK(rows.layout == ReduceLayout::kWarpRows);
  CHECK_EQ(rows.blocks, 4096u / ReduceBlock::kWarps);
  CHECK_EQ(rows.splits, 1);
  // Fewer rows than two blocks of warps per multiprocessor: a block each, split when long.
  const ReducePlan few = plan_reduction(2000, 100000, ReduceAxis::kRows, 132);
  CHECK(few.layout == ReduceLayout::kBlockRows);
  CHECK_EQ(few.blocks, 2000u);
  CHECK_EQ(few.splits, 1);
  CHECK(plan_reduction(64, 1 << 20, ReduceAxis::kRows, 132).splits > 1);
}

TEST(columns_split_to_fill_the_gpu) {
  // sum([0]) of 4096 x 4096, float packets: 32 blocks of 128 columns, split 32 ways (128 rows
  // each, 16 a thread) towards 8 blocks per SM, then folded by columns.
  const ReducePlan packets = plan_reduction(4096, 4096, ReduceAxis::kPacketColumns, 132);
  CHECK(packets.layout == ReduceLayout::kPacketColumns);
  CHECK_EQ(packets.blocks, 32u);
  CHECK_EQ(packets.splits, 32);
  CHECK(fold_partials_along_columns(4096));
  // The same without packets: 128 blocks of 32 columns, split 9 ways.
  const ReducePlan columns = plan_reduction(4096, 4096, ReduceAxis::kColumns, 132);
  CHECK(columns.layout == ReduceLayout::kColumns);
  CHECK_EQ(columns.blocks, 128u);
  CHECK_EQ(columns.splits, 9);
}

TEST(a_small_reduction_is_not_split_into_slivers) {
  // A row of 100 elements is one block's work however idle the GPU is.
  CHECK_EQ(plan_reduction(1, 100, ReduceAxis::kRows, 132).splits, 1);
  CHECK_EQ(plan_reduction(3, 10000, ReduceAxis::kRows, 132).splits, 3);  // 10000 / (256 * 16), rounded up
  CHECK_EQ(plan_reduction(0, 10, ReduceAxis::kRows, 132).splits, 1);
  CHECK_EQ(plan_reduction(1, 0, ReduceAxis::kRows, 132).splits, 1);
  CHECK_EQ(plan_reduction(40, 100, ReduceAxis::kPacketColumns, 132).splits, 1);  // 100 rows / (8 * 16), rounded up
  // The grid's y dimension holds 65535 splits at most.
  CHECK(plan_reduction(1, int64_t(1) << 40, ReduceAxis::kRows, 1 << 20).splits <= 65535);
}
