// The C ABI's documented error codes (spare_fast/c_api.h), one case each, and that a rejected
// call writes none of its outputs.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "harness.hpp"
#include "spare_fast/c_api.h"

namespace {

// A cyclic layout: group g holds types g, g+1, ..., g+r-1 (mod n), n types in all.
std::vector<std::int32_t> cyclic(std::int32_t n, std::int32_t r) {
  std::vector<std::int32_t> stacks(static_cast<std::size_t>(n) * static_cast<std::size_t>(r));
  for (std::int32_t g = 0; g < n; ++g) {
    for (std::int32_t l = 0; l < r; ++l) {
      stacks[static_cast<std::size_t>(g * r + l)] = (g + l) % n;
    }
  }
  return stacks;
}

bool error_mentions(const char* needle) {
  return std::string(spf_last_error()).find(needle) != std::string::npos;
}

void solve_with_a_short_assignment_buffer() {
  const std::int32_t n = 6, r = 2;
  const std::vector<std::int32_t> stacks = cyclic(n, r);
  std::vector<std::uint8_t> alive(static_cast<std::size_t>(n), 1);
  alive[1] = 0;
  // n types: a buffer of n - 1 is one short; its contents and the other outputs stay as they were.
  std::vector<std::int32_t> assignment(static_cast<std::size_t>(n - 1), 77);
  std::vector<std::int32_t> stacks_out(stacks.size(), 77);
  spf_decision decision;
  std::memset(&decision, 0xAB, sizeof decision);
  spf_decision untouched;
  std::memcpy(&untouched, &decision, sizeof decision);
  const int rc = spf_solve(stacks.data(), n, r, alive.data(), nullptr, assignment.data(), n - 1,
                           stacks_out.data(), &decision);
  CHECK(rc == SPF_ERROR_BUFFER_TOO_SMALL);
  CHECK(error_mentions("assignment_len = 5"));
  CHECK(error_mentions("n_types = 6"));
  for (std::int32_t v : assignment) CHECK(v == 77);
  for (std::int32_t v : stacks_out) CHECK(v == 77);
  CHECK(std::memcmp(&decision, &untouched, sizeof decision) == 0);

  // The same call with a buffer of exactly n types succeeds and fills it.
  assignment.assign(static_cast<std::size_t>(n), 77);
  CHECK(spf_solve(stacks.data(), n, r, alive.data(), nullptr, assignment.data(), n,
                  stacks_out.data(), &decision) == SPF_SUCCESS);
  CHECK(decision.status == SPF_STATUS_OK);
  for (std::int32_t t = 0; t < n; ++t) {
    const std::int32_t g = assignment[static_cast<std::size_t>(t)];
    CHECK(g >= 0 && g < n && g != 1);
  }
}

void solve_reports_the_other_codes() {
  const std::int32_t n = 6, r = 2;
  const std::vector<std::int32_t> stacks = cyclic(n, r);
  const std::vector<std::uint8_t> alive(static_cast<std::size_t>(n), 1);
  CHECK(spf_solve(nullptr, n, r, alive.data(), nullptr, nullptr, 0, nullptr, nullptr) ==
        SPF_ERROR_NULL_POINTER);
  CHECK(spf_solve(stacks.data(), n, r, nullptr, nullptr, nullptr, 0, nullptr, nullptr) ==
        SPF_ERROR_NULL_POINTER);
  CHECK(spf_solve(stacks.data(), 0, r, alive.data(), nullptr, nullptr, 0, nullptr, nullptr) ==
        SPF_ERROR_INVALID_ARGUMENT);
  std::vector<std::int32_t> bad = stacks;
  bad[3] = bad[2];  // group 1 would hold one type twice
  CHECK(spf_solve(bad.data(), n, r, alive.data(), nullptr, nullptr, 0, nullptr, nullptr) ==
        SPF_ERROR_INVALID_ARGUMENT);
  // No assignment buffer at all is allowed, whatever assignment_len says.
  CHECK(spf_solve(stacks.data(), n, r, alive.data(), nullptr, nullptr, 0, nullptr, nullptr) ==
        SPF_SUCCESS);
}

}  // namespace

int main() {
  solve_with_a_short_assignment_buffer();
  solve_reports_the_other_codes();
  return harness::summary("test_c_api");
}
