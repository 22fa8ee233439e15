// The controller's relabelling near saturation: every distance label set afresh to
// min(distance to the sink, 2) by a backward search from the groups with room. Not installed.
#pragma once

#include <cstdint>
#include <vector>

#include "controller_state.hpp"

namespace spare_fast::detail {

class Relabel {
 public:
  // Sets every label of st to min(distance to the sink, 2), valid at depth s, in time
  // O(N + T) plus the nodes within distance 1 of the groups with room. Only before a
  // failure's first search at s (every assigned type then costs 0).
  void run(State& st, std::int32_t s);

 private:
  // The nodes found at distance 0 and at distance 1.
  std::vector<std::int32_t> zero_;
  std::vector<std::int32_t> one_;
};

}  // namespace spare_fast::detail
