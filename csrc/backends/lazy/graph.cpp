#include "backends/lazy/graph.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "backends/lazy/data_node.h"
#include "backends/lazy/metrics.h"
#include "core/error.h"
#include "dispatch/local_dispatch_key_set.h"
#include "dispatch/operator_recorder.h"
#include "functionalization/functionalization.h"

namespace op::lazy {

namespace {

using Ref = std::pair<size_t, size_t>;  // (node position in the graph, output index)

struct Graph {
  std::vector<const Node*> nodes;       // post-order: every node after its operands
  std::vector<std::vector<Ref>> inputs;  // per node, its operands
  std::vector<Ref> roots;                // per requested value
  uint64_t hash = 0;
};

// What a node contributes to the graph's identity: its op and attributes, except the value of a
// constant (op kind prim::Constant: non-native `scalar`, what Scalar and SymInt operands and
// fill_ record), which is read from the node when the graph runs, so x * 0.1 and x * 0.2, or
// fill_(x, 2) and fill_(x, 3), share one plan. Its dtype is in its shape, hashed with the rest.
uint64_t structure_hash(const Node& node) {
  if (node.kind() == kConstantKind) return hash_of(node.op());
  return node.args_hash();
}

Graph collect(const std::vector<Value>& roots) {
  Graph g;
  std::unordered_map<const Node*, size_t> position;
  struct Frame {
    const Node* node;
    size_t next;  // the next operand to visit
  };
  std::vector<Frame> stack;  // iterative: a long chain of operations must not overflow the C++ stack
  for (const Value& root : roots) {
    if (!position.count(root.node.get())) stack.push_back({root.node.get(), 0});
    while (!stack.empty()) {
      Frame& top = stack.back();
      const std::vector<Value>& operands = top.node->operands();
      if (top.next < operands.size()) {
        const Node* operand = operands[top.next++].node.get();
        if (!position.count(operand)) stack.push_back({operand, 0});  // `top` is not used after this
        continue;
      }
      position.emplace(top.node, g.nodes.size());
      g.nodes.push_back(top.node);
      stack.pop_back();
    }
    g.roots.emplace_back(position.at(root.node.get()), root.index);
  }
  uint64_t h = detail::mix(0, g.nodes.size());
  g.inputs.reserve(g.nodes.size());
  for (const Node* node : g.nodes) {
    std::vector<Ref> inputs;
    h = detail::mix(h, structure_hash(*node));
    for (const Shape& shape : node->shapes()) h = detail::mix(detail::mix(h, static_cast<uint64_t>(shape.dtype)), detail::hash_one(shape.sizes));
    for (const Value& v : node->operands()) {
      inputs.emplace_back(position.at(v.node.get()), v.index);
      h = detail::mix(detail::mix(h, inputs.back().first), inputs.back().second);
    }
    g.inputs.push_back(std::move(inputs));
  }
  for (const Ref& r : g.roots) h = detail::mix(detail::mix(h, r.first), r.second);
  g.hash = h;
  return g;
}

// ----- plans -----

struct Step {
  std::vector<size_t> in;       // slots of the operands
  std::vector<size_t> out;      // slots of the outputs
  std::vector<size_t> release;  // slots whose values are dead after this step
};

struct Plan {
  std::vector<const char*> ops;  // per node: what a hash hit must match
  std::vector<Step> steps;       // per node, in graph order (topological)
  std::vector<size_t> root_slots;
  size_t slots = 0;  // buffers the plan needs at most
};

struct RefHash {
  size_t operator()(const Ref& r) const { return detail::mix(r.first, r.second); }
};

std::shared_ptr<const Plan> compile(const Graph& g) {
  auto plan = std::make_shared<Plan>();
  std::unordered_map<Ref, size_t, RefHash> last_use;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const Ref& r : g.inputs[i]) last_use[r] = i;
  std::unordered_map<Ref, bool, RefHash> is_root;
  for (const Ref& r : g.roots) is_root[r] = true;

  std::unordered_map<Ref, size_t, RefHash> slot_of;
  std::vector<size_t> free_slots;
  auto dead_after = [&](const Ref& r, size_t step) {
    if (is_root.count(r)) return false;
    auto it = last_use.find(r);
    return it == last_use.end() ? true : it->second == step;
  };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Step step;
    for (const Ref& r : g.inputs[i]) step.in.push_back(slot_of.at(r));
    for (size_t k = 0; k < g.nodes[i]->shapes().size(); ++k) {
      size_t slot = plan->slots;
      if (free_slots.empty()) {
        ++plan->slots;
      } else {
        slot = free_slots.back();
        free_slots.pop_back();
      }
      slot_of[{i, k}] = slot;
      step.out.push_back(slot);
    }
    // Operands whose last use is this step, and outputs nothing uses: their slots are free again.
    std::vector<Ref> done;
    for (const Ref& r : g.inputs[i])
      if (dead_after(r, i) && std::find(done.begin(), done.end(), r) == done.end()) done.push_back(r);
    for (size_t k = 0; k < step.out.size(); ++k)
      if (dead_after({i, k}, i)) done.push_back({i, k});
    for (const Ref& r : done) {
      step.release.push_back(slot_of.at(r));
      free_slots.push_back(slot_of.at(r));
    }
    plan->ops.push_back(g.nodes[i]->op());
    plan->steps.push_back(std::move(step));
  }
  for (const Ref& r : g.roots) plan->root_slots.push_back(slot_of.at(r));
  count(Counter::GraphsCompiled);
  return plan;
}

bool matches(const Plan& plan, const Graph& g) {
  if (plan.ops.size() != g.nodes.size()) return false;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (plan.ops[i] != g.nodes[i]->op() && std::strcmp(plan.ops[i], g.nodes[i]->op()) != 0) return false;
  return true;
}

class GraphCache {
 public:
  std::shared_ptr<const Plan> plan_for(const Graph& g) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = plans_.find(g.hash);
      if (it != plans_.end() && matches(*it->second, g)) {
        count(Counter::GraphCacheHits);
        return it->second;
      }
    }
    count(Counter::GraphCacheMisses);
    std::shared_ptr<const Plan> plan = compile(g);
    std::lock_guard<std::mutex> lock(mutex_);
    if (plans_.size() >= kMaxPlans) {
      plans_.erase(order_.front());
      order_.pop_front();
    }
    if (plans_.insert_or_assign(g.hash, plan).second) order_.push_back(g.hash);
    return plan;
  }

  size_t size() {
    std::lock_guard<std::mutex> lock(mutex_);
    return plans_.size();
  }

 private:
  static constexpr size_t kMaxPlans = 1024;  // the oldest plan goes first
  std::mutex mutex_;
  std::unordered_map<uint64_t, std::shared_ptr<const Plan>> plans_;
  std::deque<uint64_t> order_;
};

GraphCache& graph_cache() {
  static GraphCache* cache = new GraphCache();  // leaked: tensors may sync during static destruction
  return *cache;
}

std::string describe(const Shape& shape) { return to_string(shape); }

void check_result(const Node& node, size_t k, const TensorBase& result) {
  const Shape& expected = node.shapes()[k];
  OP_CHECK(result.defined() && result.dtype() == expected.dtype && result.sizes() == IntArrayRef(expected.sizes),
           node.op(), " (lazy lowering): the result is ",
           result.defined() ? describe(Shape{result.dtype(), result.sizes().vec()}) : std::string("undefined"),
           " but the IR node says ", describe(expected));
}

// Runs the plan over this graph's nodes (equal in structure to the one it was compiled for:
// attributes and data come from these nodes). Returns the roots' values.
std::vector<TensorBase> run(const Plan& plan, const Graph& g) {
  // The lowered calls run on cpu tensors, plainly: no functional wrappers, nothing sent back to Lazy.
  ExcludeKeyGuard no_functionalize(DispatchKey::Functionalize);
  ExcludeKeyGuard no_lazy(DispatchKey::Lazy);
  recording::NestedScope runtime_work;  // a recorder saw the program's calls when they were traced
  std::vector<TensorBase> slots(plan.slots);
  int64_t executed = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& node = *g.nodes[i];
    const Step& step = plan.steps[i];
    std::vector<TensorBase> data;
    data.reserve(step.in.size());
    for (size_t s : step.in) data.push_back(slots[s]);
    std::vector<TensorBase> results;
    try {
      results = node.lower(data);
    } catch (const Error& e) {
      throw Error(str(e.what(), " (running lazy IR node %", i, ", ", node.op(), ")"));
    }
    OP_CHECK(results.size() == step.out.size(), node.op(), " (lazy lowering): ", results.size(), " results for ",
             step.out.size(), " outputs");
    for (size_t k = 0; k < results.size(); ++k) {
      check_result(node, k, results[k]);
      slots[step.out[k]] = std::move(results[k]);
    }
    for (size_t s : step.release) slots[s] = TensorBase();
    // Inputs are not calls: data, and the constants Scalar and SymInt operands are fed as.
    if (dynamic_cast<const DeviceData*>(&node) == nullptr && node.kind() != kConstantKind) ++executed;
  }
  std::vector<TensorBase> out;
  for (size_t s : plan.root_slots) out.push_back(slots[s]);
  count(Counter::NodesExecuted, executed);
  count(Counter::GraphsExecuted);
  record_plan(static_cast<int64_t>(g.nodes.size()), static_cast<int64_t>(plan.slots));
  return out;
}

std::mutex& executor_mutex() {
  static std::mutex* m = new std::mutex();
  return *m;
}

std::vector<Value> roots_of(const std::vector<TensorBase>& tensors, const char* what) {
  std::vector<Value> roots;
  for (const TensorBase& t : tensors) {
    OP_CHECK(t.defined(), what, ": undefined tensor");
    TensorBase plain = t.is_functional() ? functionalization::from_functional(t) : t;
    OP_CHECK(is_lazy(plain), what, ": expected lazy tensors, got one on ", t.device().str());
    roots.push_back(ir_value(plain));
  }
  return roots;
}

std::string shapes_text(const Node& node) {
  if (node.shapes().size() == 1) return to_string(node.shapes()[0]);
  std::string out = "(";
  for (size_t k = 0; k < node.shapes().size(); ++k) out += (k ? ", " : "") + to_string(node.shapes()[k]);
  return out + ")";
}

std::string ref_text(const Ref& r) { return r.second == 0 ? str("%", r.first) : str("%", r.first, ".", r.second); }

}  // namespace

void sync_states(const std::vector<std::shared_ptr<LazyTensorState>>& states) {
  std::vector<std::shared_ptr<LazyTensorState>> pending;
  std::vector<Value> roots;
  for (const auto& state : states) {
    if (!state || !state->ir.defined()) continue;
    if (const auto* data = dynamic_cast<const DeviceData*>(state->ir.node.get())) {  // nothing to run
      state->data = data->data();
      state->ir = Value();
      continue;
    }
    pending.push_back(state);
    roots.push_back(state->ir);
  }
  if (roots.empty()) return;
  std::lock_guard<std::mutex> lock(executor_mutex());
  const Graph g = collect(roots);
  std::shared_ptr<const Plan> plan = graph_cache().plan_for(g);
  std::vector<TensorBase> values = run(*plan, g);
  for (size_t i = 0; i < pending.size(); ++i) {
    LazyTensorState& state = *pending[i];
    if (state.ir.node != roots[i].node || state.ir.index != roots[i].index) continue;  // changed meanwhile
    state.data = std::move(values[i]);
    state.ir = Value();
    state.data_leaf = Value();
    count(Counter::TensorsMaterialized);
  }
}

void mark_step() {
  forget_reusable_nodes();
  sync_states(pending_states());
}

void sync_tensors(const std::vector<TensorBase>& tensors) {
  std::vector<std::shared_ptr<LazyTensorState>> states;
  for (const TensorBase& t : tensors) {
    if (!t.defined()) continue;
    TensorBase plain = t.is_functional() ? functionalization::from_functional(t) : t;
    if (is_lazy(plain)) states.push_back(shared_state(plain));
  }
  sync_states(states);
}

std::string ir_text(const std::vector<TensorBase>& tensors) {
  std::vector<Value> roots;
  if (tensors.empty()) {
    for (const auto& state : pending_states()) roots.push_back(state->ir);
  } else {
    roots = roots_of(tensors, "ir_text");
  }
  const Graph g = collect(roots);
  std::ostringstream out;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& node = *g.nodes[i];
    const std::string text = node.to_string();  // the op, then ", name=value" per attribute
    const size_t op_length = std::strlen(node.op());
    out << '%' << i << " = " << text.substr(0, op_length) << '(';
    for (size_t k = 0; k < g.inputs[i].size(); ++k) out << (k ? ", " : "") << ref_text(g.inputs[i][k]);
    out << ')' << text.substr(op_length) << " -> " << shapes_text(node) << '\n';
  }
  out << "roots:";
  for (size_t k = 0; k < g.roots.size(); ++k) out << (k ? ", " : " ") << ref_text(g.roots[k]);
  out << '\n';
  return out.str();
}

size_t graph_cache_size() { return graph_cache().size(); }

}  // namespace op::lazy
