// The host-side arithmetic the CUDA loops rely on, checked without a GPU: the 32-bit index
// divider (native/int_divider.h) and the reductions' launch plan (native/reduce_plan.h).
#include <cstdint>
#include <random>

#include "native/int_divider.h"
#include "native/reduce_plan.h"
#include "tests/harness.h"

using op::native::IntDivider;
using op::native::plan_reduction;
using op::native::ReduceBlock;
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
  const ReducePlan p = plan_reduction(1, int64_t(1) << 24, false, 132);
  CHECK(!p.along_columns);
  CHECK_EQ(p.blocks, 1u);
  CHECK_EQ(p.splits, 132 * 8);
  CHECK((int64_t(1) << 24) / p.splits >= ReduceBlock::kThreads * 16);
}

TEST(many_outputs_need_no_second_pass) {
  // sum([1]) of 4096 x 4096: a block per row already fills the GPU.
  const ReducePlan rows = plan_reduction(4096, 4096, false, 132);
  CHECK_EQ(rows.blocks, 4096u);
  CHECK_EQ(rows.splits, 1);
  // sum([0]) of 4096 x 4096: 128 blocks of 32 columns, split 9 ways to give 8 blocks per SM.
  const ReducePlan columns = plan_reduction(4096, 4096, true, 132);
  CHECK(columns.along_columns);
  CHECK_EQ(columns.blocks, 128u);
  CHECK_EQ(columns.splits, 9);
}

TEST(a_small_reduction_is_not_split_into_slivers) {
  // A row of 100 elements is one block's work however idle the GPU is.
  CHECK_EQ(plan_reduction(1, 100, false, 132).splits, 1);
  CHECK_EQ(plan_reduction(3, 10000, false, 132).splits, 3);  // 10000 / (256 * 16), rounded up
  CHECK_EQ(plan_reduction(0, 10, false, 132).splits, 1);
  CHECK_EQ(plan_reduction(1, 0, false, 132).splits, 1);
  // The grid's y dimension holds 65535 splits at most.
  CHECK(plan_reduction(1, int64_t(1) << 40, false, 1 << 20).splits <= 65535);
}
