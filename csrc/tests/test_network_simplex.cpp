// Unit tests of the network simplex, no Python and no framework: on small random networks
// (costs and capacities up to 2^40, infeasible and unbalanced supplies) it must agree with the
// primal-dual method in status, cost and flow value, and its flow must be feasible.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <vector>

#include "spare_fast/graph.hpp"
#include "spare_fast/network_simplex.hpp"

namespace sf = spare_fast;

namespace {

int g_failures = 0;

#define CHECK(cond)                                                                  \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++g_failures;                                                                  \
    }                                                                                \
  } while (0)

template <class T>
sf::Span<T> span(const std::vector<T>& v) {
  return sf::Span<T>(v.data(), v.size());
}

std::int64_t draw(std::mt19937_64& rng, std::int64_t hi) {  // uniform in [0, hi)
  return static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi));
}

// The network simplex agrees with the primal-dual method in status, cost and flow value, and
// an optimal flow respects every capacity and conserves every node's supply.
void check_against_primal_dual(std::int64_t n, const std::vector<std::int32_t>& tail,
                               const std::vector<std::int32_t>& head,
                               const std::vector<std::int64_t>& cap,
                               const std::vector<std::int64_t>& cost,
                               const std::vector<std::int64_t>& supply) {
  const auto ssp = sf::min_cost_flow(n, span(tail), span(head), span(cap), span(cost),
                                     span(supply));
  const auto ns = sf::network_simplex(n, span(tail), span(head), span(cap), span(cost),
                                      span(supply));
  CHECK(ssp.status == ns.status);
  CHECK(ssp.total_cost == ns.total_cost);
  CHECK(ssp.flow_value == ns.flow_value);
  if (ns.status != sf::MinCostFlowStatus::kOptimal) return;
  std::vector<std::int64_t> net(static_cast<std::size_t>(n), 0);
  for (std::size_t a = 0; a < tail.size(); ++a) {
    CHECK(ns.flow[a] >= 0 && ns.flow[a] <= cap[a]);
    net[static_cast<std::size_t>(tail[a])] += ns.flow[a];
    net[static_cast<std::size_t>(head[a])] -= ns.flow[a];
  }
  CHECK(net == supply);
}

void test_random_against_primal_dual() {
  std::mt19937_64 rng(20261201);
  for (int it = 0; it < 3000; ++it) {
    const std::int64_t n = draw(rng, 12);
    const std::int64_t m = n > 0 ? draw(rng, 40) : 0;
    const std::int64_t cost_hi = draw(rng, 3) == 0 ? 2 : (draw(rng, 2) ? 100 : 1LL << 40);
    std::vector<std::int32_t> tail(static_cast<std::size_t>(m));
    std::vector<std::int32_t> head(tail.size());
    std::vector<std::int64_t> cap(tail.size());
    std::vector<std::int64_t> cost(tail.size());
    std::vector<std::int64_t> supply(static_cast<std::size_t>(n), 0);
    for (std::size_t a = 0; a < tail.size(); ++a) {
      tail[a] = static_cast<std::int32_t>(draw(rng, n));
      head[a] = static_cast<std::int32_t>(draw(rng, n));
      cap[a] = draw(rng, 5) == 0 ? draw(rng, 1LL << 40) : draw(rng, 7);
      cost[a] = draw(rng, cost_hi);
    }
    for (std::int64_t k = n >= 2 ? draw(rng, 5) : 0; k > 0; --k) {
      const auto u = static_cast<std::size_t>(draw(rng, n));
      const auto v = static_cast<std::size_t>(draw(rng, n));
      const std::int64_t b = draw(rng, 6) == 0 ? draw(rng, 1LL << 40) : 1 + draw(rng, 8);
      supply[u] += b;
      supply[v] -= b;
    }
    if (n > 0 && draw(rng, 15) == 0) supply[0] += 1;
    check_against_primal_dual(n, tail, head, cap, cost, supply);
  }
}

// Networks large enough for thousands of pivots, so that the periodic renumbering of the
// nodes, the potential drift and the crash basis (many transshipment nodes) all take part.
void test_medium_against_primal_dual() {
  std::mt19937_64 rng(7);
  for (int it = 0; it < 6; ++it) {
    const std::int64_t n = 300 + draw(rng, 300);
    const std::int64_t m = n * (4 + draw(rng, 8));
    const std::int64_t cost_hi = it % 3 == 2 ? 1LL << 40 : 10000;
    std::vector<std::int32_t> tail(static_cast<std::size_t>(m));
    std::vector<std::int32_t> head(tail.size());
    std::vector<std::int64_t> cap(tail.size());
    std::vector<std::int64_t> cost(tail.size());
    std::vector<std::int64_t> supply(static_cast<std::size_t>(n), 0);
    for (std::size_t a = 0; a < tail.size(); ++a) {
      tail[a] = static_cast<std::int32_t>(draw(rng, n));
      head[a] = static_cast<std::int32_t>(draw(rng, n));
      cap[a] = 1 + draw(rng, 1000);
      cost[a] = draw(rng, cost_hi);
    }
    for (std::int64_t k = 0; k < 20; ++k) {  // 20 sources and sinks, the rest transshipment
      const auto u = static_cast<std::size_t>(draw(rng, n));
      const auto v = static_cast<std::size_t>(draw(rng, n));
      const std::int64_t b = 1 + draw(rng, 3000);
      supply[u] += b;
      supply[v] -= b;
    }
    check_against_primal_dual(n, tail, head, cap, cost, supply);
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
  if (g_failures != 0) {
    std::fprintf(stderr, "%d check(s) failed\n", g_failures);
    return EXIT_FAILURE;
  }
  std::puts("test_network_simplex: all checks passed");
  return EXIT_SUCCESS;
}
