// Standalone check of the Monte Carlo kernel without Python: the cyclic layout with r = N never
// wipes out before the last failure, r = 1 wipes out at the first, results repeat by seed and
// do not depend on how the trials are split, and bad input throws before any work.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "spare_fast/montecarlo.hpp"

using spare_fast::Span;
using spare_fast::survived_failures;

namespace {

int failures = 0;

void expect(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s\n", what);
    ++failures;
  }
}

std::vector<std::int32_t> cyclic(std::int32_t n, std::int32_t r) {
  std::vector<std::int32_t> s;
  for (std::int32_t g = 0; g < n; ++g)
    for (std::int32_t l = 0; l < r; ++l) s.push_back((g + l) % n);
  return s;
}

}  // namespace

int main() {
  const auto full = cyclic(7, 7);
  for (auto w : survived_failures(Span<std::int32_t>(full.data(), full.size()), 7, 7, 7, 1, 0, 20))
    expect(w == 6, "r = N survives N - 1 failures");
  const auto single = cyclic(7, 1);
  for (auto w : survived_failures(Span<std::int32_t>(single.data(), single.size()), 7, 1, 7, 1, 0, 20))
    expect(w == 0, "r = 1 survives no failure");

  const auto s = cyclic(50, 4);
  const Span<std::int32_t> view(s.data(), s.size());
  const auto all = survived_failures(view, 50, 4, 50, 42, 0, 30);
  const auto again = survived_failures(view, 50, 4, 50, 42, 0, 30);
  expect(all == again, "same seed, same results");
  const auto head = survived_failures(view, 50, 4, 50, 42, 0, 10);
  const auto tail = survived_failures(view, 50, 4, 50, 42, 10, 20);
  bool split_ok = head.size() == 10 && tail.size() == 20;
  for (std::size_t i = 0; split_ok && i < 30; ++i)
    split_ok = all[i] == (i < 10 ? head[i] : tail[i - 10]);
  expect(split_ok, "chunked trials equal one run");
  expect(survived_failures(view, 50, 4, 50, 42, 0, 30, 3) == all, "threads do not change results");
  bool in_range = true;
  for (auto w : all) in_range = in_range && w >= 3 && w < 50;
  expect(in_range, "a 4-run needs at least 4 failures");

  auto bad = s;
  bad[5] = 50;
  bool threw = false;
  try {
    survived_failures(Span<std::int32_t>(bad.data(), bad.size()), 50, 4, 50, 0, 0, 1);
  } catch (const std::out_of_range&) {
    threw = true;
  }
  expect(threw, "type id out of range throws out_of_range");
  bad = s;
  bad[1] = bad[0];
  threw = false;
  try {
    survived_failures(Span<std::int32_t>(bad.data(), bad.size()), 50, 4, 50, 0, 0, 1);
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  expect(threw, "repeated type in a stack throws invalid_argument");
  if (failures == 0) std::puts("test_montecarlo: ok");
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
