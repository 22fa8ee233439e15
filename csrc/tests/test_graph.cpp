// Unit tests of the graph kernels, no Python and no framework: every kernel on valid input
// (checked against brute force or a slow textbook reference on small random instances) and on
// every kind of malformed input (checked for the exception type and the value it names).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness.hpp"
#include "spare_fast/graph.hpp"

namespace sf = spare_fast;
using I32 = std::vector<std::int32_t>;
using I64 = std::vector<std::int64_t>;

namespace {

using harness::span;

struct Csr {
  I32 indptr;
  I32 indices;
  std::int32_t n_right = 0;
};

Csr random_csr(std::mt19937& rng, int max_left, int max_right, int max_deg) {
  Csr g;
  const int n_left = static_cast<int>(rng() % static_cast<unsigned>(max_left + 1));
  g.n_right = static_cast<std::int32_t>(rng() % static_cast<unsigned>(max_right + 1));
  g.indptr.push_back(0);
  for (int u = 0; u < n_left; ++u) {
    const int deg = g.n_right == 0 ? 0 : static_cast<int>(rng() % static_cast<unsigned>(max_deg + 1));
    for (int k = 0; k < deg; ++k) {  // duplicates on purpose
      g.indices.push_back(static_cast<std::int32_t>(rng() % static_cast<unsigned>(g.n_right)));
    }
    g.indptr.push_back(static_cast<std::int32_t>(g.indices.size()));
  }
  return g;
}

// Maximum b-matching size by exhaustive search (tiny instances only).
int brute_b_matching(const Csr& g, const I64& cap) {
  const std::size_t n_left = g.indptr.size() - 1;
  I64 load(cap.size(), 0);
  std::function<int(std::size_t)> go = [&](std::size_t u) -> int {
    if (u == n_left) return 0;
    int best = go(u + 1);
    for (std::int32_t k = g.indptr[u]; k < g.indptr[u + 1]; ++k) {
      const auto j = static_cast<std::size_t>(g.indices[static_cast<std::size_t>(k)]);
      if (load[j] < cap[j]) {
        ++load[j];
        best = std::max(best, 1 + go(u + 1));
        --load[j];
      }
    }
    return best;
  };
  return go(0);
}

// Checks a (b-)matching is valid: edges exist, capacities respected. Returns its size.
int matching_size(const Csr& g, const I32& mate, const I64& cap) {
  I64 load(cap.size(), 0);
  int size = 0;
  CHECK(mate.size() + 1 == g.indptr.size());
  for (std::size_t u = 0; u < mate.size(); ++u) {
    if (mate[u] < 0) {
      CHECK(mate[u] == -1);
      continue;
    }
    bool edge = false;
    for (std::int32_t k = g.indptr[u]; k < g.indptr[u + 1]; ++k) {
      edge = edge || g.indices[static_cast<std::size_t>(k)] == mate[u];
    }
    CHECK(edge);
    ++load[static_cast<std::size_t>(mate[u])];
    ++size;
  }
  for (std::size_t j = 0; j < cap.size(); ++j) CHECK(load[j] <= cap[j]);
  return size;
}

// Every hopcroft_karp stage setting (Karp-Sipser start or first fit; single searches to the
// end, none, or `few` before the phases) reaches the maximum size `best`.
void check_every_stage(const Csr& g, int best, std::int64_t few) {
  const I64 ones(static_cast<std::size_t>(g.n_right), 1);
  for (const bool karp_sipser : {false, true}) {
    for (const std::int64_t budget : {std::int64_t{-1}, std::int64_t{0}, few}) {
      const I32 staged =
          sf::hopcroft_karp(span(g.indptr), span(g.indices), g.n_right, karp_sipser, budget);
      CHECK(matching_size(g, staged, ones) == best);
    }
  }
}

void test_hopcroft_karp_random() {
  std::mt19937 rng(1);
  for (int trial = 0; trial < 400; ++trial) {
    const Csr g = random_csr(rng, 7, 7, 4);
    const I32 mate = sf::hopcroft_karp(span(g.indptr), span(g.indices), g.n_right);
    const I64 ones(static_cast<std::size_t>(g.n_right), 1);
    const int best = brute_b_matching(g, ones);
    CHECK(matching_size(g, mate, ones) == best);
    // Every stage on its own: with the Karp-Sipser start (which drops the dead free vertices
    // before the phases), or with first fit and single searches to the end, none, or a few
    // before the phases.
    check_every_stage(g, best, 3);
  }
}

// Medium sparse random graphs (Poisson-like degrees around 1 to 5, duplicates), too large for
// brute force: every staged run reaches the size of the default one (checked against scipy
// by the Python tests). The Karp-Sipser start leaves free vertices both dead and live, and
// the phases after it skip the dead ones.
void test_hopcroft_karp_stages_agree() {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 60; ++trial) {
    Csr g;
    const int n_left = 200 + static_cast<int>(rng() % 1800);
    g.n_right = static_cast<std::int32_t>(n_left * (7 + static_cast<int>(rng() % 7)) / 10);
    const auto max_deg = static_cast<unsigned>(2 + rng() % 8);
    g.indptr.push_back(0);
    for (int u = 0; u < n_left; ++u) {
      const auto deg = static_cast<unsigned>(rng() % max_deg);
      for (unsigned k = 0; k < deg; ++k) {
        g.indices.push_back(static_cast<std::int32_t>(rng() % static_cast<unsigned>(g.n_right)));
      }
      // Rows of 300 entries (degrees past the start's one-byte counters), first and last:
      // the last ones find their neighbours all taken.
      if (trial % 10 == 0 && (u < 3 || u >= n_left - 3)) {
        for (int k = 0; k < 300; ++k) {
          g.indices.push_back(static_cast<std::int32_t>(rng() % 40));
        }
      }
      g.indptr.push_back(static_cast<std::int32_t>(g.indices.size()));
    }
    const I64 ones(static_cast<std::size_t>(g.n_right), 1);
    const int best =
        matching_size(g, sf::hopcroft_karp(span(g.indptr), span(g.indices), g.n_right), ones);
    check_every_stage(g, best, 50);
  }
}

void test_hopcroft_karp_edge_cases() {
  const I32 zero{0};
  const I32 none;
  CHECK(sf::hopcroft_karp(span(zero), span(none), 0).empty());  // empty graph
  const I32 isolated{0, 0, 0};
  CHECK((sf::hopcroft_karp(span(isolated), span(none), 5) == I32{-1, -1}));  // no edges
  // A path that needs an augmenting path of length 5 after greedy.
  const I32 indptr{0, 2, 3, 4};
  const I32 indices{0, 1, 0, 1};
  const I32 mate = sf::hopcroft_karp(span(indptr), span(indices), 2);
  CHECK(matching_size({indptr, indices, 2}, mate, I64{1, 1}) == 2);
  // Many duplicate entries in one row (scipy gh-26160).
  I32 dup_indptr{0, 5000, 5001};
  I32 dup_indices(5001, 0);
  const I32 dup = sf::hopcroft_karp(span(dup_indptr), span(dup_indices), 1);
  CHECK((dup == I32{0, -1}));
  // The Karp-Sipser start on a row of 300 entries whose neighbours the degree-1 rule has
  // all taken before its turn: its saturated degree does not say so, the row stays free.
  I32 heavy_indptr{0};
  I32 heavy_indices;
  for (std::int32_t j = 0; j < 40; ++j) {
    heavy_indices.push_back(j);
    heavy_indptr.push_back(static_cast<std::int32_t>(heavy_indices.size()));
  }
  for (int k = 0; k < 300; ++k) heavy_indices.push_back(k % 40);
  heavy_indptr.push_back(static_cast<std::int32_t>(heavy_indices.size()));
  const Csr heavy{heavy_indptr, heavy_indices, 40};
  for (const bool karp_sipser : {false, true}) {
    const I32 mate = sf::hopcroft_karp(span(heavy_indptr), span(heavy_indices), 40,
                                       karp_sipser, -1);
    CHECK(matching_size(heavy, mate, I64(40, 1)) == 40);
  }
}

void test_b_matching_random() {
  std::mt19937 rng(2);
  for (int trial = 0; trial < 400; ++trial) {
    const Csr g = random_csr(rng, 7, 5, 4);
    I64 cap(static_cast<std::size_t>(g.n_right));
    for (auto& c : cap) c = static_cast<std::int64_t>(rng() % 4);
    if (trial % 10 == 0 && !cap.empty()) cap[0] = std::numeric_limits<std::int64_t>::max();
    const I32 mate = sf::max_b_matching(span(g.indptr), span(g.indices), span(cap));
    const auto best = brute_b_matching(g, cap);
    CHECK(matching_size(g, mate, cap) == best);
    // Work budgets 0 and 3 hand over to the Hopcroft-Karp phases after the first searches.
    for (const std::int64_t budget : {0, 3}) {
      const I32 phased = sf::max_b_matching(span(g.indptr), span(g.indices), span(cap), budget);
      CHECK(matching_size(g, phased, cap) == best);
    }
  }
}

// Larger graphs, where first fit leaves enough free vertices for the pressure-greedy start:
// the b-matching size must equal Hopcroft-Karp's on the slot-expanded graph.
void test_b_matching_large_vs_expanded() {
  std::mt19937 rng(4);
  for (int trial = 0; trial < 6; ++trial) {
    const int n_left = 3000;
    const int n_right = 1000 + 400 * trial;
    I64 cap(static_cast<std::size_t>(n_right));
    for (auto& c : cap) c = static_cast<std::int64_t>(rng() % 4);
    I32 slot_start(static_cast<std::size_t>(n_right) + 1, 0);
    for (std::size_t j = 0; j < cap.size(); ++j) {
      slot_start[j + 1] = slot_start[j] + static_cast<std::int32_t>(cap[j]);
    }
    Csr g;
    Csr expanded;
    g.n_right = n_right;
    expanded.n_right = slot_start.back();
    g.indptr.push_back(0);
    expanded.indptr.push_back(0);
    for (int u = 0; u < n_left; ++u) {
      const int deg = static_cast<int>(rng() % 5);
      for (int k = 0; k < deg; ++k) {
        const auto j = static_cast<std::int32_t>(rng() % static_cast<unsigned>(n_right));
        g.indices.push_back(j);
        for (std::int32_t s = slot_start[static_cast<std::size_t>(j)];
             s < slot_start[static_cast<std::size_t>(j) + 1]; ++s) {
          expanded.indices.push_back(s);
        }
      }
      g.indptr.push_back(static_cast<std::int32_t>(g.indices.size()));
      expanded.indptr.push_back(static_cast<std::int32_t>(expanded.indices.size()));
    }
    const I32 mate = sf::max_b_matching(span(g.indptr), span(g.indices), span(cap));
    const I32 ref = sf::hopcroft_karp(span(expanded.indptr), span(expanded.indices),
                                      expanded.n_right);
    const I64 ones(static_cast<std::size_t>(expanded.n_right), 1);
    const auto best = matching_size(expanded, ref, ones);
    CHECK(matching_size(g, mate, cap) == best);
    // The same through the Hopcroft-Karp phases: right away, and after some searches.
    for (const std::int64_t budget : {0, 500}) {
      const I32 phased = sf::max_b_matching(span(g.indptr), span(g.indices), span(cap), budget);
      CHECK(matching_size(g, phased, cap) == best);
    }
  }
}

void test_b_matching_edge_cases() {
  const I32 zero{0};
  const I32 none;
  const I64 no_cap;
  CHECK(sf::max_b_matching(span(zero), span(none), span(no_cap)).empty());
  const I32 indptr{0, 1, 2, 3};
  const I32 indices{0, 0, 0};
  const I64 cap0{0};
  CHECK((sf::max_b_matching(span(indptr), span(indices), span(cap0)) == I32{-1, -1, -1}));
  const I64 cap2{2};
  const I32 two = sf::max_b_matching(span(indptr), span(indices), span(cap2));
  CHECK(matching_size({indptr, indices, 1}, two, cap2) == 2);
}

// Rotated first fit gives left vertex 1 right vertex 1 (its rotated start), so left vertex 2,
// whose only entry is right vertex 1, finds it full. The length-3 repair moves left vertex 1 on
// to right vertex 2 and gives its place to left vertex 2, with no search. The forced-budget
// solve, which skips the repair, must reach the same size by its searches.
void test_b_matching_length_three_repair() {
  const I32 indptr{0, 1, 3, 4};
  const I32 indices{0, 2, 1, 1};
  const I64 cap{1, 1, 2};
  CHECK((sf::max_b_matching(span(indptr), span(indices), span(cap)) == I32{0, 2, 1}));
  const I32 searched = sf::max_b_matching(span(indptr), span(indices), span(cap), 0);
  CHECK(matching_size({indptr, indices, 3}, searched, cap) == 3);
}

// Slow reference: successive shortest paths one augmentation at a time with Bellman-Ford
// on the residual graph of a super source/sink extension. Returns {feasible, cost}.
std::pair<bool, std::int64_t> reference_min_cost(int n, const I32& tail, const I32& head,
                                                 const I64& cap, const I64& cost,
                                                 const I64& supply) {
  struct Arc {
    int to;
    std::int64_t cap;
    std::int64_t cost;
    std::size_t rev;
  };
  const int s = n;
  const int t = n + 1;
  std::vector<std::vector<Arc>> adj(static_cast<std::size_t>(n + 2));
  auto add = [&](int u, int v, std::int64_t c, std::int64_t w) {
    auto& au = adj[static_cast<std::size_t>(u)];
    auto& av = adj[static_cast<std::size_t>(v)];
    const std::size_t iu = au.size();
    const std::size_t iv = av.size() + (u == v ? 1 : 0);
    au.push_back({v, c, w, iv});
    av.push_back({u, 0, -w, iu});
  };
  std::int64_t need = 0;
  for (std::size_t a = 0; a < tail.size(); ++a) add(tail[a], head[a], cap[a], cost[a]);
  for (int v = 0; v < n; ++v) {
    const std::int64_t b = supply[static_cast<std::size_t>(v)];
    if (b > 0) {
      add(s, v, b, 0);
      need += b;
    } else if (b < 0) {
      add(v, t, -b, 0);
    }
  }
  std::int64_t total = 0;
  while (need > 0) {
    const std::int64_t inf = std::numeric_limits<std::int64_t>::max() / 4;
    std::vector<std::int64_t> dist(static_cast<std::size_t>(n + 2), inf);
    std::vector<std::pair<int, std::size_t>> prev(static_cast<std::size_t>(n + 2), {-1, 0});
    dist[static_cast<std::size_t>(s)] = 0;
    for (int round = 0; round < n + 2; ++round) {
      for (int u = 0; u < n + 2; ++u) {
        const auto su = static_cast<std::size_t>(u);
        if (dist[su] == inf) continue;
        for (std::size_t i = 0; i < adj[su].size(); ++i) {
          const Arc& a = adj[su][i];
          const auto sv = static_cast<std::size_t>(a.to);
          if (a.cap > 0 && dist[su] + a.cost < dist[sv]) {
            dist[sv] = dist[su] + a.cost;
            prev[sv] = {u, i};
          }
        }
      }
    }
    if (dist[static_cast<std::size_t>(t)] == inf) return {false, total};
    std::int64_t push = need;
    for (int v = t; v != s;) {
      const auto [u, i] = prev[static_cast<std::size_t>(v)];
      push = std::min(push, adj[static_cast<std::size_t>(u)][i].cap);
      v = u;
    }
    for (int v = t; v != s;) {
      const auto [u, i] = prev[static_cast<std::size_t>(v)];
      Arc& a = adj[static_cast<std::size_t>(u)][i];
      a.cap -= push;
      adj[static_cast<std::size_t>(a.to)][a.rev].cap += push;
      v = u;
    }
    need -= push;
    total += push * dist[static_cast<std::size_t>(t)];
  }
  return {true, total};
}

void check_flow_feasible(int n, const I32& tail, const I32& head, const I64& cap,
                         const I64& cost, const I64& supply, const sf::MinCostFlowResult& r) {
  CHECK(r.flow.size() == tail.size());
  I64 net(static_cast<std::size_t>(n), 0);
  std::int64_t total = 0;
  for (std::size_t a = 0; a < tail.size(); ++a) {
    CHECK(r.flow[a] >= 0 && r.flow[a] <= cap[a]);
    net[static_cast<std::size_t>(tail[a])] += r.flow[a];
    net[static_cast<std::size_t>(head[a])] -= r.flow[a];
    total += r.flow[a] * cost[a];
  }
  CHECK(total == r.total_cost);
  for (std::size_t v = 0; v < net.size(); ++v) {
    if (r.status == sf::MinCostFlowStatus::kOptimal) {
      CHECK(net[v] == supply[v]);
    } else {  // partial: never more than the supply or the demand
      CHECK(supply[v] >= 0 ? (net[v] >= 0 && net[v] <= supply[v])
                           : (net[v] <= 0 && net[v] >= supply[v]));
    }
  }
}

void test_min_cost_flow_random() {
  std::mt19937 rng(3);
  int optimal = 0;
  int infeasible = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const int n = static_cast<int>(rng() % 7);
    const int m = n == 0 ? 0 : static_cast<int>(rng() % 16);
    I32 tail;
    I32 head;
    I64 cap;
    I64 cost;
    for (int a = 0; a < m; ++a) {
      tail.push_back(static_cast<std::int32_t>(rng() % static_cast<unsigned>(n)));
      head.push_back(static_cast<std::int32_t>(rng() % static_cast<unsigned>(n)));
      cap.push_back(static_cast<std::int64_t>(rng() % 4));
      cost.push_back(trial % 2 == 0 ? static_cast<std::int64_t>(rng() % 2)
                                    : static_cast<std::int64_t>(rng() % 10));
    }
    I64 supply(static_cast<std::size_t>(n), 0);
    if (n >= 2) {
      for (int k = 0; k < 3; ++k) {
        const auto u = static_cast<std::size_t>(rng() % static_cast<unsigned>(n));
        const auto v = static_cast<std::size_t>(rng() % static_cast<unsigned>(n));
        const auto b = static_cast<std::int64_t>(rng() % 4);
        supply[u] += b;
        supply[v] -= b;
      }
    }
    const auto r = sf::min_cost_flow(n, span(tail), span(head), span(cap), span(cost), span(supply));
    const auto [feasible, ref_cost] = reference_min_cost(n, tail, head, cap, cost, supply);
    CHECK(r.status == (feasible ? sf::MinCostFlowStatus::kOptimal
                                : sf::MinCostFlowStatus::kInfeasible));
    if (feasible) {
      CHECK(r.total_cost == ref_cost);
      ++optimal;
    } else {
      ++infeasible;
    }
    check_flow_feasible(n, tail, head, cap, cost, supply, r);
  }
  CHECK(optimal > 100 && infeasible > 50);  // the sample covers both outcomes
}

void test_min_cost_flow_statuses() {
  const I32 none;
  const I64 none64;
  const auto empty = sf::min_cost_flow(0, span(none), span(none), span(none64), span(none64),
                                       span(none64));
  CHECK(empty.status == sf::MinCostFlowStatus::kOptimal && empty.total_cost == 0);
  const I32 tail{0};
  const I32 head{1};
  const I64 cap{5};
  const I64 cost{3};
  const I64 unbalanced{2, -1};
  CHECK(sf::min_cost_flow(2, span(tail), span(head), span(cap), span(cost), span(unbalanced))
            .status == sf::MinCostFlowStatus::kUnbalanced);
  const I64 too_much{6, -6};
  const auto inf = sf::min_cost_flow(2, span(tail), span(head), span(cap), span(cost),
                                     span(too_much));
  CHECK(inf.status == sf::MinCostFlowStatus::kInfeasible && inf.flow == I64{5});
  const I64 ok{4, -4};
  const auto opt = sf::min_cost_flow(2, span(tail), span(head), span(cap), span(cost), span(ok));
  CHECK(opt.status == sf::MinCostFlowStatus::kOptimal && opt.total_cost == 12);
  const std::int64_t big = std::numeric_limits<std::int64_t>::max() / 2;
  const I64 big_cost{big};
  CHECK(sf::min_cost_flow(2, span(tail), span(head), span(cap), span(big_cost), span(ok)).status ==
        sf::MinCostFlowStatus::kOverflow);
  const I64 big_supply{big + 1, big + 1, -big - 1, -big - 1};  // sums to 2^63
  const I32 t4{0, 1};
  const I32 h4{2, 3};
  const I64 c4{big, big};
  const I64 w4{0, 0};
  CHECK(sf::min_cost_flow(4, span(t4), span(h4), span(c4), span(w4), span(big_supply)).status ==
        sf::MinCostFlowStatus::kOverflow);
}

void test_malformed_csr() {
  const I32 indices{0, 1};
  const I32 empty_indptr;
  EXPECT_THROW(std::invalid_argument, sf::hopcroft_karp(span(empty_indptr), span(indices), 2),
               "indptr is empty");
  const I32 bad_start{1, 2};
  EXPECT_THROW(std::invalid_argument, sf::hopcroft_karp(span(bad_start), span(indices), 2),
               "indptr[0] = 1");
  const I32 decreasing{0, 2, 1, 2};
  EXPECT_THROW(std::invalid_argument, sf::hopcroft_karp(span(decreasing), span(indices), 2),
               "indptr[2] = 1");
  const I32 short_end{0, 1};
  EXPECT_THROW(std::invalid_argument, sf::hopcroft_karp(span(short_end), span(indices), 2),
               "indptr[1] = 1 does not match len(indices) = 2");
  const I32 indptr{0, 2};
  EXPECT_THROW(std::out_of_range, sf::hopcroft_karp(span(indptr), span(indices), 1),
               "indices[1] = 1 is not in [0, 1)");
  const I32 negative{0, -3};
  EXPECT_THROW(std::out_of_range, sf::hopcroft_karp(span(indptr), span(negative), 4),
               "indices[1] = -3");
  EXPECT_THROW(std::invalid_argument, sf::hopcroft_karp(span(indptr), span(indices), -1),
               "n_right = -1");
  EXPECT_THROW(std::invalid_argument,
               sf::hopcroft_karp(span(indptr), span(indices), std::int64_t{1} << 33),
               "n_right = 8589934592");
  const I64 cap{1, -2};
  EXPECT_THROW(std::invalid_argument, sf::max_b_matching(span(indptr), span(indices), span(cap)),
               "capacity[1] = -2");
  const I64 cap1{1};
  EXPECT_THROW(std::out_of_range, sf::max_b_matching(span(indptr), span(indices), span(cap1)),
               "indices[1] = 1 is not in [0, 1)");
  EXPECT_THROW(std::invalid_argument,
               sf::max_b_matching(span(decreasing), span(indices), span(cap1)), "indptr[2] = 1");
  // first fit checks the entries a block of rows at a time: a bad entry in a later block is
  // named with its own position by both kernels.
  I32 many_indptr(1001);
  I32 many(2000);
  for (std::size_t u = 0; u <= 1000; ++u) many_indptr[u] = static_cast<std::int32_t>(2 * u);
  for (std::size_t k = 0; k < many.size(); ++k) many[k] = static_cast<std::int32_t>(k % 2);
  many[1377] = -5;
  const I64 cap2(2, 2);
  EXPECT_THROW(std::out_of_range, sf::hopcroft_karp(span(many_indptr), span(many), 2),
               "indices[1377] = -5 is not in [0, 2)");
  EXPECT_THROW(std::out_of_range, sf::max_b_matching(span(many_indptr), span(many), span(cap2)),
               "indices[1377] = -5 is not in [0, 2)");
}

void test_malformed_flow() {
  const I32 tail{0, 1};
  const I32 head{1, 2};
  const I64 cap{1, 1};
  const I64 cost{0, 1};
  const I64 supply{1, 0, -1};
  const I64 neg_cost{0, -4};
  EXPECT_THROW(std::invalid_argument,
               sf::min_cost_flow(3, span(tail), span(head), span(cap), span(neg_cost), span(supply)),
               "cost[1] = -4 on arc 1 (1 -> 2)");
  const I64 neg_cap{-1, 1};
  EXPECT_THROW(std::invalid_argument,
               sf::min_cost_flow(3, span(tail), span(head), span(neg_cap), span(cost), span(supply)),
               "capacity[0] = -1");
  const I32 bad_head{1, 3};
  EXPECT_THROW(std::out_of_range,
               sf::min_cost_flow(3, span(tail), span(bad_head), span(cap), span(cost), span(supply)),
               "head[1] = 3 is not in [0, 3)");
  const I32 bad_tail{-1, 1};
  EXPECT_THROW(std::out_of_range,
               sf::min_cost_flow(3, span(bad_tail), span(head), span(cap), span(cost), span(supply)),
               "tail[0] = -1");
  const I32 short_head{1};
  EXPECT_THROW(std::invalid_argument,
               sf::min_cost_flow(3, span(tail), span(short_head), span(cap), span(cost),
                                 span(supply)),
               "head has length 1, expected 2");
  const I64 short_cost{0};
  EXPECT_THROW(std::invalid_argument,
               sf::min_cost_flow(3, span(tail), span(head), span(cap), span(short_cost),
                                 span(supply)),
               "cost has length 1, expected 2");
  EXPECT_THROW(std::invalid_argument,
               sf::min_cost_flow(4, span(tail), span(head), span(cap), span(cost), span(supply)),
               "supply has length 3, expected 4");
  EXPECT_THROW(std::invalid_argument,
               sf::min_cost_flow(-2, span(tail), span(head), span(cap), span(cost), span(supply)),
               "n_nodes = -2");
}

}  // namespace

int main() {
  test_hopcroft_karp_random();
  test_hopcroft_karp_edge_cases();
  test_hopcroft_karp_stages_agree();
  test_b_matching_random();
  test_b_matching_large_vs_expanded();
  test_b_matching_edge_cases();
  test_b_matching_length_three_repair();
  test_min_cost_flow_random();
  test_min_cost_flow_statuses();
  test_malformed_csr();
  test_malformed_flow();
  return harness::summary("test_graph");
}
