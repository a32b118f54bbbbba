// CUDA loops of the pointwise stubs: arithmetic, comparisons, where, unary math and clamp.
// meta() built the iterator (shape, dtypes, device); each loop picks the compute type and
// hands one functor to gpu_kernel. Results follow the CPU loops (csrc/native/cpu/*_kernels.cpp).
#include <math.h>

#include <optional>
#include <type_traits>

#include "native/cuda/loops.cuh"
#include "native/stubs.h"

namespace op::native {

namespace {

using cuda::gpu_kernel;

// Integers wrap around like the CPU loops (pointwise_math.h); bools add as "or" and
// multiply as "and".
template <class T>
__device__ T wrapping_add(T x, T y) {
  if constexpr (std::is_same_v<T, bool>)
    return x || y;
  else if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(x) + static_cast<std::make_unsigned_t<T>>(y));
  else
    return x + y;
}
template <class T>
__device__ T wrapping_mul(T x, T y) {
  if constexpr (std::is_same_v<T, bool>)
    return x && y;
  else if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(x) * static_cast<std::make_unsigned_t<T>>(y));
  else
    return x * y;
}
template <class T>
__device__ T wrapping_neg(T x) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return static_cast<T>(std::make_unsigned_t<T>(0) - static_cast<std::make_unsigned_t<T>>(x));
  else
    return -x;
}

// NaN wins, like torch.maximum / torch.minimum (x != x only holds for NaN).
template <class T>
__device__ T max_value(T a, T b) {
  return a != a ? a : b != b ? b : a > b ? a : b;
}
template <class T>
__device__ T min_value(T a, T b) {
  return a != a ? a : b != b ? b : a < b ? a : b;
}

// Integer powers by squaring; a negative exponent leaves only 1 and -1 non-zero.
template <class T>
__device__ T int_pow(T base, T exponent) {
  if (exponent < 0) return base == 1 ? T(1) : base == -1 ? ((exponent & 1) ? T(-1) : T(1)) : T(0);
  using U = std::make_unsigned_t<T>;  // wraps on overflow instead of undefined behaviour
  U result = 1, b = static_cast<U>(base);
  for (T e = exponent; e != 0; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return static_cast<T>(result);
}

template <class T>
struct AddScaled {
  T alpha;
  __device__ T operator()(T x, T y) const { return wrapping_add(x, wrapping_mul(alpha, y)); }
};
struct Mul {
  template <class T>
  __device__ T operator()(T x, T y) const { return wrapping_mul(x, y); }
};
struct Div {
  template <class T>
  __device__ T operator()(T x, T y) const { return x / y; }
};
struct Maximum {
  template <class T>
  __device__ T operator()(T x, T y) const { return max_value(x, y); }
};
struct Minimum {
  template <class T>
  __device__ T operator()(T x, T y) const { return min_value(x, y); }
};
struct Pow {
  template <class T>
  __device__ T operator()(T x, T y) const {
    if constexpr (std::is_same_v<T, bool>)
      return x;  // never runs: pow_tensor_kernel rejects bool
    else if constexpr (std::is_integral_v<T>)
      return int_pow(x, y);
    else
      return pow(x, y);
  }
};
struct Eq {
  template <class T>
  __device__ bool operator()(T x, T y) const { return x == y; }
};
struct Ne {
  template <class T>
  __device__ bool operator()(T x, T y) const { return x != y; }
};
struct Lt {
  template <class T>
  __device__ bool operator()(T x, T y) const { return x < y; }
};
struct Le {
  template <class T>
  __device__ bool operator()(T x, T y) const { return x <= y; }
};
struct Gt {
  template <class T>
  __device__ bool operator()(T x, T y) const { return x > y; }
};
struct Ge {
  template <class T>
  __device__ bool operator()(T x, T y) const { return x >= y; }
};
struct Where {
  template <class T>
  __device__ T operator()(bool condition, T x, T y) const { return condition ? x : y; }
};
struct Neg {
  template <class T>
  __device__ T operator()(T x) const { return wrapping_neg(x); }
};
struct Abs {
  template <class T>
  __device__ T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>)
      return fabs(x);
    else
      return x < T(0) ? wrapping_neg(x) : x;
  }
};
struct Exp {
  template <class T>
  __device__ T operator()(T x) const { return exp(x); }
};
struct Log {
  template <class T>
  __device__ T operator()(T x) const { return log(x); }
};
struct Sqrt {
  template <class T>
  __device__ T operator()(T x) const { return sqrt(x); }
};
struct Sin {
  template <class T>
  __device__ T operator()(T x) const { return sin(x); }
};
struct Cos {
  template <class T>
  __device__ T operator()(T x) const { return cos(x); }
};
struct Tanh {
  template <class T>
  __device__ T operator()(T x) const { return tanh(x); }
};
struct Sigmoid {
  template <class T>
  __device__ T operator()(T x) const { return T(1) / (T(1) + exp(-x)); }
};
template <class T>
struct Clamp {
  bool has_min, has_max;
  T min, max;
  __device__ T operator()(T x) const {
    if (has_min) x = max_value(x, min);
    if (has_max) x = min_value(x, max);
    return x;
  }
};

// One loop for every dtype / floating dtypes only (the meta functions promote integers for
// the ops that need a floating type).
template <class F>
void all_types(TensorIteratorBase& iter, const char* name) {
  OP_DISPATCH_ALL_TYPES(iter.common_dtype(), name, { gpu_kernel<scalar_t>(iter, F{}); });
}
template <class F>
void floating_types(TensorIteratorBase& iter, const char* name) {
  OP_CUDA_DISPATCH_FLOATING_TYPES(iter.common_dtype(), name, { gpu_kernel<scalar_t>(iter, F{}); });
}

void add_kernel(TensorIteratorBase& iter, const Scalar& alpha) {
  OP_DISPATCH_ALL_TYPES(iter.common_dtype(), "add", {
    gpu_kernel<scalar_t>(iter, AddScaled<scalar_t>{alpha.to<scalar_t>()});
  });
}
void mul_kernel(TensorIteratorBase& iter) { all_types<Mul>(iter, "mul"); }
void div_true_kernel(TensorIteratorBase& iter) { floating_types<Div>(iter, "div"); }
void maximum_kernel(TensorIteratorBase& iter) { all_types<Maximum>(iter, "maximum"); }
void minimum_kernel(TensorIteratorBase& iter) { all_types<Minimum>(iter, "minimum"); }
void pow_tensor_kernel(TensorIteratorBase& iter) {
  OP_CHECK(iter.common_dtype() != ScalarType::Bool, "pow: not supported for bool tensors");
  all_types<Pow>(iter, "pow");
}
void eq_kernel(TensorIteratorBase& iter) { all_types<Eq>(iter, "eq"); }
void ne_kernel(TensorIteratorBase& iter) { all_types<Ne>(iter, "ne"); }
void lt_kernel(TensorIteratorBase& iter) { all_types<Lt>(iter, "lt"); }
void le_kernel(TensorIteratorBase& iter) { all_types<Le>(iter, "le"); }
void gt_kernel(TensorIteratorBase& iter) { all_types<Gt>(iter, "gt"); }
void ge_kernel(TensorIteratorBase& iter) { all_types<Ge>(iter, "ge"); }
void where_kernel(TensorIteratorBase& iter) {  // input 0 is the bool condition
  OP_DISPATCH_ALL_TYPES(iter.common_dtype(), "where", { cuda::gpu_kernel_as<bool, scalar_t, scalar_t>(iter, Where{}); });
}
void neg_kernel(TensorIteratorBase& iter) { all_types<Neg>(iter, "neg"); }
void abs_kernel(TensorIteratorBase& iter) { all_types<Abs>(iter, "abs"); }
void exp_kernel(TensorIteratorBase& iter) { floating_types<Exp>(iter, "exp"); }
void log_kernel(TensorIteratorBase& iter) { floating_types<Log>(iter, "log"); }
void sqrt_kernel(TensorIteratorBase& iter) { floating_types<Sqrt>(iter, "sqrt"); }
void sin_kernel(TensorIteratorBase& iter) { floating_types<Sin>(iter, "sin"); }
void cos_kernel(TensorIteratorBase& iter) { floating_types<Cos>(iter, "cos"); }
void tanh_kernel(TensorIteratorBase& iter) { floating_types<Tanh>(iter, "tanh"); }
void sigmoid_kernel(TensorIteratorBase& iter) { floating_types<Sigmoid>(iter, "sigmoid"); }

// NaN in the input or a bound gives NaN; min > max gives max (like numpy.clip).
void clamp_kernel(TensorIteratorBase& iter, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  OP_CHECK(iter.common_dtype() != ScalarType::Bool, "clamp: bool tensors are not supported");
  OP_CHECK(min || max, "clamp: at least one of 'min' or 'max' must not be None");
  OP_DISPATCH_ALL_TYPES(iter.common_dtype(), "clamp", {
    gpu_kernel<scalar_t>(iter, Clamp<scalar_t>{min.has_value(), max.has_value(), min ? min->to<scalar_t>() : scalar_t{},
                                                max ? max->to<scalar_t>() : scalar_t{}});
  });
}

}  // namespace

OP_REGISTER_STUB(add_stub, CUDA, &add_kernel);
OP_REGISTER_STUB(mul_stub, CUDA, &mul_kernel);
OP_REGISTER_STUB(div_true_stub, CUDA, &div_true_kernel);
OP_REGISTER_STUB(maximum_stub, CUDA, &maximum_kernel);
OP_REGISTER_STUB(minimum_stub, CUDA, &minimum_kernel);
OP_REGISTER_STUB(pow_tensor_stub, CUDA, &pow_tensor_kernel);
OP_REGISTER_STUB(eq_stub, CUDA, &eq_kernel);
OP_REGISTER_STUB(ne_stub, CUDA, &ne_kernel);
OP_REGISTER_STUB(lt_stub, CUDA, &lt_kernel);
OP_REGISTER_STUB(le_stub, CUDA, &le_kernel);
OP_REGISTER_STUB(gt_stub, CUDA, &gt_kernel);
OP_REGISTER_STUB(ge_stub, CUDA, &ge_kernel);
OP_REGISTER_STUB(where_stub, CUDA, &where_kernel);
OP_REGISTER_STUB(neg_stub, CUDA, &neg_kernel);
OP_REGISTER_STUB(abs_stub, CUDA, &abs_kernel);
OP_REGISTER_STUB(exp_stub, CUDA, &exp_kernel);
OP_REGISTER_STUB(log_stub, CUDA, &log_kernel);
OP_REGISTER_STUB(sqrt_stub, CUDA, &sqrt_kernel);
OP_REGISTER_STUB(sin_stub, CUDA, &sin_kernel);
OP_REGISTER_STUB(cos_stub, CUDA, &cos_kernel);
OP_REGISTER_STUB(tanh_stub, CUDA, &tanh_kernel);
OP_REGISTER_STUB(sigmoid_stub, CUDA, &sigmoid_kernel);
OP_REGISTER_STUB(clamp_stub, CUDA, &clamp_kernel);

}  // namespace op::native
