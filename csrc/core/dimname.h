// Dimname: the name of a tensor dimension (`Dimname` and `Dimname[]` in schemas, PyTorch's named
// tensors). An interned string: names compare and copy as one pointer, and every Dimname with
// the same text is the same object for the life of the process. A name is an identifier
// (letters, digits, '_', not starting with a digit) or "*", the wildcard that matches any name.
// Boxed as its own IValue kind; from Python a str (a list of str for Dimname[]).
#pragma once

#include <string>
#include <string_view>

#include "core/array_ref.h"

namespace op {

class Dimname {
 public:
  // Throws op::Error for text that is neither an identifier nor "*".
  explicit Dimname(std::string_view name);
  static Dimname wildcard() { return Dimname("*"); }

  const std::string& str() const { return *name_; }
  bool is_wildcard() const { return str() == "*"; }
  // Whether a dimension named `other` fits where this name is expected (the wildcard fits any).
  bool matches(const Dimname& other) const { return is_wildcard() || other.is_wildcard() || *this == other; }

  bool operator==(const Dimname& other) const { return name_ == other.name_; }
  bool operator!=(const Dimname& other) const { return name_ != other.name_; }

 private:
  const std::string* name_;  // owned by the intern table (dimname.cpp), never freed
};

using DimnameList = ArrayRef<Dimname>;

}  // namespace op
