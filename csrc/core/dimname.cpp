#include "core/dimname.h"

#include <mutex>
#include <unordered_set>

#include "core/error.h"

namespace op {

namespace {

bool is_identifier(std::string_view s) {
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (s.empty() || !alpha(s[0])) return false;
  for (char c : s)
    if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
  return true;
}

// The one copy of every name in use. Nodes of an unordered_set never move, so the pointers
// Dimnames hold stay valid; the table is leaked on purpose (Dimnames in static objects may
// outlive any destructor order).
const std::string* intern(std::string_view name) {
  static std::mutex* mutex = new std::mutex;
  static auto* table = new std::unordered_set<std::string>;
  std::lock_guard<std::mutex> lock(*mutex);
  return &*table->emplace(name).first;
}

}  // namespace

Dimname::Dimname(std::string_view name) {
  OP_CHECK(name == "*" || is_identifier(name), "invalid dimension name '", std::string(name),
           "': a name is an identifier (letters, digits and '_', not starting with a digit) or '*'");
  name_ = intern(name);
}

}  // namespace op
