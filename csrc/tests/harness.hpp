// The one test harness of the C++ tests: no framework, three macros and a summary.
//
//   CHECK(cond)                   counts a failure and prints the line when cond is false;
//   EXPECT_THROW(E, expr, needle) expects expr to throw E with `needle` in its message;
//   return harness::summary("name") from main: prints the result, returns the exit status.
// Every test binary runs under ASan + UBSan in CI.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "spare_fast/types.hpp"

namespace harness {

inline int& failures() {
  static int n = 0;
  return n;
}

template <class E>
void expect_throw(const std::function<void()>& f, const std::string& needle, const char* file,
                  int line) {
  try {
    f();
  } catch (const E& e) {
    if (std::string(e.what()).find(needle) == std::string::npos) {
      std::fprintf(stderr, "%s:%d: message '%s' lacks '%s'\n", file, line, e.what(),
                   needle.c_str());
      ++failures();
    }
    return;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s:%d: wrong exception type: %s\n", file, line, e.what());
    ++failures();
    return;
  }
  std::fprintf(stderr, "%s:%d: no exception (expected one naming '%s')\n", file, line,
               needle.c_str());
  ++failures();
}

inline int summary(const char* name) {
  if (failures() != 0) {
    std::fprintf(stderr, "%s: %d check(s) failed\n", name, failures());
    return EXIT_FAILURE;
  }
  std::printf("%s: all checks passed\n", name);
  return EXIT_SUCCESS;
}

template <class T>
spare_fast::Span<T> span(const std::vector<T>& v) {
  return spare_fast::Span<T>(v.data(), v.size());
}

}  // namespace harness

#define CHECK(cond)                                                               \
  do {                                                                            \
    if (!(cond)) {                                                                \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++harness::failures();                                                      \
    }                                                                             \
  } while (0)

#define EXPECT_THROW(E, expr, needle) \
  harness::expect_throw<E>([&] { (void)(expr); }, needle, __FILE__, __LINE__)
