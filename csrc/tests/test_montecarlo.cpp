// Standalone check of the Monte Carlo kernel without Python: the cyclic layout with r = N never
// wipes out before the last failure, r = 1 wipes out at the first, results repeat by seed and
// do not depend on how the trials are split, and bad input throws before any work.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "harness.hpp"
#include "spare_fast/montecarlo.hpp"

using spare_fast::Span;
using spare_fast::survived_failures;

namespace {

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
    CHECK(w == 6);  // r = N survives N - 1 failures
  const auto single = cyclic(7, 1);
  for (auto w : survived_failures(Span<std::int32_t>(single.data(), single.size()), 7, 1, 7, 1, 0, 20))
    CHECK(w == 0);  // r = 1 survives no failure

  const auto s = cyclic(50, 4);
  const Span<std::int32_t> view(s.data(), s.size());
  const auto all = survived_failures(view, 50, 4, 50, 42, 0, 30);
  const auto again = survived_failures(view, 50, 4, 50, 42, 0, 30);
  CHECK(all == again);  // same seed, same results
  const auto head = survived_failures(view, 50, 4, 50, 42, 0, 10);
  const auto tail = survived_failures(view, 50, 4, 50, 42, 10, 20);
  bool split_ok = head.size() == 10 && tail.size() == 20;
  for (std::size_t i = 0; split_ok && i < 30; ++i)
    split_ok = all[i] == (i < 10 ? head[i] : tail[i - 10]);
  CHECK(split_ok);  // chunked trials equal one run
  CHECK(survived_failures(view, 50, 4, 50, 42, 0, 30, 3) == all);  // threads do not change results
  bool in_range = true;
  for (auto w : all) in_range = in_range && w >= 3 && w < 50;
  CHECK(in_range);  // a 4-run needs at least 4 failures

  auto bad = s;
  bad[5] = 50;
  EXPECT_THROW(std::out_of_range, survived_failures(harness::span(bad), 50, 4, 50, 0, 0, 1),
               "stacks[1, 1] = 50 is not in [0, 50)");
  bad = s;
  bad[1] = bad[0];
  EXPECT_THROW(std::invalid_argument, survived_failures(harness::span(bad), 50, 4, 50, 0, 0, 1),
               "repeats");
  // Trial ids must stay representable; a one-cell input with a huge n_types sizes nothing.
  EXPECT_THROW(std::invalid_argument,
               survived_failures(view, 50, 4, 50, 0, INT64_MAX - 1, 2), "first_trial");
  const std::vector<std::int32_t> one = {0};
  EXPECT_THROW(std::invalid_argument,
               survived_failures(harness::span(one), 1, 1, INT32_MAX, 0, 0, 1), "n_types");
  // More threads than trials or than the cap give the same numbers.
  CHECK(survived_failures(view, 50, 4, 50, 42, 0, 30, 5000) == all);
  return harness::summary("test_montecarlo");
}
