// What every min-cost-flow method does with the input before solving (private header).
//
// The validation, then the supply balance and the int64 bounds behind MinCostFlowStatus::kOverflow: the total
// supply, the largest arc cost, and upper bounds on the total cost and on the total flow
// through the arcs (each arc carries at most min(capacity, total supply)). Sums saturate just
// above INT64_MAX, so a caller compares them with INT64_MAX without wrapping.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "spare_fast/graph.hpp"
#include "spare_fast/network_simplex.hpp"
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

// The opening every method shares: validates the input (throws, naming the culprit), sizes
// result.flow to the arcs (all zero) and computes the totals. Returns false, with
// result.status set, when there is nothing to solve: kUnbalanced supplies, or kOverflow when
// the total supply, the cost bound or the method's own bound (extra_bound(totals), e.g. on its
// node potentials) exceeds INT64_MAX. The caller then returns result as it is.
template <class ExtraBound>
bool start_min_cost_flow(std::int64_t n_nodes, Span<std::int32_t> tail, Span<std::int32_t> head,
                         Span<std::int64_t> capacity, Span<std::int64_t> cost,
                         Span<std::int64_t> supply, ExtraBound extra_bound,
                         MinCostFlowResult& result, FlowTotals& totals) {
  validate_min_cost_flow(n_nodes, tail, head, capacity, cost, supply);
  result.flow.assign(tail.size, 0);
  totals = flow_totals(capacity, cost, supply);
  if (!totals.balanced) {
    result.status = MinCostFlowStatus::kUnbalanced;
    return false;
  }
  const Wide i64_max = std::numeric_limits<std::int64_t>::max();
  if (totals.positive > i64_max || totals.cost_bound > i64_max || extra_bound(totals) > i64_max) {
    result.status = MinCostFlowStatus::kOverflow;
    return false;
  }
  return true;
}

}  // namespace spare_fast::detail
