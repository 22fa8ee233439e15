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

void check_against_primal_dual(std::int64_t n, const std::vector<std::int32_t>& tail,
                               const std::vector<std::int32_t>& head,
                               const std::vector<std::int64_t>& cap,
                               const std::vector<std::int64_t>& cost,
                               const std::vector<std::int64_t>& supply) {
  const auto ssp = sf::min_cost_flow(n, span(tail), span(head), span(cap), span(cost),
                                     span(supply));
  const auto cs = sf::cost_scaling(n, span(tail), span(head), span(cap), span(cost),
                                   span(supply));
  if (cs.status == sf::MinCostFlowStatus::kOverflow) {
    CHECK(cs.flow == std::vector<std::int64_t>(tail.size(), 0));  // its own, larger bound
    return;
  }
  CHECK(ssp.status == cs.status);
  CHECK(ssp.total_cost == cs.total_cost);
  CHECK(ssp.flow_value == cs.flow_value);
  if (cs.status != sf::MinCostFlowStatus::kOptimal) return;
  std::vector<std::int64_t> net(static_cast<std::size_t>(n), 0);
  for (std::size_t a = 0; a < tail.size(); ++a) {
    CHECK(cs.flow[a] >= 0 && cs.flow[a] <= cap[a]);
    net[static_cast<std::size_t>(tail[a])] += cs.flow[a];
    net[static_cast<std::size_t>(head[a])] -= cs.flow[a];
  }
  CHECK(net == supply);
}

void test_random_against_primal_dual() {
  std::mt19937_64 rng(20261203);
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

// Hundreds of nodes: several refines, partial augmentations, relabels and price updates.
void test_medium_against_primal_dual() {
  std::mt19937_64 rng(11);
  for (int it = 0; it < 8; ++it) {
    const std::int64_t n = 300 + draw(rng, 300);
    const std::int64_t m = n * (3 + draw(rng, 8));
    const std::int64_t cost_hi = it % 3 == 2 ? 1LL << 30 : 10000;
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
    for (std::int64_t k = 0; k < 20; ++k) {  // the odd iterations cannot all be met
      const auto u = static_cast<std::size_t>(draw(rng, n));
      const auto v = static_cast<std::size_t>(draw(rng, n));
      const std::int64_t b = 1 + draw(rng, it % 2 ? 30000 : 3000);
      supply[u] += b;
      supply[v] -= b;
    }
    check_against_primal_dual(n, tail, head, cap, cost, supply);
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
  if (g_failures != 0) {
    std::fprintf(stderr, "%d check(s) failed\n", g_failures);
    return EXIT_FAILURE;
  }
  std::puts("test_cost_scaling: all checks passed");
  return EXIT_SUCCESS;
}
