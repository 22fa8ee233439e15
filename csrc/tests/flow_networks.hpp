// Random min-cost-flow networks and the check against the primal-dual method, shared by the
// tests of the network simplex and of cost scaling (test_network_simplex.cpp,
// test_cost_scaling.cpp). Checks count through harness.hpp's CHECK.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "harness.hpp"
#include "spare_fast/graph.hpp"
#include "spare_fast/network_simplex.hpp"

namespace flow_networks {

struct Network {
  std::int64_t n = 0;
  std::vector<std::int32_t> tail, head;
  std::vector<std::int64_t> cap, cost, supply;
};

inline std::int64_t draw(std::mt19937_64& rng, std::int64_t hi) {  // uniform in [0, hi)
  return static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi));
}

// n nodes with m arcs between random nodes (capacity cap_of(rng), cost in [0, cost_hi)).
template <class CapOf>
Network arcs(std::mt19937_64& rng, std::int64_t n, std::int64_t m, std::int64_t cost_hi,
             CapOf cap_of) {
  Network g;
  g.n = n;
  const auto size = static_cast<std::size_t>(m);
  g.tail.resize(size);
  g.head.resize(size);
  g.cap.resize(size);
  g.cost.resize(size);
  g.supply.assign(static_cast<std::size_t>(n), 0);
  for (std::size_t a = 0; a < size; ++a) {
    g.tail[a] = static_cast<std::int32_t>(draw(rng, n));
    g.head[a] = static_cast<std::int32_t>(draw(rng, n));
    g.cap[a] = cap_of(rng);
    g.cost[a] = draw(rng, cost_hi);
  }
  return g;
}

// Up to 11 nodes and 39 arcs; costs, capacities and supplies up to 2^40; one in 15 unbalanced.
inline Network small(std::mt19937_64& rng) {
  const std::int64_t n = draw(rng, 12);
  const std::int64_t m = n > 0 ? draw(rng, 40) : 0;
  const std::int64_t cost_hi = draw(rng, 3) == 0 ? 2 : (draw(rng, 2) ? 100 : 1LL << 40);
  Network g = arcs(rng, n, m, cost_hi, [](std::mt19937_64& r) {
    return draw(r, 5) == 0 ? draw(r, 1LL << 40) : draw(r, 7);
  });
  for (std::int64_t k = n >= 2 ? draw(rng, 5) : 0; k > 0; --k) {
    const auto u = static_cast<std::size_t>(draw(rng, n));
    const auto v = static_cast<std::size_t>(draw(rng, n));
    const std::int64_t b = draw(rng, 6) == 0 ? draw(rng, 1LL << 40) : 1 + draw(rng, 8);
    g.supply[u] += b;
    g.supply[v] -= b;
  }
  if (n > 0 && draw(rng, 15) == 0) g.supply[0] += 1;
  return g;
}

// 300 to 599 nodes, arcs_lo to arcs_lo + 7 arcs per node (capacities 1..1000, costs below
// cost_hi), 20 source-sink pairs of 1..supply_hi units each, the other nodes transshipment.
inline Network medium(std::mt19937_64& rng, std::int64_t arcs_lo, std::int64_t cost_hi,
                      std::int64_t supply_hi) {
  const std::int64_t n = 300 + draw(rng, 300);
  const std::int64_t m = n * (arcs_lo + draw(rng, 8));
  Network g = arcs(rng, n, m, cost_hi, [](std::mt19937_64& r) { return 1 + draw(r, 1000); });
  for (std::int64_t k = 0; k < 20; ++k) {
    const auto u = static_cast<std::size_t>(draw(rng, n));
    const auto v = static_cast<std::size_t>(draw(rng, n));
    const std::int64_t b = 1 + draw(rng, supply_hi);
    g.supply[u] += b;
    g.supply[v] -= b;
  }
  return g;
}

using Solver = spare_fast::MinCostFlowResult (*)(
    std::int64_t, spare_fast::Span<std::int32_t>, spare_fast::Span<std::int32_t>,
    spare_fast::Span<std::int64_t>, spare_fast::Span<std::int64_t>,
    spare_fast::Span<std::int64_t>);

// `solve` agrees with the primal-dual method in status, cost and flow value, and an optimal
// flow respects every capacity and conserves every node's supply. With may_overflow, a
// kOverflow answer (a solver's own, larger bound) is accepted when its flow is all zero.
inline void check_against_primal_dual(Solver solve, const Network& g, bool may_overflow = false) {
  using harness::span;
  namespace sf = spare_fast;
  const auto ssp = sf::min_cost_flow(g.n, span(g.tail), span(g.head), span(g.cap), span(g.cost),
                                     span(g.supply));
  const auto got = solve(g.n, span(g.tail), span(g.head), span(g.cap), span(g.cost),
                         span(g.supply));
  if (may_overflow && got.status == sf::MinCostFlowStatus::kOverflow) {
    CHECK(got.flow == std::vector<std::int64_t>(g.tail.size(), 0));
    return;
  }
  CHECK(ssp.status == got.status);
  CHECK(ssp.total_cost == got.total_cost);
  CHECK(ssp.flow_value == got.flow_value);
  if (got.status != sf::MinCostFlowStatus::kOptimal) return;
  std::vector<std::int64_t> net(static_cast<std::size_t>(g.n), 0);
  for (std::size_t a = 0; a < g.tail.size(); ++a) {
    CHECK(got.flow[a] >= 0 && got.flow[a] <= g.cap[a]);
    net[static_cast<std::size_t>(g.tail[a])] += got.flow[a];
    net[static_cast<std::size_t>(g.head[a])] -= got.flow[a];
  }
  CHECK(net == g.supply);
}

}  // namespace flow_networks
