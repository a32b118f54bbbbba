#include "backends/lazy/ir.h"

#include <mutex>
#include <sstream>
#include <unordered_map>

#include "backends/lazy/data_node.h"
#include "backends/lazy/metrics.h"
#include "core/error.h"

namespace op::lazy {

DeviceData::DeviceData(TensorBase data)
    : Node(kOp, kOpKind, {}, {Shape{data.dtype(), data.sizes().vec()}}, hash_of(kOp)), data_(std::move(data)) {
  count(Counter::IrNodesCreated);
}

std::vector<TensorBase> DeviceData::lower(const std::vector<TensorBase>& /*data*/) const { return {data_}; }

namespace detail {

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
void count_created() { count(Counter::IrNodesCreated); }

}  // namespace detail

void forget_reusable_nodes() {
  detail::ReuseCache& cache = detail::reuse_cache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  cache.nodes.clear();
}

}  // namespace op::lazy
