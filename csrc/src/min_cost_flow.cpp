// Minimum-cost flow by the primal-dual method (successive shortest paths, many per phase).
//
// A super source S feeds every supply node (arc capacity = supply) and every demand node
// drains into a super sink T, so the problem becomes a min-cost S-T flow of value
// sum(positive supplies). Node potentials pi keep every residual arc's reduced cost
// cost + pi[u] - pi[v] nonnegative (Johnson). A phase makes the shortest S-T paths exactly
// the zero-reduced-cost ("admissible") ones, then pushes a maximum flow through the admissible
// subgraph with Dinic's blocking flows: every augmentation is along a shortest path, so the
// flow stays a min-cost flow for its value (the SSP invariant). Reverse arcs of admissible
// arcs are admissible too, so the Dinic maximum flow may reroute earlier paths of the phase.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "spare_fast/graph.hpp"
#include "spare_fast/network_simplex.hpp"
#include "spare_fast/validate.hpp"
#include "flow_totals.hpp"

namespace spare_fast {
namespace {

using detail::Wide;

constexpr std::int64_t kInf = std::numeric_limits<std::int64_t>::max();

std::size_t sz(Index v) { return static_cast<std::size_t>(v); }

// The residual network in CSR form: the out-arcs of node u are first_[u] .. first_[u + 1].
// Every input arc with positive capacity and distinct ends yields a forward residual arc at
// its tail and a reverse one (cost negated, capacity 0) at its head; pair_[e] links the two.
class ResidualNetwork {
 public:
  ResidualNetwork(std::size_t n_nodes, Span<std::int32_t> tail, Span<std::int32_t> head,
                  Span<std::int64_t> capacity, Span<std::int64_t> cost,
                  Span<std::int64_t> supply)
      : n_(n_nodes + 2),
        source_(static_cast<Index>(n_nodes)),
        sink_(static_cast<Index>(n_nodes + 1)),
        forward_of_arc_(tail.size, -1) {
    std::vector<Index> degree(n_ + 1, 0);
    auto kept = [&](std::size_t a) { return capacity[a] > 0 && tail[a] != head[a]; };
    for (std::size_t a = 0; a < tail.size; ++a) {
      if (!kept(a)) continue;
      ++degree[sz(tail[a])];
      ++degree[sz(head[a])];
    }
    for (std::size_t v = 0; v < n_nodes; ++v) {
      if (supply[v] > 0) {
        ++degree[sz(source_)];
        ++degree[v];
      } else if (supply[v] < 0) {
        ++degree[v];
        ++degree[sz(sink_)];
      }
    }
    first_.assign(n_ + 1, 0);
    for (std::size_t v = 0; v < n_; ++v) first_[v + 1] = first_[v] + degree[v];
    const std::size_t n_res = sz(first_[n_]);
    to_.resize(n_res);
    residual_.assign(n_res, 0);
    cost_.resize(n_res);
    pair_.resize(n_res);
    std::vector<Index> fill(first_.begin(), first_.end() - 1);
    auto add = [&](Index u, Index v, std::int64_t cap, std::int64_t c) {
      const Index e = fill[sz(u)]++;
      const Index r = fill[sz(v)]++;
      to_[sz(e)] = v;
      residual_[sz(e)] = cap;
      cost_[sz(e)] = c;
      pair_[sz(e)] = r;
      to_[sz(r)] = u;
      cost_[sz(r)] = -c;
      pair_[sz(r)] = e;
      return e;
    };
    for (std::size_t a = 0; a < tail.size; ++a) {
      if (kept(a)) forward_of_arc_[a] = add(tail[a], head[a], capacity[a], cost[a]);
    }
    for (std::size_t v = 0; v < n_nodes; ++v) {
      if (supply[v] > 0) {
        add(source_, static_cast<Index>(v), supply[v], 0);
      } else if (supply[v] < 0) {
        add(static_cast<Index>(v), sink_, -supply[v], 0);
      }
    }
    potential_.assign(n_, 0);
    level_.assign(n_, -1);
    current_.assign(n_, 0);
  }

  // Routes as much supply as possible at minimum cost; returns the flow value, or -1 when
  // that takes more than max_phases Dijkstra phases (the flow is then partial).
  std::int64_t solve(std::int64_t max_phases) {
    std::int64_t value = 0;
    // Zero potentials are feasible because costs are nonnegative: the first phase needs no
    // Dijkstra and routes greedily along cost-0 arcs (the warm start).
    value += max_flow_on_admissible();
    std::int64_t phases = 0;
    while (dijkstra_update_potentials()) {
      if (++phases > max_phases) return -1;
      const std::int64_t pushed = max_flow_on_admissible();
      if (pushed == 0) break;  // cannot happen with exact potentials; guards a livelock
      value += pushed;
    }
    return value;
  }

  // Flow on input arc a (0 for arcs left out of the residual network).
  std::int64_t flow(std::size_t a) const {
    const Index e = forward_of_arc_[a];
    return e < 0 ? 0 : residual_[sz(pair_[sz(e)])];
  }

 private:
  std::int64_t reduced(Index u, Index e) const {
    return cost_[sz(e)] + potential_[sz(u)] - potential_[sz(to_[sz(e)])];
  }

  // Dijkstra from S on reduced costs. Afterwards pi += min(dist, dist[T]) keeps every reduced
  // cost nonnegative and makes every shortest S-T path admissible. Returns false if T is
  // unreachable (no augmenting path: the flow is maximum).
  bool dijkstra_update_potentials() {
    dist_.assign(n_, kInf);
    done_.assign(n_, 0);
    using Item = std::pair<std::int64_t, Index>;
    std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
    dist_[sz(source_)] = 0;
    heap.emplace(0, source_);
    while (!heap.empty()) {
      const auto [d, u] = heap.top();
      heap.pop();
      if (done_[sz(u)]) continue;
      done_[sz(u)] = 1;
      if (u == sink_) break;
      for (Index e = first_[sz(u)]; e < first_[sz(u) + 1]; ++e) {
        if (residual_[sz(e)] == 0) continue;
        const Index v = to_[sz(e)];
        const std::int64_t nd = d + reduced(u, e);
        if (nd < dist_[sz(v)]) {
          dist_[sz(v)] = nd;
          heap.emplace(nd, v);
        }
      }
    }
    const std::int64_t dt = dist_[sz(sink_)];
    if (dt == kInf) return false;
    for (std::size_t v = 0; v < n_; ++v) potential_[v] += dist_[v] < dt ? dist_[v] : dt;
    return true;
  }

  // BFS levels over admissible arcs (positive residual, zero reduced cost), stopping at T's
  // layer. Returns false if T is not reachable.
  bool admissible_levels() {
    std::fill(level_.begin(), level_.end(), -1);
    queue_.clear();
    level_[sz(source_)] = 0;
    queue_.push_back(source_);
    std::int32_t sink_level = -1;
    for (std::size_t qi = 0; qi < queue_.size(); ++qi) {
      const Index u = queue_[qi];
      if (sink_level >= 0 && level_[sz(u)] >= sink_level) break;
      for (Index e = first_[sz(u)]; e < first_[sz(u) + 1]; ++e) {
        const Index v = to_[sz(e)];
        if (level_[sz(v)] >= 0 || residual_[sz(e)] == 0 || reduced(u, e) != 0) continue;
        level_[sz(v)] = level_[sz(u)] + 1;
        if (v == sink_) sink_level = level_[sz(v)];
        queue_.push_back(v);
      }
    }
    return sink_level >= 0;
  }

  // Dinic: blocking flows on the admissible level graph until T is cut off.
  std::int64_t max_flow_on_admissible() {
    std::int64_t total = 0;
    while (admissible_levels()) {
      for (std::size_t v = 0; v < n_; ++v) current_[v] = first_[v];
      path_.clear();
      Index u = source_;
      while (true) {
        if (u == sink_) {
          std::int64_t push = kInf;
          for (Index e : path_) push = residual_[sz(e)] < push ? residual_[sz(e)] : push;
          std::size_t cut = path_.size();
          for (std::size_t i = 0; i < path_.size(); ++i) {
            const Index e = path_[i];
            residual_[sz(e)] -= push;
            residual_[sz(pair_[sz(e)])] += push;
            if (residual_[sz(e)] == 0 && cut == path_.size()) cut = i;
          }
          total += push;
          // Retreat to the tail of the first saturated arc and continue from there.
          path_.resize(cut);
          u = cut == 0 ? source_ : to_[sz(path_[cut - 1])];
          continue;
        }
        Index& e = current_[sz(u)];
        const Index end = first_[sz(u) + 1];
        const std::int32_t next_level = level_[sz(u)] + 1;
        for (; e < end; ++e) {
          const Index v = to_[sz(e)];
          if (level_[sz(v)] == next_level && residual_[sz(e)] > 0 && reduced(u, e) == 0) break;
        }
        if (e < end) {
          path_.push_back(e);
          u = to_[sz(e)];
          continue;
        }
        level_[sz(u)] = -1;  // dead end for this blocking flow
        if (u == source_) break;
        const Index back = path_.back();
        path_.pop_back();
        u = to_[sz(pair_[sz(back)])];
        ++current_[sz(u)];
      }
    }
    return total;
  }

  std::size_t n_;
  Index source_;
  Index sink_;
  std::vector<Index> forward_of_arc_;  // input arc -> its forward residual arc, -1 if dropped
  std::vector<Index> first_;           // CSR offsets of the residual out-arcs
  std::vector<Index> to_;              // head of each residual arc
  std::vector<std::int64_t> residual_;  // residual capacity of each residual arc
  std::vector<std::int64_t> cost_;      // cost (negated on reverse arcs)
  std::vector<Index> pair_;             // the opposite residual arc
  std::vector<std::int64_t> potential_;  // Johnson potentials
  std::vector<std::int64_t> dist_;       // Dijkstra scratch
  std::vector<char> done_;               // Dijkstra scratch
  std::vector<std::int32_t> level_;      // Dinic BFS levels (-1: unreached or dead)
  std::vector<Index> current_;           // Dinic current-arc pointers
  std::vector<Index> queue_;             // BFS scratch
  std::vector<Index> path_;              // DFS path of residual arcs
};

void validate(std::int64_t n_nodes, Span<std::int32_t> tail, Span<std::int32_t> head,
              Span<std::int64_t> capacity, Span<std::int64_t> cost, Span<std::int64_t> supply) {
  check_nonnegative("n_nodes", n_nodes);
  check_fits_int32("n_nodes", n_nodes);
  const std::size_t m = tail.size;
  check_length("head", head.size, m);
  check_length("capacity", capacity.size, m);
  check_length("cost", cost.size, m);
  check_length("supply", supply.size, static_cast<std::size_t>(n_nodes));
  // Residual arcs (two per arc plus two per supply node) are indexed by int32.
  const auto limit = static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max() / 2) -
                     static_cast<std::size_t>(n_nodes);
  if (m > limit) {
    throw std::invalid_argument("number of arcs = " + std::to_string(m) + " exceeds " +
                                std::to_string(limit) + " (int32 residual arc ids)");
  }
  for (std::size_t a = 0; a < m; ++a) {
    // Names are built only for the culprit: a string per arc would dominate the solve.
    if (tail[a] < 0 || tail[a] >= n_nodes) check_range(index_name("tail", a), tail[a], 0, n_nodes);
    if (head[a] < 0 || head[a] >= n_nodes) check_range(index_name("head", a), head[a], 0, n_nodes);
    if (capacity[a] < 0) check_nonnegative(index_name("capacity", a), capacity[a]);
    if (cost[a] < 0) {
      throw std::invalid_argument(index_name("cost", a) + " = " + std::to_string(cost[a]) +
                                  " on arc " + std::to_string(a) + " (" +
                                  std::to_string(tail[a]) + " -> " + std::to_string(head[a]) +
                                  ") is negative; costs must be >= 0");
    }
  }
}

}  // namespace

void detail::validate_min_cost_flow(std::int64_t n_nodes, Span<std::int32_t> tail,
                                    Span<std::int32_t> head, Span<std::int64_t> capacity,
                                    Span<std::int64_t> cost, Span<std::int64_t> supply) {
  validate(n_nodes, tail, head, capacity, cost, supply);
}

bool detail::min_cost_flow_within(std::int64_t n_nodes, Span<std::int32_t> tail,
                                  Span<std::int32_t> head, Span<std::int64_t> capacity,
                                  Span<std::int64_t> cost, Span<std::int64_t> supply,
                                  std::int64_t max_phases, MinCostFlowResult& result) {
  result = MinCostFlowResult{};
  detail::FlowTotals totals;
  // Potentials and Dijkstra distances stay below about 2 (n + 2) * max cost; keep a factor 4.
  auto potential_bound = [n_nodes](const detail::FlowTotals& t) {
    return 4 * (static_cast<Wide>(n_nodes) + 3) * t.max_cost;
  };
  if (!detail::start_min_cost_flow(n_nodes, tail, head, capacity, cost, supply, potential_bound,
                                   result, totals)) {
    return true;
  }
  const Wide positive = totals.positive;

  ResidualNetwork network(static_cast<std::size_t>(n_nodes), tail, head, capacity, cost, supply);
  const std::int64_t value = network.solve(max_phases);
  if (value < 0) return false;
  result.flow_value = value;
  for (std::size_t a = 0; a < tail.size; ++a) {
    result.flow[a] = network.flow(a);
    result.total_cost += result.flow[a] * cost[a];
  }
  result.status = result.flow_value == static_cast<std::int64_t>(positive)
                      ? MinCostFlowStatus::kOptimal
                      : MinCostFlowStatus::kInfeasible;
  return true;
}

bool detail::zero_cost_flow(std::int64_t n_nodes, Span<std::int32_t> tail,
                            Span<std::int32_t> head, Span<std::int64_t> capacity,
                            Span<std::int64_t> cost, Span<std::int64_t> supply,
                            MinCostFlowResult& result) {
  result = MinCostFlowResult{};
  detail::FlowTotals totals;
  auto no_extra_bound = [](const detail::FlowTotals&) { return Wide{0}; };
  if (!detail::start_min_cost_flow(n_nodes, tail, head, capacity, cost, supply, no_extra_bound,
                                   result, totals)) {
    return true;  // kUnbalanced or kOverflow, as every method reports them
  }
  // The subnetwork of the cost-0 arcs, solved as a maximum flow (the primal-dual method's
  // warm start, which needs no Dijkstra); its arcs are few where this is tried.
  std::vector<std::int32_t> t;
  std::vector<std::int32_t> h;
  std::vector<std::int64_t> c;
  std::vector<std::size_t> arc;
  for (std::size_t a = 0; a < tail.size; ++a) {
    if (cost[a] != 0 || capacity[a] <= 0 || tail[a] == head[a]) continue;
    t.push_back(tail[a]);
    h.push_back(head[a]);
    c.push_back(capacity[a]);
    arc.push_back(a);
  }
  const std::vector<std::int64_t> zeros(t.size(), 0);
  ResidualNetwork network(static_cast<std::size_t>(n_nodes), Span<std::int32_t>{t.data(), t.size()},
                          Span<std::int32_t>{h.data(), h.size()},
                          Span<std::int64_t>{c.data(), c.size()},
                          Span<std::int64_t>{zeros.data(), zeros.size()}, supply);
  if (network.solve(0) != static_cast<std::int64_t>(totals.positive)) return false;
  for (std::size_t k = 0; k < arc.size(); ++k) result.flow[arc[k]] = network.flow(k);
  result.flow_value = static_cast<std::int64_t>(totals.positive);
  result.total_cost = 0;
  result.status = MinCostFlowStatus::kOptimal;
  return true;
}

MinCostFlowResult min_cost_flow(std::int64_t n_nodes, Span<std::int32_t> tail,
                                Span<std::int32_t> head, Span<std::int64_t> capacity,
                                Span<std::int64_t> cost, Span<std::int64_t> supply) {
  MinCostFlowResult result;
  detail::min_cost_flow_within(n_nodes, tail, head, capacity, cost, supply,
                               std::numeric_limits<std::int64_t>::max(), result);
  return result;
}

}  // namespace spare_fast
