#include "dispatch/operator_entry.h"

#include <algorithm>

#include "core/error.h"

namespace op {

const char* to_string(TableSource s) {
  switch (s) {
    case TableSource::Missing: return "missing";
    case TableSource::DefaultFallthrough: return "default fallthrough";
    case TableSource::Direct: return "direct";
    case TableSource::CompositeExplicitAutogradNonFunctional: return "CompositeExplicitAutogradNonFunctional";
    case TableSource::CompositeExplicitAutograd: return "CompositeExplicitAutograd";
    case TableSource::CompositeImplicitAutograd: return "CompositeImplicitAutograd";
    case TableSource::Autograd: return "Autograd";
    case TableSource::Fallback: return "fallback";
  }
  return "?";
}

std::string schema_kinds(const FunctionSchema& schema) {
  std::vector<std::string> args, returns;
  for (const Argument& a : schema.arguments()) args.push_back(a.type.boxed_kind());
  for (const Return& r : schema.returns()) returns.push_back(r.type.boxed_kind());
  return CppSignature::kinds_str(args, returns);
}

OperatorEntry::OperatorEntry(OperatorName name) : name_(std::move(name)) { update_table(Fallbacks{}); }

const FunctionSchema& OperatorEntry::schema() const {
  OP_CHECK(def_.has_value(), "operator ", name_.str(), " has no schema yet: it has kernels but no def()");
  return def_->schema;
}

const RegisteredKernel* OperatorEntry::find(DispatchKey key) const {
  auto it = kernels_.find(key);
  return it == kernels_.end() ? nullptr : &it->second;
}

// The resolution rule for one runtime key, in precedence order:
//  1. a kernel registered at the key itself;
//  2. CompositeExplicitAutogradNonFunctional, for backend keys other than XLA and Lazy (those
//     run under functionalization, so a kernel that mutates or aliases must not reach them);
//  3. CompositeExplicitAutograd, for backend keys;
//  4. CompositeImplicitAutograd, for backend keys, autograd keys and Functionalize; for
//     Autograd<B> only when neither B nor an explicit composite covering B has a kernel
//     (otherwise the composite would shadow the real backend kernel for every call that goes
//     through autograd); for Functionalize only when no backend or explicit composite has one;
//  5. the Autograd alias, for autograd keys;
//  6. the key's backend fallback;
//  7. pass through (autograd keys, ADInplaceOrView and BackendSelect), else missing.
// Undefined, the key of a call none of whose arguments selects one (no tensor, no options a
// BackendSelect kernel reads: promote_types, can_cast), holds CompositeExplicitAutograd, else
// CompositeImplicitAutograd: such an operator runs its composite, as in PyTorch.
// Only the registered set is consulted, never the order it was built in.
OperatorEntry::Table OperatorEntry::compute(const Fallbacks& fallbacks) const {
  Table t;
  const RegisteredKernel* non_functional = find(DispatchKey::CompositeExplicitAutogradNonFunctional);
  const DispatchKeySet non_functional_keys = runtime_keys_of(DispatchKey::CompositeExplicitAutogradNonFunctional);
  const RegisteredKernel* explicit_ = find(DispatchKey::CompositeExplicitAutograd);
  const RegisteredKernel* implicit = find(DispatchKey::CompositeImplicitAutograd);
  const RegisteredKernel* autograd = find(DispatchKey::Autograd);
  const DispatchKeySet implicit_keys = runtime_keys_of(DispatchKey::CompositeImplicitAutograd);
  bool has_backend_kernel = explicit_ != nullptr || non_functional != nullptr;
  for (int i = index_of(DispatchKey::CPU); i <= index_of(DispatchKey::Meta); ++i)
    has_backend_kernel = has_backend_kernel || find(key_at(i)) != nullptr;
  for (int i = kFirstRuntimeKey; i <= kLastRuntimeKey; ++i) {
    const DispatchKey key = key_at(i);
    const RegisteredKernel* chosen = nullptr;
    TableSource source = TableSource::Missing;
    auto pick = [&](const RegisteredKernel* k, TableSource s) {
      if (!chosen && k) {
        chosen = k;
        source = s;
      }
    };
    pick(find(key), TableSource::Direct);
    if (non_functional_keys.has(key)) pick(non_functional, TableSource::CompositeExplicitAutogradNonFunctional);
    if (is_backend_key(key)) pick(explicit_, TableSource::CompositeExplicitAutograd);
    if (implicit_keys.has(key)) {
      const DispatchKey backend = backend_key_for(key);
      bool shadows_backend = is_autograd_key(key) && (find(backend) || explicit_ ||
                                                      (non_functional && non_functional_keys.has(backend)));
      // At Functionalize only for operators that have nothing but the decomposition: one with a
      // backend kernel is functional below the key (the layer's fallback runs it there).
      if (key == DispatchKey::Functionalize) shadows_backend = has_backend_kernel;
      if (!shadows_backend) pick(implicit, TableSource::CompositeImplicitAutograd);
    }
    if (is_autograd_key(key)) pick(autograd, TableSource::Autograd);
    if (fallbacks[i]) pick(&*fallbacks[i], TableSource::Fallback);
    if (chosen) {
      t.kernels[i] = chosen->kernel;
      t.labels[i] = chosen->debug;
    } else if (default_fallthrough_keys().has(key)) {
      source = TableSource::DefaultFallthrough;
      t.kernels[i] = KernelFunction::fallthrough();
    }
    t.sources[i] = source;
    if (!t.kernels[i].is_fallthrough()) t.mask = t.mask.add(key);
  }
  if (const RegisteredKernel* composite = explicit_ ? explicit_ : implicit) {
    const int undefined = index_of(DispatchKey::Undefined);
    t.kernels[undefined] = composite->kernel;
    t.labels[undefined] = composite->debug;
    t.sources[undefined] = explicit_ ? TableSource::CompositeExplicitAutograd : TableSource::CompositeImplicitAutograd;
  }
  return t;
}

void OperatorEntry::update_table(const Fallbacks& fallbacks) {
  Table t = compute(fallbacks);
  mask_ = t.mask;
  table_ = std::move(t.kernels);
  sources_ = t.sources;
  labels_ = std::move(t.labels);
  tensor_arguments_.clear();
  if (def_) {
    const auto& args = def_->schema.arguments();
    for (size_t i = 0; i < args.size(); ++i)
      if (args[i].type.is_tensor_like()) tensor_arguments_.push_back(i);
  }
}

// ----- registration checks -----

namespace {

std::optional<std::string> kinds_problem(const FunctionSchema& schema, const CppSignature& sig) {
  std::string want = schema_kinds(schema), have = sig.kinds_str();
  if (want == have) return std::nullopt;
  return str("the schema '", schema.str(), "' takes ", want, " but the kernel's C++ signature ", sig.type_name(),
             " is ", have);
}

}  // namespace

void OperatorEntry::check_def(const FunctionSchema& schema, const std::string& debug) const {
  if (def_) {
    if (def_->schema.str() == schema.str())
      fail(str("operator ", name_.str(), " is already defined (by '", def_->debug,
               "'); each operator is defined once; release the other definition first"));
    fail(str("conflicting definitions of ", name_.str(), ": '", schema.str(), "' (", debug, ") vs '",
             def_->schema.str(), "' (", def_->debug, ")"));
  }
  for (const auto& [key, k] : kernels_) {
    if (k.schema && k.schema->str() != schema.str())
      fail(str("definition '", schema.str(), "' conflicts with the schema '", k.schema->str(), "' given by kernel '",
               k.debug, "' at ", to_string(key)));
    if (const CppSignature* sig = k.kernel.cpp_signature())
      if (auto problem = kinds_problem(schema, *sig))
        fail(str("definition of ", name_.str(), " conflicts with kernel '", k.debug, "' at ", to_string(key), ": ",
                 *problem));
  }
}

void OperatorEntry::check_impl(DispatchKey key, const RegisteredKernel& kernel) const {
  if (const RegisteredKernel* existing = find(key))
    fail(str(name_.str(), " already has a kernel for ", to_string(key), " ('", existing->debug, "'); cannot register '",
             kernel.debug, "' there too; release the other registration first"));
  const CppSignature* sig = kernel.kernel.cpp_signature();
  if (def_) {
    if (kernel.schema && kernel.schema->str() != def_->schema.str())
      fail(str("kernel '", kernel.debug, "' for ", name_.str(), " at ", to_string(key), " declares schema '",
               kernel.schema->str(), "' but the operator is defined as '", def_->schema.str(), "'"));
    if (sig)
      if (auto problem = kinds_problem(def_->schema, *sig))
        fail(str("kernel '", kernel.debug, "' for ", name_.str(), " at ", to_string(key), " does not match: ", *problem));
  }
  for (const auto& [other_key, other] : kernels_) {
    if (kernel.schema && other.schema && kernel.schema->str() != other.schema->str())
      fail(str("kernel '", kernel.debug, "' declares schema '", kernel.schema->str(), "' but kernel '", other.debug,
               "' at ", to_string(other_key), " declares '", other.schema->str(), "'"));
    const CppSignature* other_sig = other.kernel.cpp_signature();
    if (kernel.schema && other_sig)
      if (auto problem = kinds_problem(*kernel.schema, *other_sig))
        fail(str("kernel '", kernel.debug, "' declares a schema that kernel '", other.debug, "' at ",
                 to_string(other_key), " does not match: ", *problem));
    if (sig && other.schema)
      if (auto problem = kinds_problem(*other.schema, *sig))
        fail(str("kernel '", kernel.debug, "' does not match the schema declared by kernel '", other.debug, "' at ",
                 to_string(other_key), ": ", *problem));
    if (sig && other_sig && *sig->type != *other_sig->type)
      fail(str("kernel '", kernel.debug, "' for ", name_.str(), " has C++ signature ", sig->type_name(),
               " but kernel '", other.debug, "' at ", to_string(other_key), " has ", other_sig->type_name(),
               "; all typed kernels of an operator share one signature"));
  }
}

void OperatorEntry::add_def(RegisteredSchema def) { def_ = std::move(def); }

bool OperatorEntry::remove_def(uint64_t id) {
  if (!def_ || def_->id != id) return false;
  def_.reset();
  return true;
}

void OperatorEntry::add_impl(DispatchKey key, RegisteredKernel kernel) { kernels_.emplace(key, std::move(kernel)); }

bool OperatorEntry::remove_impl(DispatchKey key, uint64_t id) {
  auto it = kernels_.find(key);
  if (it == kernels_.end() || it->second.id != id) return false;
  kernels_.erase(it);
  return true;
}

// ----- calls -----

void OperatorEntry::check_boxed_arguments(const Stack& stack) const {
  const FunctionSchema& s = schema();
  const auto& args = s.arguments();
  if (stack.size() != args.size()) {
    std::string names;
    for (const Argument& a : args) names += str(names.empty() ? "" : ", ", a.name);
    fail(str(name_.str(), " takes ", args.size(), " argument(s) (", names, ") but ", stack.size(), " were given"));
  }
  for (size_t i = 0; i < args.size(); ++i)
    OP_CHECK(ivalue_matches(stack[i], args[i].type), name_.str(), ": argument '", args[i].name, "' (position ", i,
             ") must be ", args[i].type.str(), " but got ", stack[i].tag_name(), " (", stack[i].repr(), ")");
}

DispatchKeySet OperatorEntry::boxed_key_set(const Stack& stack) const {
  DispatchKeySet ks;
  const size_t n = def_ ? def_->schema.arguments().size() : 0;
  if (stack.size() < n) return ks;
  const IValue* args = stack.data() + (stack.size() - n);
  for (size_t i : tensor_arguments_) {
    const IValue& v = args[i];
    switch (v.tag()) {
      case IValue::Tag::Tensor: ks = ks | v.to_tensor().key_set(); break;
      case IValue::Tag::TensorList:
        for (const TensorBase& t : v.to_tensor_list()) ks = ks | t.key_set();
        break;
      case IValue::Tag::OptionalTensorList:
        for (const auto& t : v.to_optional_tensor_list())
          if (t) ks = ks | t->key_set();
        break;
      default: break;
    }
  }
  return ks;
}

void OperatorEntry::dispatch_boxed(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) const {
  check_boxed_arguments(*stack);
  const DispatchKey key = (ks & mask_).highest();
  const KernelFunction& kernel = table_[index_of(key)];
  if (!kernel.is_valid()) report_missing(key, ks);
  kernel.call_boxed(op, ks.at_or_below(key), stack);
  const auto& returns = def_->schema.returns();
  const std::string& label = labels_[index_of(key)];
  OP_CHECK(stack->size() == returns.size(), name_.str(), ": kernel '", label, "' at ", to_string(key), " left ",
           stack->size(), " value(s) on the stack; the schema returns ", returns.size());
  for (size_t i = 0; i < returns.size(); ++i)
    OP_CHECK(ivalue_matches((*stack)[i], returns[i].type), name_.str(), ": kernel '", label, "' at ", to_string(key),
             " returned ", (*stack)[i].tag_name(), " (", (*stack)[i].repr(), ") for result ", i, " of type ",
             returns[i].type.str());
}

void OperatorEntry::report_missing(DispatchKey key, DispatchKeySet ks) const {
  std::vector<std::string> names;
  for (const auto& [k, kernel] : kernels_)
    if (!kernel.kernel.is_fallthrough()) names.push_back(to_string(k));
  std::sort(names.begin(), names.end());
  std::string have;
  for (const std::string& n : names) have += str(have.empty() ? "" : ", ", n);
  std::string kernels = have.empty() ? str(name_.str(), " has no kernels registered")
                                     : str(name_.str(), " has kernels for: ", have);
  if (key == DispatchKey::Undefined)
    fail(str("could not run ", name_.str(), ": no dispatch key selects a kernel (the call's key set ", ks.to_string(),
             " has no key with a kernel; a factory function needs a BackendSelect kernel or a tensor argument). ",
             kernels));
  fail(str("could not run ", name_.str(), " with dispatch key ", to_string(key), ": no kernel is registered for ",
           to_string(key), " and no fallback covers it. ", kernels, ". Key set of the call: ", ks.to_string()));
}

// ----- introspection -----

std::string OperatorEntry::dump(const Fallbacks& fallbacks) const {
  std::string out = name_.str() + "\n";
  out += def_ ? str("schema: ", def_->schema.str(), " [", def_->debug, "]\n") : "schema: (none)\n";
  std::map<std::string, std::string> lines;  // sorted by key name
  for (const auto& [key, k] : kernels_)
    lines[to_string(key)] = str(k.debug, " [", k.kernel.describe(), "]", k.schema ? " schema: " + k.schema->str() : "");
  out += lines.empty() ? "kernels: (none)\n" : "kernels:\n";
  for (const auto& [key, line] : lines) out += str("  ", key, ": ", line, "\n");
  lines.clear();
  for (int i = kFirstRuntimeKey; i <= kLastRuntimeKey; ++i)
    if (fallbacks[i]) lines[to_string(key_at(i))] = str(fallbacks[i]->debug, " [", fallbacks[i]->kernel.describe(), "]");
  out += lines.empty() ? "fallbacks: (none)\n" : "fallbacks:\n";
  for (const auto& [key, line] : lines) out += str("  ", key, ": ", line, "\n");
  lines.clear();
  for (int i = kFirstRuntimeKey; i <= kLastRuntimeKey; ++i) {
    TableSource s = sources_[i];
    if (s == TableSource::Missing || s == TableSource::DefaultFallthrough) continue;
    lines[to_string(key_at(i))] = str(labels_[i], " [", to_string(s), table_[i].is_fallthrough() ? ", fallthrough" : "", "]");
  }
  out += lines.empty() ? "table: (empty)\n" : "table:\n";
  for (const auto& [key, line] : lines) out += str("  ", key, ": ", line, "\n");
  return out;
}

std::vector<std::pair<std::string, std::string>> OperatorEntry::dump_table() const {
  std::vector<std::pair<std::string, std::string>> rows;
  for (int i = kFirstRuntimeKey; i <= kLastRuntimeKey; ++i) {
    TableSource s = sources_[i];
    if (s != TableSource::Missing && s != TableSource::DefaultFallthrough) rows.emplace_back(to_string(key_at(i)), labels_[i]);
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

void OperatorEntry::check_invariants(const Fallbacks& fallbacks) const {
  const std::string where = str("check_invariants(", name_.str(), "): ");
  // The cached table is exactly what the registered set computes to.
  Table fresh = compute(fallbacks);
  OP_CHECK(fresh.mask == mask_, where, "stale mask ", mask_.to_string(), ", expected ", fresh.mask.to_string());
  const int undefined = index_of(DispatchKey::Undefined);
  OP_CHECK(fresh.sources[undefined] == sources_[undefined] && fresh.kernels[undefined].same_as(table_[undefined]), where,
           "Undefined holds ", to_string(sources_[undefined]), ", expected ", to_string(fresh.sources[undefined]));
  for (int i = kFirstRuntimeKey; i <= kLastRuntimeKey; ++i) {
    const char* key = to_string(key_at(i));
    OP_CHECK(fresh.sources[i] == sources_[i], where, key, " comes from ", to_string(sources_[i]), ", expected ",
             to_string(fresh.sources[i]));
    OP_CHECK(fresh.kernels[i].same_as(table_[i]), where, key, " holds a different kernel than its registration");
    OP_CHECK(fresh.labels[i] == labels_[i], where, key, " is labelled '", labels_[i], "', expected '", fresh.labels[i], "'");
    // Fallthrough entries are never selected; everything else (including "missing", which
    // must raise) is.
    OP_CHECK(mask_.has(key_at(i)) == !table_[i].is_fallthrough(), where, key, " mask bit disagrees with its entry");
    OP_CHECK((sources_[i] == TableSource::Missing) == !table_[i].is_valid(), where, key, " validity disagrees with source");
  }
  // At most one kernel per key, only at registrable keys, all valid and mutually consistent.
  const CppSignature* signature = nullptr;
  for (const auto& [key, k] : kernels_) {
    OP_CHECK(is_runtime_key(key) || is_alias_key(key), where, "kernel at non-registrable key ", to_string(key));
    OP_CHECK(k.kernel.is_valid(), where, "invalid kernel at ", to_string(key));
    OP_CHECK(!k.debug.empty(), where, "kernel at ", to_string(key), " has no label");
    if (def_ && k.schema) OP_CHECK(k.schema->str() == def_->schema.str(), where, "kernel schema differs from def");
    if (const CppSignature* sig = k.kernel.cpp_signature()) {
      if (def_) OP_CHECK(schema_kinds(def_->schema) == sig->kinds_str(), where, "kernel signature differs from def");
      if (signature) OP_CHECK(*signature->type == *sig->type, where, "typed kernels disagree on the C++ signature");
      signature = sig;
    }
  }
  size_t tensors = 0;
  if (def_)
    for (const Argument& a : def_->schema.arguments()) tensors += a.type.is_tensor_like() ? 1 : 0;
  OP_CHECK(tensor_arguments_.size() == tensors, where, "stale tensor argument positions");
}

}  // namespace op
