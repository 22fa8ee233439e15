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

}  // namespace

int main() {
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
