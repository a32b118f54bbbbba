// Commutativity: for small sets of registrations, every registration order x every
// deregistration order must pass through exactly the states that registering the active
// subset in a fixed order gives; invariants hold after every step; conflicting registrations
// attempted along the way throw and leave the state untouched.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/host_ops.h"
#include "dispatch/dispatcher.h"
#include "tests/harness.h"

using namespace op;

namespace {

template <int N>
TensorBase marked(const TensorBase&) {
  return TensorBase::full({1}, N, ScalarType::Int64);
}

void boxed_marker(const OperatorHandle&, DispatchKeySet ks, Stack* stack) {
  stack->clear();
  stack->push_back(TensorBase::full({1}, 1000 + index_of(ks.highest()), ScalarType::Int64));
}

using Make = std::function<RegistrationHandle(Dispatcher&)>;

struct Reg {
  const char* what;
  Make make;
  Make twin;  // a registration that conflicts with `make` while it is active
};

Reg def(const char* schema, const char* other_schema) {
  return {schema, [=](Dispatcher& d) { return d.def(schema, "def"); },
          [=](Dispatcher& d) { return d.def(other_schema, "twin def"); }};
}
Reg kernel_at(const char* name, DispatchKey key, KernelFunction k, const char* label) {
  return {label, [=](Dispatcher& d) { return d.impl(name, key, k, label); },
          [=](Dispatcher& d) { return d.impl(name, key, k, "twin"); }};
}
Reg fallback(DispatchKey key, KernelFunction k, const char* label) {
  return {label, [=](Dispatcher& d) { return d.fallback(key, k, label); },
          [=](Dispatcher& d) { return d.fallback(key, k, "twin"); }};
}

TensorBase on(DeviceType type) {
  return type == DeviceType::Meta ? TensorBase::empty({1}, type) : TensorBase::zeros({1}, Device(type));
}

// Everything observable about the operators: dumps, tables, and what a call does.
std::string observe(const Dispatcher& d, const std::vector<std::string>& ops) {
  static const DeviceType xla = register_device_type("xla", DispatchKey::XLA);
  std::string out;
  for (const std::string& name : ops) {
    out += d.dump(name);
    for (const auto& [key, label] : d.dump_table(name)) out += key + "=" + label + ";";
    out += "\n";
    std::optional<OperatorHandle> op = d.find_op(name);
    if (!op) continue;
    for (DeviceType type : {DeviceType::CPU, xla, DeviceType::Meta}) {
      Stack stack{on(type)};
      try {
        op->call_boxed(stack);
        out += std::to_string(op::host::item<int64_t>(stack[0].to_tensor())) + ",";
      } catch (const Error& e) {
        out += std::string(e.what()) + ",";
      }
    }
  }
  return out;
}

std::string order_text(const std::vector<Reg>& regs, const std::vector<int>& order) {
  std::string s;
  for (int i : order) s += std::string(s.empty() ? "" : ", ") + regs[i].what;
  return s;
}

struct Stats {
  size_t sequences = 0, steps = 0, conflicts = 0;
};

void run_all_orders(const std::vector<Reg>& regs, const std::vector<std::string>& ops, Stats& stats,
                    const std::vector<std::pair<std::vector<int>, std::vector<int>>>* sample = nullptr) {
  const int n = static_cast<int>(regs.size());
  std::vector<std::string> canonical(size_t{1} << n);
  for (unsigned mask = 0; mask < canonical.size(); ++mask) {
    Dispatcher d;
    std::vector<RegistrationHandle> handles;
    for (int i = 0; i < n; ++i)
      if (mask & (1u << i)) handles.push_back(regs[i].make(d));
    canonical[mask] = observe(d, ops);
  }
  auto run_one = [&](const std::vector<int>& up, const std::vector<int>& down, bool try_conflicts) {
    Dispatcher d;
    std::vector<RegistrationHandle> handles(n);
    unsigned mask = 0;
    auto check_state = [&](const char* phase, int step) {
      std::string state = observe(d, ops);
      if (state != canonical[mask])
        optest::fail(__FILE__, __LINE__, str("state differs from canonical after ", phase, " step ", step, "; up: ",
                                             order_text(regs, up), "; down: ", order_text(regs, down), "\n--- got:\n",
                                             state, "--- want:\n", canonical[mask]));
      for (const std::string& name : ops) d.check_invariants(name);
      ++stats.steps;
    };
    for (int s = 0; s < n; ++s) {
      handles[up[s]] = regs[up[s]].make(d);
      mask |= 1u << up[s];
      check_state("registration", s);
      if (!try_conflicts) continue;
      for (int j = 0; j < n; ++j) {
        if (!(mask & (1u << j)) || !regs[j].twin) continue;
        bool threw = false;
        try {
          RegistrationHandle h = regs[j].twin(d);
        } catch (const Error&) {
          threw = true;
        }
        CHECK(threw);
        ++stats.conflicts;
        check_state("refused conflict", s);
      }
    }
    for (int s = 0; s < n; ++s) {
      handles[down[s]].release();
      mask &= ~(1u << down[s]);
      check_state("deregistration", s);
    }
    ++stats.sequences;
  };
  if (sample) {
    for (const auto& [up, down] : *sample) run_one(up, down, true);
    return;
  }
  std::vector<int> up(n);
  for (int i = 0; i < n; ++i) up[i] = i;
  do {
    std::vector<int> down = up;
    std::sort(down.begin(), down.end());
    bool first = true;
    do {
      run_one(up, down, first);
      first = false;
    } while (std::next_permutation(down.begin(), down.end()));
  } while (std::next_permutation(up.begin(), up.end()));
}

}  // namespace

TEST(permutations_def_impls_alias_fallback_fallthrough) {
  std::vector<Reg> regs = {
      def("perm::op(Tensor x) -> Tensor", "perm::op(Tensor x, int n) -> Tensor"),
      kernel_at("perm::op", DispatchKey::CPU, KernelFunction::make<&marked<1>>(), "cpu"),
      kernel_at("perm::op", DispatchKey::CompositeImplicitAutograd, KernelFunction::make<&marked<2>>(), "implicit"),
      fallback(DispatchKey::XLA, KernelFunction::make_boxed<&boxed_marker>(), "xla_fallback"),
      kernel_at("perm::op", DispatchKey::AutogradCPU, KernelFunction::fallthrough(), "autograd_cpu_ft"),
  };
  Stats stats;
  run_all_orders(regs, {"perm::op"}, stats);
  CHECK_EQ(stats.sequences, size_t{14400});
  CHECK_EQ(stats.steps, size_t{14400 * 10 + stats.conflicts});
}

TEST(permutations_explicit_autograd_schema_impl_keywide_fallthrough_two_ops) {
  std::vector<Reg> regs = {
      def("perm::op(Tensor x) -> Tensor", "perm::op(Tensor y) -> Tensor"),
      kernel_at("perm::op(Tensor x) -> Tensor", DispatchKey::Meta, KernelFunction::make_boxed<&boxed_marker>(), "meta_with_schema"),
      kernel_at("perm::op", DispatchKey::CompositeExplicitAutograd, KernelFunction::make<&marked<3>>(), "explicit"),
      kernel_at("perm::op", DispatchKey::Autograd, KernelFunction::make<&marked<4>>(), "autograd"),
      fallback(DispatchKey::CPU, KernelFunction::fallthrough(), "cpu_ft_fallback"),
  };
  // Fallbacks are shared by all operators: run the set again with the def swapped for a
  // second operator's and watch both (perm::op now has kernels but no def).
  std::vector<Reg> with_other = regs;
  with_other[0] = def("perm::other(Tensor x) -> Tensor", "perm::other(Tensor x, Tensor y) -> Tensor");
  Stats stats;
  run_all_orders(regs, {"perm::op"}, stats);
  run_all_orders(with_other, {"perm::op", "perm::other"}, stats);
  CHECK_EQ(stats.sequences, size_t{2 * 14400});
}

TEST(permutations_sampled_from_seven_registrations) {
  std::vector<Reg> regs = {
      def("perm::op(Tensor x) -> Tensor", "perm::op(Tensor x, int n) -> Tensor"),
      kernel_at("perm::op", DispatchKey::CPU, KernelFunction::make<&marked<1>>(), "cpu"),
      kernel_at("perm::op", DispatchKey::CompositeImplicitAutograd, KernelFunction::make<&marked<2>>(), "implicit"),
      kernel_at("perm::op", DispatchKey::CompositeExplicitAutograd, KernelFunction::make<&marked<3>>(), "explicit"),
      kernel_at("perm::op", DispatchKey::Autograd, KernelFunction::make<&marked<4>>(), "autograd"),
      fallback(DispatchKey::XLA, KernelFunction::make_boxed<&boxed_marker>(), "xla_fallback"),
      fallback(DispatchKey::AutogradCPU, KernelFunction::fallthrough(), "autograd_cpu_ft"),
  };
  std::mt19937 rng(12345);  // fixed seed: the same sample on every run
  std::vector<std::pair<std::vector<int>, std::vector<int>>> sample;
  std::vector<int> up = {0, 1, 2, 3, 4, 5, 6}, down = up;
  for (int i = 0; i < 1500; ++i) {
    std::shuffle(up.begin(), up.end(), rng);
    std::shuffle(down.begin(), down.end(), rng);
    sample.emplace_back(up, down);
  }
  Stats stats;
  run_all_orders(regs, {"perm::op"}, stats, &sample);
  CHECK_EQ(stats.sequences, size_t{1500});
}

// The NonFunctional alias beside the explicit and implicit composites: CPU and Meta take it,
// XLA (which functionalizes) falls to CompositeExplicitAutograd, and a direct CPU kernel wins.
TEST(permutations_non_functional_explicit_implicit_cpu) {
  std::vector<Reg> regs = {
      def("perm::op(Tensor x) -> Tensor", "perm::op(Tensor x, int n) -> Tensor"),
      kernel_at("perm::op", DispatchKey::CPU, KernelFunction::make<&marked<1>>(), "cpu"),
      kernel_at("perm::op", DispatchKey::CompositeImplicitAutograd, KernelFunction::make<&marked<2>>(), "implicit"),
      kernel_at("perm::op", DispatchKey::CompositeExplicitAutograd, KernelFunction::make<&marked<3>>(), "explicit"),
      kernel_at("perm::op", DispatchKey::CompositeExplicitAutogradNonFunctional, KernelFunction::make<&marked<5>>(),
           "non_functional"),
  };
  Stats stats;
  run_all_orders(regs, {"perm::op"}, stats);
  CHECK_EQ(stats.sequences, size_t{14400});
}
