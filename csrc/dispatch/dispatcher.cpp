#include "dispatch/dispatcher.h"

#include "core/error.h"

namespace op {

namespace {

OperatorName qualified_name(const std::string& text) {
  OperatorName name = OperatorName::parse(text);
  OP_CHECK(!name.ns.empty(), "operator name '", text, "' needs a namespace, e.g. 'myops::", text, "'");
  return name;
}

}  // namespace

Dispatcher::Dispatcher() : alive_(std::make_shared<int>(0)) {}
Dispatcher::~Dispatcher() = default;

Dispatcher& Dispatcher::singleton() {
  static Dispatcher* d = new Dispatcher();
  return *d;
}

template <class Undo>
RegistrationHandle Dispatcher::handle(Undo undo) {
  std::weak_ptr<int> alive = alive_;
  return RegistrationHandle([this, alive, undo]() {
    if (alive.expired()) return;
    std::lock_guard<std::mutex> lock(mutex_);
    undo();
    generation_.fetch_add(1, std::memory_order_acq_rel);
  });
}

OperatorEntry& Dispatcher::entry_for(const OperatorName& name) {
  std::unique_ptr<OperatorEntry>& slot = ops_[name.str()];
  if (!slot) {
    slot = std::make_unique<OperatorEntry>(name);
    slot->update_table(fallbacks_);
  }
  return *slot;
}

const OperatorEntry* Dispatcher::find_entry(const std::string& name) const {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : it->second.get();
}

void Dispatcher::update_all_tables() {
  for (auto& [name, entry] : ops_) entry->update_table(fallbacks_);
}

RegistrationHandle Dispatcher::def(const std::string& schema_text, const std::string& debug) {
  FunctionSchema schema = FunctionSchema::parse(schema_text);
  OP_CHECK(!schema.name().ns.empty(), "schema '", schema_text, "' needs a namespace, e.g. 'myops::",
           schema_text, "'");
  const std::string label = debug.empty() ? "def" : debug;
  std::lock_guard<std::mutex> lock(mutex_);
  OperatorEntry& entry = entry_for(schema.name());
  entry.check_def(schema, label);
  const uint64_t id = next_id();
  entry.add_def(RegisteredSchema{schema, label, id});
  entry.update_table(fallbacks_);
  OperatorEntry* e = &entry;
  return handle([this, e, id]() {
    if (e->remove_def(id)) e->update_table(fallbacks_);
  });
}

RegistrationHandle Dispatcher::impl(const std::string& name_text, DispatchKey key, KernelFunction kernel,
                                    const std::string& debug) {
  OP_CHECK(is_runtime_key(key) || is_alias_key(key), "cannot register a kernel at dispatch key ", to_string(key));
  OP_CHECK(kernel.is_valid(), "impl of ", name_text, " at ", to_string(key), ": the kernel is empty");
  RegisteredKernel registered;
  OperatorName name;
  if (name_text.find('(') != std::string::npos) {
    registered.schema = FunctionSchema::parse(name_text);
    name = registered.schema->name();
    OP_CHECK(!name.ns.empty(), "schema '", name_text, "' needs a namespace");
  } else {
    name = qualified_name(name_text);
  }
  registered.kernel = std::move(kernel);
  registered.debug = !debug.empty() ? debug
                     : registered.kernel.is_fallthrough() ? "fallthrough"
                                                         : str(to_string(key), " kernel");
  std::lock_guard<std::mutex> lock(mutex_);
  OperatorEntry& entry = entry_for(name);
  entry.check_impl(key, registered);
  const uint64_t id = next_id();
  registered.id = id;
  entry.add_impl(key, std::move(registered));
  entry.update_table(fallbacks_);
  OperatorEntry* e = &entry;
  return handle([this, e, key, id]() {
    if (e->remove_impl(key, id)) e->update_table(fallbacks_);
  });
}

RegistrationHandle Dispatcher::fallback(DispatchKey key, KernelFunction kernel, const std::string& debug) {
  OP_CHECK(is_runtime_key(key), "fallbacks are registered at runtime keys, not ", to_string(key));
  OP_CHECK(kernel.is_valid(), "fallback at ", to_string(key), ": the kernel is empty");
  OP_CHECK(!kernel.has_unboxed(), "fallback at ", to_string(key),
           " must be boxed (it serves operators of every signature)");
  std::lock_guard<std::mutex> lock(mutex_);
  std::optional<RegisteredKernel>& slot = fallbacks_[index_of(key)];
  const std::string label = !debug.empty() ? debug
                            : kernel.is_fallthrough() ? "fallthrough"
                                                      : str(to_string(key), " fallback");
  if (slot)
    fail(str("a fallback for ", to_string(key), " is already registered ('", slot->debug, "'); cannot register '", label,
             "' too; release the other registration first"));
  const uint64_t id = next_id();
  slot = RegisteredKernel{std::move(kernel), label, std::nullopt, id};
  update_all_tables();
  return handle([this, key, id]() {
    std::optional<RegisteredKernel>& s = fallbacks_[index_of(key)];
    if (s && s->id == id) {
      s.reset();
      update_all_tables();
    }
  });
}

RegistrationHandle Dispatcher::claim_namespace(const std::string& ns, const std::string& debug) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = namespaces_.find(ns);
  if (it != namespaces_.end())
    fail(str("namespace '", ns, "' is already defined by another DEF library (", it->second.second,
             "); use a FRAGMENT library to add definitions to it"));
  const uint64_t id = next_id();
  namespaces_[ns] = {id, debug};
  return handle([this, ns, id]() {
    auto found = namespaces_.find(ns);
    if (found != namespaces_.end() && found->second.first == id) namespaces_.erase(found);
  });
}

std::optional<OperatorHandle> Dispatcher::find_op(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const OperatorEntry* e = find_entry(qualified_name(name).str());
  if (!e || !e->has_schema()) return std::nullopt;
  return OperatorHandle(const_cast<OperatorEntry*>(e));
}

OperatorHandle Dispatcher::find_op_or_throw(const std::string& name) const {
  std::optional<OperatorHandle> h = find_op(name);
  if (h) return *h;
  std::lock_guard<std::mutex> lock(mutex_);
  const OperatorEntry* e = find_entry(qualified_name(name).str());
  if (e && !e->kernels().empty())
    fail(str("operator ", name, " has kernels but no definition; def() its schema before calling it"));
  fail(str("unknown operator ", name, "; is the library that defines it loaded?"));
}

OperatorHandle left_out_operator(const char* name, const char* selection) {
  fail(str(name, " is not in this build: the operator selection ", selection,
           " (scons --ops) does not include it, as it runs in backward passes and nothing selected is used for training"));
}

std::vector<OperatorHandle> Dispatcher::find_overloads(const std::string& qualified) const {
  OperatorName base = qualified_name(qualified);
  OP_CHECK(base.overload.empty(), "find_overloads takes 'ns::name' without an overload, got '", qualified, "'");
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<OperatorHandle> out;
  for (const auto& [name, entry] : ops_)  // map order: sorted by full name, so by overload
    if (entry->has_schema() && entry->name().ns == base.ns && entry->name().name == base.name)
      out.emplace_back(entry.get());
  return out;
}

std::vector<std::string> Dispatcher::op_names() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> names;
  for (const auto& [name, entry] : ops_)
    if (entry->has_schema()) names.push_back(name);
  return names;
}

std::string Dispatcher::dump(const std::string& name) const {
  OperatorName parsed = qualified_name(name);
  std::lock_guard<std::mutex> lock(mutex_);
  if (const OperatorEntry* e = find_entry(parsed.str())) return e->dump(fallbacks_);
  OperatorEntry empty(parsed);
  empty.update_table(fallbacks_);
  return empty.dump(fallbacks_);
}

std::vector<std::pair<std::string, std::string>> Dispatcher::dump_table(const std::string& name) const {
  OperatorName parsed = qualified_name(name);
  std::lock_guard<std::mutex> lock(mutex_);
  if (const OperatorEntry* e = find_entry(parsed.str())) return e->dump_table();
  OperatorEntry empty(parsed);
  empty.update_table(fallbacks_);
  return empty.dump_table();
}

void Dispatcher::check_invariants(const std::string& name) const {
  OperatorName parsed = qualified_name(name);
  std::lock_guard<std::mutex> lock(mutex_);
  if (const OperatorEntry* e = find_entry(parsed.str())) e->check_invariants(fallbacks_);
}

}  // namespace op
