// The IR every backend with IR nodes shares (lazy tensor core's part of PyTorch's lazy tensors):
// nodes with IR values as operands and owned attributes, op kinds, hashing, printing and
// comparing attributes, and what generated kernels and lowerings do with shapes and constants.
// A backend's runtime header (csrc/backends/<name>/ir.h) adds, in the backend's namespace, how
// its tensors become IR values and IR values become tensors (lazy: recorded, run at
// mark_step(); xla: lowered at once). Header-only, so each backend library carries it.
//
// A Node is immutable once made. A Value names one output of a node.
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

#include "core/error.h"
#include "core/host_ops.h"
#include "core/tensor.h"

namespace op::lazy {

// The dtype and sizes of one output; lazy tensors are always contiguous.
struct Shape {
  ScalarType dtype;
  std::vector<int64_t> sizes;
  bool operator==(const Shape& o) const { return dtype == o.dtype && sizes == o.sizes; }
};
std::string to_string(const Shape& shape);  // "float32[2, 3]"

// What kind of operation a node is: an interned symbol `ns::name` (aten::add, prim::Constant,
// lazy::cast), as lazy tensor core's OpKind. op() also names the overload (aten::add.Tensor).
struct OpKind {
  const char* ns;
  const char* name;
  std::string to_string() const { return std::string(ns) + "::" + name; }
  friend bool operator==(const OpKind& a, const OpKind& b) {
    return std::strcmp(a.ns, b.ns) == 0 && std::strcmp(a.name, b.name) == 0;
  }
  friend bool operator!=(const OpKind& a, const OpKind& b) { return !(a == b); }
};

// The kind of a constant fed to the graph as an operand (a Scalar, a SymInt): its value is read
// when the graph runs, never part of the graph's structure.
inline constexpr OpKind kConstantKind{"prim", "Constant"};

class Node;
struct Value {
  std::shared_ptr<Node> node;
  size_t index = 0;
  bool defined() const { return node != nullptr; }
  const Shape& shape() const;
};

class Node {
 public:
  Node(const char* op, OpKind kind, std::vector<Value> operands, std::vector<Shape> shapes, uint64_t args_hash);
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // The op name, then ", name=value" per attribute (generated classes append theirs).
  virtual std::string to_string() const;
  // Runs the node eagerly on cpu: `data` holds its operands' values in operand order.
  virtual std::vector<TensorBase> lower(const std::vector<TensorBase>& data) const = 0;

  bool same_operands(const std::vector<Value>& operands) const;
  const char* op() const { return op_; }
  const OpKind& kind() const { return kind_; }
  const std::vector<Value>& operands() const { return operands_; }
  const std::vector<Shape>& shapes() const { return shapes_; }
  // The op and its attributes (not its operands): two nodes with equal hashes and equal
  // operands compute the same thing.
  uint64_t args_hash() const { return args_hash_; }

 private:
  const char* op_;  // a string literal (kOp of the generated class)
  OpKind kind_;
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

inline uint64_t hash_bytes(const void* data, size_t size) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) h = (h ^ bytes[i]) * 0x100000001b3ULL;
  return h;
}
inline void print_scalar(std::ostream& out, const ::op::Scalar& s) { out << s.to_string(); }

template <class T>
uint64_t hash_one(const T& v);

inline uint64_t hash_scalar(const ::op::Scalar& s) {
  switch (s.kind()) {
    case ::op::Scalar::Kind::Bool: return mix(1, s.to<bool>());
    case ::op::Scalar::Kind::Int: return mix(2, static_cast<uint64_t>(s.to<int64_t>()));
    case ::op::Scalar::Kind::Double: return mix(3, hash_one(s.to<double>()));
  }
  return 0;
}

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

// ----- shapes and constants, for generated kernels and lowerings -----

// Meta tensors of the operands' sizes and dtypes: the operator run on them gives the shapes.
inline TensorBase to_meta(const TensorBase& t) {
  if (!t.defined()) return t;
  return TensorBase::empty(t.sizes(), TensorOptions(t.dtype()).with_device(Device(DeviceType::Meta)));
}
inline std::optional<TensorBase> to_meta(const std::optional<TensorBase>& t) {
  if (!t) return t;
  return to_meta(*t);
}
inline std::vector<TensorBase> to_meta(ArrayRef<TensorBase> ts) {
  std::vector<TensorBase> out;
  out.reserve(ts.size());
  for (const TensorBase& t : ts) out.push_back(to_meta(t));
  return out;
}
// The tensor operands of a kernel whose operands are not all plain tensors, flattened for the
// runtime's common_device: optional ones when present, lists element by element.
namespace detail {
inline void append_tensors(std::vector<TensorBase>& out, const TensorBase& t) { out.push_back(t); }
inline void append_tensors(std::vector<TensorBase>& out, const std::optional<TensorBase>& t) {
  if (t) out.push_back(*t);
}
inline void append_tensors(std::vector<TensorBase>& out, ArrayRef<TensorBase> ts) { out.insert(out.end(), ts.begin(), ts.end()); }
inline void append_tensors(std::vector<TensorBase>& out, ArrayRef<std::optional<TensorBase>> ts) {
  for (const std::optional<TensorBase>& t : ts) append_tensors(out, t);
}
}  // namespace detail
template <class... Args>
std::vector<TensorBase> tensor_operands(const Args&... args) {
  std::vector<TensorBase> out;
  (detail::append_tensors(out, args), ...);
  return out;
}

inline std::vector<Shape> shapes_of(const TensorBase& result) { return {Shape{result.dtype(), result.sizes().vec()}}; }
inline std::vector<Shape> shapes_of(const std::vector<TensorBase>& results) {
  std::vector<Shape> out;
  for (const TensorBase& r : results) out.push_back(Shape{r.dtype(), r.sizes().vec()});
  return out;
}
template <class... Ts>
std::vector<Shape> shapes_of(const std::tuple<Ts...>& results) {
  std::vector<Shape> out;
  std::apply([&](const auto&... r) { (out.push_back(shapes_of(r).front()), ...); }, results);
  return out;
}

// A Scalar or SymInt operand reaches its lowering as the 0-d tensor of its constant node (of the
// scalar's own dtype: bool, int64 or float64, so its kind survives); these turn it back.
inline ::op::Scalar scalar_of(const TensorBase& constant) { return ::op::host::item(constant); }
inline int64_t symint_of(const TensorBase& constant) { return ::op::host::item(constant).to<int64_t>(); }

// ----- owning a kernel's arguments -----

namespace detail {

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

}  // namespace detail

// ----- Node's members -----

inline std::string to_string(const Shape& shape) { return str(::op::to_string(shape.dtype), str_list(shape.sizes)); }

inline const Shape& Value::shape() const {
  OP_CHECK(node != nullptr, "lazy: an undefined IR value has no shape");
  return node->shapes().at(index);
}

inline Node::Node(const char* op, OpKind kind, std::vector<Value> operands, std::vector<Shape> shapes, uint64_t args_hash)
    : op_(op), kind_(kind), operands_(std::move(operands)), shapes_(std::move(shapes)), args_hash_(args_hash) {
  for (const Value& v : operands_)
    OP_CHECK(v.node != nullptr && v.index < v.node->shapes().size(), op_, " (IR): an operand is undefined");
}

namespace detail {

// Nodes whose last user died, released one at a time: a node's destructor only queues its
// operands, so freeing a chain of a million operations does not recurse a million deep.
struct ReleaseQueue {
  std::vector<std::shared_ptr<Node>> nodes;
  bool draining = false;
};

inline ReleaseQueue& release_queue() {
  thread_local ReleaseQueue* queue = new ReleaseQueue();  // leaked: nodes may die at thread exit
  return *queue;
}

}  // namespace detail

inline Node::~Node() {
  detail::ReleaseQueue& queue = detail::release_queue();
  for (Value& v : operands_)
    if (v.node) queue.nodes.push_back(std::move(v.node));
  if (queue.draining) return;
  queue.draining = true;
  while (!queue.nodes.empty()) {
    std::shared_ptr<Node> node = std::move(queue.nodes.back());
    queue.nodes.pop_back();
    node.reset();  // the last reference runs ~Node, which only queues (draining is set)
  }
  queue.draining = false;
}

inline std::string Node::to_string() const { return op_; }

inline bool Node::same_operands(const std::vector<Value>& operands) const {
  if (operands.size() != operands_.size()) return false;
  for (size_t i = 0; i < operands.size(); ++i)
    if (operands[i].node != operands_[i].node || operands[i].index != operands_[i].index) return false;
  return true;
}

}  // namespace op::lazy
