// Embedding the SPARe controller in a C++ scheduler, without Python.
//
// Builds a cyclic layout of N groups with redundancy r, fails groups in a fixed pseudo-random
// order until a wipe-out, and prints each decision's depth, moves and patch size.
// Usage: controller_example [N] [r]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>

#include "spare_fast/controller.hpp"

int main(int argc, char** argv) {
  const std::int32_t n = argc > 1 ? std::atoi(argv[1]) : 2000;
  const std::int32_t r = argc > 2 ? std::atoi(argv[2]) : 8;
  std::vector<std::int32_t> stacks(static_cast<std::size_t>(n) * static_cast<std::size_t>(r));
  for (std::int32_t g = 0; g < n; ++g)
    for (std::int32_t l = 0; l < r; ++l)
      stacks[static_cast<std::size_t>(g) * static_cast<std::size_t>(r) + static_cast<std::size_t>(l)] = (g + l) % n;

  spare_fast::Controller ctl({stacks.data(), stacks.size()}, n, r, {});
  std::vector<std::int32_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(7));

  std::int64_t total_moves = 0;
  double total_seconds = 0.0;
  std::int32_t depth = ctl.depth();
  for (std::size_t k = 0; k < order.size(); ++k) {
    const spare_fast::Decision d = ctl.fail({&order[k], 1});
    total_seconds += d.seconds;
    if (d.status == spare_fast::Status::kWipeout) {
      std::printf("failure %zu (group %d): WIPEOUT -> global restart\n", k + 1, order[k]);
      break;
    }
    total_moves += d.moves;
    if (d.depth != depth) {
      std::printf("failure %zu (group %d): depth %d -> %d, moves %lld, patch %zu\n", k + 1,
                  order[k], depth, d.depth, static_cast<long long>(d.moves), d.patch.size() / 2);
      depth = d.depth;
    }
  }
  std::printf("total moves %lld, mean decision %.2f us\n", static_cast<long long>(total_moves),
              1e6 * total_seconds / static_cast<double>(ctl.events()));
  const spare_fast::Decision d = ctl.restart();
  return d.status == spare_fast::Status::kOk && d.depth == 1 ? 0 : 1;
}
