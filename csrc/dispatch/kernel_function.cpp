#include "dispatch/kernel_function.h"

#include <cxxabi.h>

#include <cstdlib>

#include "dispatch/operator_handle.h"

namespace op {

namespace detail {
void fallthrough_marker(OperatorKernel*, const OperatorHandle& op, DispatchKeySet ks, Stack*) {
  fail(str("internal error: the fallthrough kernel of ", op.name(), " was called (key set ", ks.to_string(),
           "); fallthrough keys should have been skipped"));
}
}  // namespace detail

const char* KernelFunction::describe() const {
  if (!is_valid()) return "invalid";
  if (is_fallthrough()) return "fallthrough";
  return has_unboxed() ? "unboxed+boxed" : "boxed";
}

void KernelFunction::signature_mismatch(const OperatorHandle& op, const CppSignature& called) const {
  fail(str(op.name(), ": called with C++ signature ", called.type_name(), " but the kernel was registered as ",
           sig_->type_name(), "; call it with exactly the kernel's parameter types"));
}

CppSignature::CppSignature(const std::type_info* type, const char* const* args, size_t arg_count,
                           const char* const* returns, size_t return_count)
    : type(type), arg_kinds(args, args + arg_count), return_kinds(returns, returns + return_count) {}

CppSignature::~CppSignature() = default;

std::string CppSignature::kinds_str() const { return kinds_str(arg_kinds, return_kinds); }

std::string CppSignature::kinds_str(const std::vector<std::string>& args, const std::vector<std::string>& returns) {
  std::string out = "(";
  for (size_t i = 0; i < args.size(); ++i) out += (i ? ", " : "") + args[i];
  out += ") -> ";
  if (returns.size() == 1) return out + returns[0];
  out += "(";
  for (size_t i = 0; i < returns.size(); ++i) out += (i ? ", " : "") + returns[i];
  return out + ")";
}

std::string CppSignature::type_name() const {
  int status = 0;
  char* demangled = abi::__cxa_demangle(type->name(), nullptr, nullptr, &status);
  std::string name = status == 0 && demangled ? demangled : type->name();
  std::free(demangled);
  return name;
}

namespace boxing {

void argument_error(size_t index, const char* expected, const IValue& got) {
  fail(str("argument #", index, ": expected ", expected, " but got ", got.tag_name(), " (", got.repr(), ")"));
}

void result_count_error(size_t expected, size_t got) {
  fail(str("boxed call: expected ", expected, " value(s) on the stack but found ", got));
}

}  // namespace boxing
}  // namespace op
