// Runs the registered tests: `opdispatch_tests [name-substring]`.
// `opdispatch_tests --parse-schemas FILE` instead parses one schema per line and prints
// "ok <canonical>" or "error <message>" per line (the Python/C++ parser parity test uses it).
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>

#include "dispatch/schema.h"
#include "tests/harness.h"

namespace optest {
std::vector<TestCase>& registry() {
  static std::vector<TestCase> tests;
  return tests;
}
}  // namespace optest

static int parse_schemas(const char* path) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path);
    return 2;
  }
  std::string line;
  while (std::getline(in, line)) {
    try {
      std::string canonical = op::FunctionSchema::parse(line).str();  // before printing: it may throw
      std::cout << "ok " << canonical << "\n";
    } catch (const op::Error& e) {
      std::string message = e.what();
      for (char& c : message)
        if (c == '\n') c = ' ';
      std::cout << "error " << message << "\n";
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--parse-schemas") == 0) return parse_schemas(argv[2]);
  const char* filter = argc > 1 ? argv[1] : nullptr;
  int passed = 0, failed = 0;
  for (const optest::TestCase& test : optest::registry()) {
    if (filter && !std::strstr(test.name, filter)) continue;
    std::string problem;
    try {
      test.fn();
    } catch (const optest::Failure& f) {
      problem = f.message;
    } catch (const std::exception& e) {
      problem = std::string("unexpected exception: ") + e.what();
    } catch (...) {
      problem = "unexpected non-standard exception";
    }
    if (problem.empty()) {
      ++passed;
    } else {
      ++failed;
      std::printf("FAIL %s\n  %s\n", test.name, problem.c_str());
    }
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
