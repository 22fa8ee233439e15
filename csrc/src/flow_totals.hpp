// What both min-cost-flow methods compute from the input before solving (private header).
//
// The supply balance and the int64 bounds behind MinCostFlowStatus::kOverflow: the total
// supply, the largest arc cost, and upper bounds on the total cost and on the total flow
// through the arcs (each arc carries at most min(capacity, total supply)). Sums saturate just
// above INT64_MAX, so a caller compares them with INT64_MAX without wrapping.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "spare_fast/validate.hpp"

namespace spare_fast::detail {

using Wide = __int128;  // overflow checks only (GCC and Clang)

struct FlowTotals {
  bool balanced = true;  // the supplies sum to zero
  Wide positive = 0;     // total supply
  Wide max_cost = 0;     // largest arc cost
  Wide cost_bound = 0;   // >= the cost of any feasible flow (saturated)
  Wide flow_bound = 0;   // total supply + sum over arcs of what each can carry (saturated)
};

inline FlowTotals flow_totals(Span<std::int64_t> capacity, Span<std::int64_t> cost,
                              Span<std::int64_t> supply) {
  FlowTotals t;
  Wide negative = 0;
  for (std::size_t v = 0; v < supply.size; ++v) {
    (supply[v] > 0 ? t.positive : negative) += supply[v];
  }
  t.balanced = t.positive + negative == 0;
  const Wide i64_max = std::numeric_limits<std::int64_t>::max();
  t.flow_bound = t.positive;
  for (std::size_t a = 0; a < cost.size; ++a) {
    t.max_cost = cost[a] > t.max_cost ? cost[a] : t.max_cost;
    const Wide carried = capacity[a] < t.positive ? capacity[a] : t.positive;
    if (t.cost_bound <= i64_max) t.cost_bound += carried * cost[a];  // each term < 2^126
    if (t.flow_bound <= i64_max) t.flow_bound += carried;
  }
  return t;
}

}  // namespace spare_fast::detail
