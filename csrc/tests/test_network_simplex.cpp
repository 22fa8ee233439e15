// Unit tests of the network simplex, no Python and no framework: on small random networks
// (costs and capacities up to 2^40, infeasible and unbalanced supplies) it must agree with the
// primal-dual method in status, cost and flow value, and its flow must be feasible.
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
  std::mt19937_64 rng(20261201);
  for (int it = 0; it < 3000; ++it) {
    check_against_primal_dual(sf::network_simplex, flow_networks::small(rng));
  }
}

// Networks large enough for thousands of pivots, so that the periodic renumbering of the
// nodes, the potential drift and the crash basis (many transshipment nodes) all take part.
void test_medium_against_primal_dual() {
  std::mt19937_64 rng(7);
  for (int it = 0; it < 6; ++it) {
    const std::int64_t cost_hi = it % 3 == 2 ? 1LL << 40 : 10000;
    const std::int64_t supply_hi = 3000;
    check_against_primal_dual(sf::network_simplex,
                              flow_networks::medium(rng, 4, cost_hi, supply_hi));
  }
}

void test_dispatch_and_validation() {
  const std::vector<std::int32_t> tail{0, 0, 1};
  const std::vector<std::int32_t> head{2, 1, 2};
  const std::vector<std::int64_t> cap{1, 5, 5};
  const std::vector<std::int64_t> cost{3, 1, 1};
  const std::vector<std::int64_t> supply{2, 0, -2};
  for (const auto method :
       {sf::MinCostFlowMethod::kAuto, sf::MinCostFlowMethod::kSuccessiveShortestPaths,
        sf::MinCostFlowMethod::kNetworkSimplex}) {
    const auto r = sf::min_cost_flow(3, span(tail), span(head), span(cap), span(cost),
                                     span(supply), method);
    CHECK(r.status == sf::MinCostFlowStatus::kOptimal && r.total_cost == 4);
  }
  const std::vector<std::int64_t> bad_cost{3, -1, 1};
  bool threw = false;
  try {
    sf::network_simplex(3, span(tail), span(head), span(cap), span(bad_cost), span(supply));
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  CHECK(threw);
}

// k disjoint paths 0 -> .. -> 1 of lengths 1..k, unit costs and capacities, supply k: the
// primal-dual method needs k phases, so a budget of fewer gives up and kAuto hands over.
void test_phase_budget_and_auto_hand_over() {
  const int k = 40;
  std::vector<std::int32_t> tail;
  std::vector<std::int32_t> head;
  std::int32_t next = 2;
  for (int len = 1; len <= k; ++len) {
    std::int32_t prev = 0;
    for (int i = 1; i < len; ++i) {
      tail.push_back(prev);
      head.push_back(next);
      prev = next++;
    }
    tail.push_back(prev);
    head.push_back(1);
  }
  const std::vector<std::int64_t> ones(tail.size(), 1);
  std::vector<std::int64_t> supply(static_cast<std::size_t>(next), 0);
  supply[0] = k;
  supply[1] = -k;
  sf::MinCostFlowResult r;
  CHECK(!sf::detail::min_cost_flow_within(next, span(tail), span(head), span(ones), span(ones),
                                          span(supply), k - 2, r));
  CHECK(sf::detail::min_cost_flow_within(next, span(tail), span(head), span(ones), span(ones),
                                         span(supply), k, r));
  CHECK(r.status == sf::MinCostFlowStatus::kOptimal && r.total_cost == k * (k + 1) / 2);
  const auto a = sf::min_cost_flow(next, span(tail), span(head), span(ones), span(ones),
                                   span(supply), sf::MinCostFlowMethod::kAuto);
  CHECK(a.status == sf::MinCostFlowStatus::kOptimal && a.total_cost == k * (k + 1) / 2);
}

// The cost-0 routing: answers when the cost-0 arcs carry every unit, declines otherwise, and
// reports the opening statuses like every method.
void test_zero_cost_flow() {
  // 0 -> 1 -> 3 free (capacity 2), 0 -> 2 -> 3 at cost 5.
  const std::vector<std::int32_t> tail{0, 1, 0, 2};
  const std::vector<std::int32_t> head{1, 3, 2, 3};
  const std::vector<std::int64_t> cost{0, 0, 5, 5};
  const std::vector<std::int64_t> cap{2, 2, 9, 9};
  sf::MinCostFlowResult r;
  const std::vector<std::int64_t> two{2, 0, 0, -2};
  CHECK(sf::detail::zero_cost_flow(4, span(tail), span(head), span(cap), span(cost), span(two),
                                   r));
  CHECK(r.status == sf::MinCostFlowStatus::kOptimal && r.total_cost == 0 && r.flow_value == 2);
  CHECK((r.flow == std::vector<std::int64_t>{2, 2, 0, 0}));
  const std::vector<std::int64_t> three{3, 0, 0, -3};
  CHECK(!sf::detail::zero_cost_flow(4, span(tail), span(head), span(cap), span(cost),
                                    span(three), r));
  const auto a = sf::min_cost_flow(4, span(tail), span(head), span(cap), span(cost), span(three),
                                   sf::MinCostFlowMethod::kAuto);
  CHECK(a.status == sf::MinCostFlowStatus::kOptimal && a.total_cost == 10);
  const std::vector<std::int64_t> unbalanced{3, 0, 0, -2};
  CHECK(sf::detail::zero_cost_flow(4, span(tail), span(head), span(cap), span(cost),
                                   span(unbalanced), r));
  CHECK(r.status == sf::MinCostFlowStatus::kUnbalanced);
  // kAuto's scan for cost-0 arcs skips ids out of range; the validation still names them.
  const std::vector<std::int32_t> bad_head{1, 7, 2, 3};
  bool threw = false;
  try {
    sf::min_cost_flow(4, span(tail), span(bad_head), span(cap), span(cost), span(two),
                      sf::MinCostFlowMethod::kAuto);
  } catch (const std::out_of_range&) {
    threw = true;
  }
  CHECK(threw);
}

}  // namespace

int main() {
  test_phase_budget_and_auto_hand_over();
  test_zero_cost_flow();
  test_random_against_primal_dual();
  test_medium_against_primal_dual();
  test_dispatch_and_validation();
  return harness::summary("test_network_simplex");
}
