// The few token shapes the schema parser checks, as plain loops: <regex> made each of the two
// parser objects the slowest compile of the library and its matching slow at registration time.
#pragma once

#include <cstddef>
#include <string_view>

namespace op::lexical {

inline bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_word_char(char c) { return is_alpha(c) || is_digit(c) || c == '_'; }

// [A-Za-z0-9_]+
inline bool is_word(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!is_word_char(c)) return false;
  return true;
}

// [A-Za-z_][A-Za-z0-9_]*
inline bool is_identifier(std::string_view s) { return is_word(s) && !is_digit(s[0]); }

// identifier, optionally ".word" (an operator name with its overload)
inline bool is_qualified_name(std::string_view s) {
  size_t dot = s.find('.');
  if (dot == std::string_view::npos) return is_identifier(s);
  return is_identifier(s.substr(0, dot)) && is_word(s.substr(dot + 1));
}

// -?[0-9]+
inline bool is_int_literal(std::string_view s) {
  if (!s.empty() && s[0] == '-') s.remove_prefix(1);
  if (s.empty()) return false;
  for (char c : s)
    if (!is_digit(c)) return false;
  return true;
}

// -?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?, -?inf, nan
inline bool is_float_literal(std::string_view s) {
  if (s == "nan") return true;
  if (!s.empty() && s[0] == '-') s.remove_prefix(1);
  if (s == "inf") return true;
  size_t i = 0, int_digits = 0, frac_digits = 0;
  while (i < s.size() && is_digit(s[i])) ++i, ++int_digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && is_digit(s[i])) ++i, ++frac_digits;
  }
  if (int_digits == 0 && frac_digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    size_t exponent_digits = 0;
    while (i < s.size() && is_digit(s[i])) ++i, ++exponent_digits;
    if (exponent_digits == 0) return false;
  }
  return i == s.size();
}

// "..." or '...' with backslash escapes, the quote not appearing unescaped inside.
inline bool is_quoted_string(std::string_view s) {
  if (s.size() < 2 || (s[0] != '"' && s[0] != '\'') || s.back() != s[0]) return false;
  const char quote = s[0];
  for (size_t i = 1; i + 1 < s.size(); ++i) {
    if (s[i] == '\\') {
      if (i + 2 >= s.size()) return false;  // the escape would swallow the closing quote
      ++i;
    } else if (s[i] == quote) {
      return false;
    }
  }
  return true;
}

// [a-z](\|[a-z])*  (an alias set such as "a" or "a|b")
inline bool is_alias_set(std::string_view s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    bool letter_slot = i % 2 == 0;
    if (letter_slot ? !(s[i] >= 'a' && s[i] <= 'z') : s[i] != '|') return false;
  }
  return s.size() % 2 == 1;
}

}  // namespace op::lexical
