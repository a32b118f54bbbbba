// The lazy backend's IR, as the generated code uses it (build/gen/backends/Lazy/ops/<g>_ir.h
// and <g>_Lazy.cpp): nodes with IR values as operands and owned attributes, and the helpers a
// generated kernel calls to turn its arguments into IR and its node into a lazy tensor.
//
// A Node is immutable once made. A Value names one output of a node. Lazy tensors hold a Value
// (pending) or data (lazy_tensor.h); mark_step() lowers the pending graph (graph.h).
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace op::lazy {

// The dtype and sizes of one output; lazy tensors are always contiguous.
struct Shape {
  ScalarType dtype;
  std::vector<int64_t> sizes;
  bool operator==(const Shape& o) const { return dtype == o.dtype && sizes == o.sizes; }
};
std::string to_string(const Shape& shape);  // "float32[2, 3]"

class Node;
struct Value {
  std::shared_ptr<Node> node;
  size_t index = 0;
  bool defined() const { return node != nullptr; }
  const Shape& shape() const;
};

class Node {
 public:
  Node(const char* op, std::vector<Value> operands, std::vector<Shape> shapes, uint64_t args_hash);
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // The op name, then ", name=value" per attribute (generated classes append theirs).
  virtual std::string to_string() const;
  // Runs the node eagerly on cpu: `data` holds its operands' values in operand order.
  virtual std::vector<TensorBase> lower(const std::vector<TensorBase>& data) const = 0;

  bool same_operands(const std::vector<Value>& operands) const;
  const char* op() const { return op_; }
  const std::vector<Value>& operands() const { return operands_; }
  const std::vector<Shape>& shapes() const { return shapes_; }
  // The op and its attributes (not its operands): two nodes with equal hashes and equal
  // operands compute the same thing.
  uint64_t args_hash() const { return args_hash_; }

 private:
  const char* op_;  // a string literal (kOp of the generated class)
  std::vector<Value> operands_;
  std::vector<Shape> shapes_;
  uint64_t args_hash_;
};

// ----- hashing, printing and comparing attributes -----

namespace detail {

template <class T>
struct is_vector : std::false_type {};
template <class T>
struct is_vector<std::vector<T>> : std::true_type {};
template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};
template <class T>
inline constexpr bool dependent_false = false;

inline uint64_t mix(uint64_t seed, uint64_t value) {
  uint64_t x = seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  return x;
}

uint64_t hash_bytes(const void* data, size_t size);
uint64_t hash_scalar(const ::op::Scalar& s);
void print_scalar(std::ostream& out, const ::op::Scalar& s);

template <class T>
uint64_t hash_one(const T& v) {
  if constexpr (std::is_same_v<T, ::op::Scalar>) {
    return hash_scalar(v);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return hash_bytes(v.data(), v.size());
  } else if constexpr (std::is_same_v<T, Device>) {
    return mix(static_cast<uint64_t>(v.type()), static_cast<uint64_t>(v.index()));
  } else if constexpr (is_vector<T>::value) {
    uint64_t h = v.size();
    for (const auto& e : v) h = mix(h, hash_one(e));
    return h;
  } else if constexpr (is_optional<T>::value) {
    return v ? mix(1, hash_one(*v)) : 0x6e6f6e65ULL;
  } else if constexpr (std::is_enum_v<T> || std::is_integral_v<T>) {
    return static_cast<uint64_t>(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    double d = static_cast<double>(v);
    uint64_t bits = 0;
    std::memcpy(&bits, &d, sizeof bits);
    return bits;
  } else {
    static_assert(dependent_false<T>, "lazy IR: no hash for this attribute type");
  }
}

template <class T>
void print_one(std::ostream& out, const T& v) {
  if constexpr (std::is_same_v<T, ::op::Scalar>) {
    print_scalar(out, v);
  } else if constexpr (std::is_same_v<T, ScalarType>) {
    out << ::op::to_string(v);
  } else if constexpr (std::is_same_v<T, std::string>) {
    out << '"' << v << '"';
  } else if constexpr (std::is_same_v<T, bool>) {
    out << (v ? "true" : "false");
  } else if constexpr (std::is_same_v<T, Device>) {
    out << v.str();
  } else if constexpr (is_vector<T>::value) {
    out << '[';
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) out << ", ";
      print_one(out, v[i]);
    }
    out << ']';
  } else if constexpr (is_optional<T>::value) {
    if (v) print_one(out, *v);
    else out << "None";
  } else if constexpr (std::is_enum_v<T>) {
    out << static_cast<int>(v);
  } else {
    out << v;
  }
}

}  // namespace detail

template <class... Args>
uint64_t hash_of(const char* op, const Args&... args) {
  uint64_t h = detail::hash_bytes(op, std::strlen(op));
  ((h = detail::mix(h, detail::hash_one(args))), ...);
  return h;
}

template <class T>
void print_attribute(std::ostream& out, const char* name, const T& value) {
  out << ", " << name << '=';
  detail::print_one(out, value);
}

template <class T>
bool equal(const T& a, const T& b) {
  return a == b;
}

// ----- operands -----

namespace detail {
inline void append_operands(std::vector<Value>& out, const Value& v) { out.push_back(v); }
inline void append_operands(std::vector<Value>& out, const std::optional<Value>& v) {
  if (v) out.push_back(*v);
}
inline void append_operands(std::vector<Value>& out, const std::vector<Value>& vs) {
  out.insert(out.end(), vs.begin(), vs.end());
}
// Attributes among a node's arguments are not operands.
template <class T>
void append_operands(std::vector<Value>&, const T&) {}
}  // namespace detail

// The operands of a node, flattened in argument order (Value, optional<Value>, vector<Value>).
template <class... Args>
std::vector<Value> operands_of(const Args&... args) {
  std::vector<Value> out;
  (detail::append_operands(out, args), ...);
  return out;
}

// ----- what a generated kernel does with its arguments and results -----

// The lazy device of the tensor operands (0-d cpu tensors, wrapped numbers, may join them);
// op::Error when a tensor is elsewhere.
Device common_device(std::initializer_list<TensorBase> tensors);
Device default_device();
// The IR value of an operand: a lazy tensor's pending value, or a data node over its data
// (or over a 0-d cpu tensor).
Value ir_value(const TensorBase& t);
std::optional<Value> ir_value(const std::optional<TensorBase>& t);
std::vector<Value> ir_value(ArrayRef<TensorBase> ts);
// Meta tensors of the operands' sizes and dtypes: the operator run on them gives the shapes.
TensorBase to_meta(const TensorBase& t);
std::optional<TensorBase> to_meta(const std::optional<TensorBase>& t);
std::vector<TensorBase> to_meta(ArrayRef<TensorBase> ts);
std::vector<Shape> shapes_of(const TensorBase& result);
std::vector<Shape> shapes_of(const std::vector<TensorBase>& results);
template <class... Ts>
std::vector<Shape> shapes_of(const std::tuple<Ts...>& results) {
  std::vector<Shape> out;
  std::apply([&](const auto&... r) { (out.push_back(shapes_of(r).front()), ...); }, results);
  return out;
}
// A lazy tensor over `value` (not yet wrapped by functionalization: kernels run below it).
TensorBase make_tensor(Value value, Device device);

// ----- node reuse -----
// A node made again with the same operands and attributes since the last mark_step() is the
// node made before, so a program that computes one thing twice records it once.

// Called by mark_step(): nodes made before it are not reused after it.
void forget_reusable_nodes();

namespace detail {
uint64_t reuse_key(const char* op, const std::vector<Value>& operands);
std::shared_ptr<Node> find_reusable(uint64_t key);
void remember(uint64_t key, const std::shared_ptr<Node>& node);
void count_reused();

template <class NodeT, class Tuple, size_t... I>
bool reusable(const NodeT& node, const Tuple& args, std::index_sequence<I...>) {
  return node.can_be_reused(std::get<I>(args)...);
}

template <class T>
struct is_array_ref : std::false_type {};
template <class T>
struct is_array_ref<ArrayRef<T>> : std::true_type {};

// What a node keeps of a kernel's argument: lists and strings the kernel only borrows become
// owned values (a node outlives the call); everything else is passed on as it is.
template <class T>
decltype(auto) owned(T&& value) {
  using D = std::decay_t<T>;
  if constexpr (is_array_ref<D>::value) {
    return value.vec();
  } else if constexpr (is_optional<D>::value) {
    if constexpr (is_array_ref<typename D::value_type>::value) {
      using Vec = decltype(value->vec());
      return value ? std::optional<Vec>(value->vec()) : std::optional<Vec>();
    } else if constexpr (std::is_same_v<typename D::value_type, std::string_view>) {
      return value ? std::optional<std::string>(std::string(*value)) : std::optional<std::string>();
    } else {
      return std::forward<T>(value);
    }
  } else if constexpr (std::is_same_v<D, std::string_view>) {
    return std::string(value);
  } else {
    return std::forward<T>(value);
  }
}

template <class NodeT, class... Args>
std::shared_ptr<NodeT> reuse_or_make_owned(Args&&... args) {
  auto tuple = std::forward_as_tuple(args...);
  const uint64_t key = std::apply([](const auto&... a) { return reuse_key(NodeT::kOp, operands_of(a...)); }, tuple);
  if (std::shared_ptr<Node> found = find_reusable(key)) {
    if (auto same = std::dynamic_pointer_cast<NodeT>(found);
        same && reusable(*same, tuple, std::make_index_sequence<sizeof...(Args) - 1>())) {
      count_reused();
      return same;
    }
  }
  auto node = std::make_shared<NodeT>(std::forward<Args>(args)...);
  remember(key, node);
  return node;
}
}  // namespace detail

// NodeT(args...) unless an equal node is still remembered; the last argument is the shapes.
template <class NodeT, class... Args>
std::shared_ptr<NodeT> reuse_or_make(Args&&... args) {
  static_assert(sizeof...(Args) >= 1, "reuse_or_make: the node's arguments end with its shapes");
  return detail::reuse_or_make_owned<NodeT>(detail::owned(std::forward<Args>(args))...);
}

}  // namespace op::lazy
