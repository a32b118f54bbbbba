#include "backends/lazy/ir.h"

#include <mutex>
#include <sstream>
#include <unordered_map>

#include "backends/lazy/data_node.h"
#include "backends/lazy/metrics.h"
#include "core/error.h"

namespace op::lazy {

std::string to_string(const Shape& shape) { return str(::op::to_string(shape.dtype), str_list(shape.sizes)); }

const Shape& Value::shape() const {
  OP_CHECK(node != nullptr, "lazy: an undefined IR value has no shape");
  return node->shapes().at(index);
}

Node::Node(const char* op, std::vector<Value> operands, std::vector<Shape> shapes, uint64_t args_hash)
    : op_(op), operands_(std::move(operands)), shapes_(std::move(shapes)), args_hash_(args_hash) {
  for (const Value& v : operands_)
    OP_CHECK(v.node != nullptr && v.index < v.node->shapes().size(), op_, " (lazy IR): an operand is undefined");
  count(Counter::IrNodesCreated);
}

namespace {

// Nodes whose last user died, released one at a time: a node's destructor only queues its
// operands, so freeing a chain of a million operations does not recurse a million deep.
struct ReleaseQueue {
  std::vector<std::shared_ptr<Node>> nodes;
  bool draining = false;
};

ReleaseQueue& release_queue() {
  thread_local ReleaseQueue* queue = new ReleaseQueue();  // leaked: nodes may die at thread exit
  return *queue;
}

}  // namespace

Node::~Node() {
  ReleaseQueue& queue = release_queue();
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

std::string Node::to_string() const { return op_; }

bool Node::same_operands(const std::vector<Value>& operands) const {
  if (operands.size() != operands_.size()) return false;
  for (size_t i = 0; i < operands.size(); ++i)
    if (operands[i].node != operands_[i].node || operands[i].index != operands_[i].index) return false;
  return true;
}

DeviceData::DeviceData(TensorBase data)
    : Node(kOp, {}, {Shape{data.dtype(), data.sizes().vec()}}, hash_of(kOp)), data_(std::move(data)) {}

std::vector<TensorBase> DeviceData::lower(const std::vector<TensorBase>& /*data*/) const { return {data_}; }

namespace detail {

uint64_t hash_bytes(const void* data, size_t size) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) h = (h ^ bytes[i]) * 0x100000001b3ULL;
  return h;
}

uint64_t hash_scalar(const ::op::Scalar& s) {
  switch (s.kind()) {
    case ::op::Scalar::Kind::Bool: return mix(1, s.to<bool>());
    case ::op::Scalar::Kind::Int: return mix(2, static_cast<uint64_t>(s.to<int64_t>()));
    case ::op::Scalar::Kind::Double: return mix(3, hash_one(s.to<double>()));
  }
  return 0;
}

void print_scalar(std::ostream& out, const ::op::Scalar& s) { out << s.to_string(); }

namespace {

// Nodes made since the last mark_step(), by op and operands. Weak: a node nobody uses is gone.
struct ReuseCache {
  std::mutex mutex;
  std::unordered_map<uint64_t, std::weak_ptr<Node>> nodes;
};

ReuseCache& reuse_cache() {
  static ReuseCache* cache = new ReuseCache();  // leaked: nodes may die during static destruction
  return *cache;
}

constexpr size_t kMaxRemembered = 1 << 16;  // a long program without mark_step() starts over

}  // namespace

uint64_t reuse_key(const char* op, const std::vector<Value>& operands) {
  uint64_t h = hash_bytes(op, std::strlen(op));
  for (const Value& v : operands) h = mix(mix(h, reinterpret_cast<uintptr_t>(v.node.get())), v.index);
  return h;
}

std::shared_ptr<Node> find_reusable(uint64_t key) {
  ReuseCache& cache = reuse_cache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  auto it = cache.nodes.find(key);
  return it == cache.nodes.end() ? nullptr : it->second.lock();
}

void remember(uint64_t key, const std::shared_ptr<Node>& node) {
  ReuseCache& cache = reuse_cache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  if (cache.nodes.size() >= kMaxRemembered) cache.nodes.clear();
  cache.nodes[key] = node;
}

void count_reused() { count(Counter::IrNodesReused); }

}  // namespace detail

void forget_reusable_nodes() {
  detail::ReuseCache& cache = detail::reuse_cache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  cache.nodes.clear();
}

}  // namespace op::lazy
