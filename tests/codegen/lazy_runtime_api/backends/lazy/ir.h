// The lazy runtime's interface as the generated lazy code uses it (ops/<g>_ir.h, ops/<g>_Lazy.cpp),
// declared for tests/codegen/test_lazy_codegen.py's compile check (g++ -fsyntax-only): the
// generated files must type-check against the operator library's headers and this interface.
// Declarations only; csrc/backends/lazy/ is to define them.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "core/tensor.h"

namespace op::lazy {

struct Shape {
  ScalarType dtype;
  std::vector<int64_t> sizes;
};

class Node;
struct Value {
  std::shared_ptr<Node> node;
  size_t index = 0;
};

class Node {
 public:
  Node(const char* op, std::vector<Value> operands, std::vector<Shape> shapes, uint64_t args_hash);
  virtual ~Node();
  virtual std::string to_string() const;
  virtual std::vector<TensorBase> lower(const std::vector<TensorBase>& data) const = 0;
  bool same_operands(const std::vector<Value>& operands) const;
};

// Hashing, printing and comparing a node's stored arguments (any type a schema argument has).
template <class... Args>
uint64_t hash_of(const char* op, const Args&... args);
template <class T>
void print_attribute(std::ostream& out, const char* name, const T& value);
template <class T>
bool equal(const T& a, const T& b);

// The operands of a node, flattened in argument order (Value, optional<Value>, vector<Value>).
template <class... Args>
std::vector<Value> operands_of(const Args&... args);

// What a generated kernel does with its arguments and results.
Device common_device(std::initializer_list<TensorBase> tensors);
Device default_device();
Value ir_value(const TensorBase& t);
std::optional<Value> ir_value(const std::optional<TensorBase>& t);
std::vector<Value> ir_value(ArrayRef<TensorBase> ts);
TensorBase to_meta(const TensorBase& t);
std::optional<TensorBase> to_meta(const std::optional<TensorBase>& t);
std::vector<TensorBase> to_meta(ArrayRef<TensorBase> ts);
std::vector<Shape> shapes_of(const TensorBase& result);
template <class... Ts>
std::vector<Shape> shapes_of(const std::tuple<Ts...>& results);
template <class NodeT, class... Args>
std::shared_ptr<NodeT> reuse_or_make(Args&&... args);
TensorBase make_tensor(Value value, Device device);

}  // namespace op::lazy
