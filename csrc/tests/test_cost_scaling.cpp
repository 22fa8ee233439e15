// Unit tests of cost scaling, no Python and no framework: on small random networks (costs and
// capacities up to 2^40, infeasible and unbalanced supplies) and on medium ones (many refines,
// relabels and price updates) it must agree with the primal-dual method in status, cost and
// flow value, and an optimal flow must be feasible; kAuto sends large few-terminal networks
// to it; its own overflow bound reports kOverflow.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <vector>

#include "flow_networks.hpp"
#include "harness.hpp"
#include "spare_fast/graph.hpp"
#include "spare_fast/network_simplex.hpp"

namespace sf = spare_fast;
using flow_networks::check_against_primal_dual;
using flow_networks::draw;
using harness::span;

namespace {

void test_random_against_primal_dual() {
  std::mt19937_64 rng(20261203);
  for (int it = 0; it < 3000; ++it) {
    check_against_primal_dual(sf::cost_scaling, flow_networks::small(rng), true);
  }
}

// Hundreds of nodes: several refines, partial augmentations, relabels and price updates.
void test_medium_against_primal_dual() {
  std::mt19937_64 rng(11);
  for (int it = 0; it < 8; ++it) {
    const std::int64_t cost_hi = it % 3 == 2 ? 1LL << 30 : 10000;
    const std::int64_t supply_hi = it % 2 ? 30000 : 3000;  // the odd ones cannot all be met
    check_against_primal_dual(sf::cost_scaling, flow_networks::medium(rng, 3, cost_hi, supply_hi),
                              true);
  }
}

// A 256 x 256 grid, one source in a corner and one sink in the opposite one: kAuto gives it to
// cost scaling (2^16 nodes, 2 terminals); same answer as the simplex. Then the bound.
void test_auto_and_overflow() {
  const std::int32_t side = 256;
  std::vector<std::int32_t> tail;
  std::vector<std::int32_t> head;
  std::vector<std::int64_t> cap;
  std::vector<std::int64_t> cost;
  std::mt19937_64 rng(3);
  for (std::int32_t r = 0; r < side; ++r) {
    for (std::int32_t c = 0; c < side; ++c) {
      const std::int32_t v = r * side + c;
      if (c + 1 < side) {
        tail.insert(tail.end(), {v, v + 1});
        head.insert(head.end(), {v + 1, v});
      }
      if (r + 1 < side) {
        tail.insert(tail.end(), {v, v + side});
        head.insert(head.end(), {v + side, v});
      }
    }
  }
  for (std::size_t a = 0; a < tail.size(); ++a) {
    cap.push_back(1 + draw(rng, 50));
    cost.push_back(1 + draw(rng, 1000));
  }
  std::vector<std::int64_t> supply(static_cast<std::size_t>(side) * side, 0);
  supply.front() = 40;  // the corners' two arcs may hold less: then kInfeasible for both
  supply.back() = -40;
  const auto a = sf::min_cost_flow(side * side, span(tail), span(head), span(cap), span(cost),
                                   span(supply), sf::MinCostFlowMethod::kAuto);
  const auto ns = sf::network_simplex(side * side, span(tail), span(head), span(cap), span(cost),
                                      span(supply));
  CHECK(a.status == ns.status && a.total_cost == ns.total_cost);
  CHECK(a.flow_value == ns.flow_value && a.flow_value > 0);

  // 16 (n + 2)^2 (max cost + 1) > 2^63 with n = 4096 and costs 2^36.
  const std::int32_t n = 4096;
  std::vector<std::int32_t> t2;
  std::vector<std::int32_t> h2;
  for (std::int32_t v = 0; v + 1 < n; ++v) {
    t2.push_back(v);
    h2.push_back(v + 1);
  }
  const std::vector<std::int64_t> ones(t2.size(), 1);
  const std::vector<std::int64_t> big(t2.size(), 1LL << 36);
  std::vector<std::int64_t> b2(static_cast<std::size_t>(n), 0);
  b2.front() = 1;
  b2.back() = -1;
  const auto cs = sf::cost_scaling(n, span(t2), span(h2), span(ones), span(big), span(b2));
  CHECK(cs.status == sf::MinCostFlowStatus::kOverflow && cs.total_cost == 0);
  const auto via = sf::min_cost_flow(n, span(t2), span(h2), span(ones), span(big), span(b2),
                                     sf::MinCostFlowMethod::kCostScaling);
  CHECK(via.status == sf::MinCostFlowStatus::kOverflow);
  bool threw = false;
  const std::vector<std::int64_t> bad(t2.size(), -1);
  try {
    sf::cost_scaling(n, span(t2), span(h2), span(ones), span(bad), span(b2));
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  CHECK(threw);
}

}  // namespace

int main() {
  test_random_against_primal_dual();
  test_medium_against_primal_dual();
  test_auto_and_overflow();
  return harness::summary("test_cost_scaling");
}
