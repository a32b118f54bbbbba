// CPU loops of the comparison stubs (computed in the common dtype, producing bool) and where.
// The optimize pragma comes first: see binary_kernels.cpp.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic", "no-trapping-math", "no-math-errno")
#endif

#include "core/tensor_iterator.h"
#include "native/cpu/pointwise_math.h"
#include "native/stubs.h"

namespace op::native::cpu {
namespace {

template <class Compare>
void compare(TensorIteratorBase& it, const char* op_name, Compare compare) {
  visit_dtype(it.common_dtype(), op_name, [&](auto tag) {
    using T = decltype(tag);
    it.for_each_element<T>([compare](T x, T y) -> bool { return compare(x, y); });
  });
}

void eq_kernel(TensorIteratorBase& it) { compare(it, "eq", [](auto x, auto y) { return x == y; }); }
void ne_kernel(TensorIteratorBase& it) { compare(it, "ne", [](auto x, auto y) { return x != y; }); }
void lt_kernel(TensorIteratorBase& it) { compare(it, "lt", [](auto x, auto y) { return x < y; }); }
void le_kernel(TensorIteratorBase& it) { compare(it, "le", [](auto x, auto y) { return x <= y; }); }
void gt_kernel(TensorIteratorBase& it) { compare(it, "gt", [](auto x, auto y) { return x > y; }); }
void ge_kernel(TensorIteratorBase& it) { compare(it, "ge", [](auto x, auto y) { return x >= y; }); }

// input(0) is the bool condition; self and other are read in the common dtype.
void where_kernel(TensorIteratorBase& it) {
  visit_dtype(it.common_dtype(), "where", [&](auto tag) {
    using T = decltype(tag);
    it.for_each_element_as<bool, T, T>([](bool c, T x, T y) { return c ? x : y; });
  });
}

}  // namespace

OP_REGISTER_STUB(eq_stub, CPU, &eq_kernel);
OP_REGISTER_STUB(ne_stub, CPU, &ne_kernel);
OP_REGISTER_STUB(lt_stub, CPU, &lt_kernel);
OP_REGISTER_STUB(le_stub, CPU, &le_kernel);
OP_REGISTER_STUB(gt_stub, CPU, &gt_kernel);
OP_REGISTER_STUB(ge_stub, CPU, &ge_kernel);
OP_REGISTER_STUB(where_stub, CPU, &where_kernel);

}  // namespace op::native::cpu
