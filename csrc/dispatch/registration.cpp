#include "dispatch/registration.h"

#include <cstdio>
#include <mutex>

#include "core/error.h"

namespace op {

namespace {

const char* kind_name(Library::Kind kind) {
  return kind == Library::DEF ? "DEF" : kind == Library::IMPL ? "IMPL" : "FRAGMENT";
}

struct ErrorLog {
  std::mutex mutex;
  std::vector<std::string> messages;
};
ErrorLog& error_log() {
  static ErrorLog* log = new ErrorLog();
  return *log;
}

}  // namespace

Library::Library(Kind kind, std::string ns, std::optional<DispatchKey> key, std::string file, int line,
                 Dispatcher* dispatcher)
    : kind_(kind), ns_(std::move(ns)), key_(key), file_(std::move(file)), line_(line), dispatcher_(dispatcher) {
  OP_CHECK(ns_ == "_" || OperatorName::parse(ns_ + "::x").ns == ns_, "bad library namespace '", ns_, "'");
  OP_CHECK(!key_ || kind_ == IMPL, "only IMPL libraries take a dispatch key");
  OP_CHECK(ns_ != "_" || kind_ == IMPL, "the '_' namespace is for IMPL libraries that register fallbacks");
  if (kind_ == DEF) handles_.push_back(dispatcher_->claim_namespace(ns_, where()));
}

std::string Library::where() const {
  return file_.empty() ? str(kind_name(kind_), " library ", ns_) : str(file_, ":", line_);
}

std::string Library::qualify(const std::string& name) const {
  OP_CHECK(ns_ != "_", where(), ": the '_' library can only register fallbacks");
  size_t colons = name.find("::");
  size_t paren = name.find('(');
  if (colons == std::string::npos || (paren != std::string::npos && colons > paren)) return ns_ + "::" + name;
  OP_CHECK(name.compare(0, colons, ns_) == 0 && colons == ns_.size(), where(), ": '", name,
           "' is outside the library's namespace '", ns_, "'");
  return name;
}

DispatchKey Library::key_or(std::optional<DispatchKey> key, const char* what) const {
  OP_CHECK(key || key_, where(), ": ", what, " needs a dispatch key (the library has none)");
  OP_CHECK(!key || !key_ || *key == *key_, where(), ": this library registers at ", to_string(*key_), ", not ",
           to_string(*key));
  return key ? *key : *key_;
}

Library& Library::def(const std::string& schema, const std::string& debug) {
  OP_CHECK(kind_ != IMPL, where(), ": an IMPL library cannot define operators; use DEF or FRAGMENT");
  handles_.push_back(dispatcher_->def(qualify(schema), debug.empty() ? where() : debug));
  return *this;
}

Library& Library::def(const std::string& schema, KernelFunction kernel, const std::string& debug) {
  def(schema, debug);
  std::string qualified = qualify(schema);
  std::string name = qualified.substr(0, qualified.find('('));
  handles_.push_back(dispatcher_->impl(name, DispatchKey::CompositeImplicitAutograd, std::move(kernel),
                                       debug.empty() ? where() : debug));
  return *this;
}

Library& Library::impl(const std::string& name, DispatchKey key, KernelFunction kernel, const std::string& debug) {
  handles_.push_back(dispatcher_->impl(qualify(name), key_or(key, "impl"), std::move(kernel), debug));
  return *this;
}

Library& Library::impl(const std::string& name, KernelFunction kernel, const std::string& debug) {
  handles_.push_back(dispatcher_->impl(qualify(name), key_or(std::nullopt, "impl"), std::move(kernel), debug));
  return *this;
}

Library& Library::fallback(DispatchKey key, KernelFunction kernel, const std::string& debug) {
  handles_.push_back(dispatcher_->fallback(key_or(key, "fallback"), std::move(kernel), debug));
  return *this;
}

Library& Library::fallback(KernelFunction kernel, const std::string& debug) {
  handles_.push_back(dispatcher_->fallback(key_or(std::nullopt, "fallback"), std::move(kernel), debug));
  return *this;
}

void Library::close() {
  while (!handles_.empty()) {
    handles_.back().release();
    handles_.pop_back();
  }
}

namespace detail {

StaticLibrary::~StaticLibrary() = default;

StaticLibrary::StaticLibrary(Library::Kind kind, const char* ns, std::optional<DispatchKey> key,
                             void (*init)(Library&), const char* file, int line) {
  try {
    library_.emplace(kind, ns, key, file, line);
    init(*library_);
  } catch (const std::exception& e) {
    library_.reset();  // all or nothing: undo what the library registered before failing
    std::string message = str(file, ":", line, ": static registration failed: ", e.what());
    std::fprintf(stderr, "opdispatch: %s\n", message.c_str());
    ErrorLog& log = error_log();
    std::lock_guard<std::mutex> lock(log.mutex);
    log.messages.push_back(message);
  }
}

}  // namespace detail

std::vector<std::string> static_registration_errors() {
  ErrorLog& log = error_log();
  std::lock_guard<std::mutex> lock(log.mutex);
  return log.messages;
}

}  // namespace op
