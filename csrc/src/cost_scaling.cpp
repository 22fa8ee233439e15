// Minimum-cost flow by cost scaling (push-relabel with epsilon-refinement); see
// network_simplex.hpp for the declaration, the bounds and the references.
//
// Residual network: every input arc with positive capacity and distinct ends gives a forward
// residual arc at its tail and a reverse one (cost negated, capacity 0) at its head, stored in
// CSR order by tail. Costs are multiplied by n + 1, so that a flow that is 1-optimal for the
// scaled costs is (1 / (n + 1))-optimal for the input costs, hence optimal (integer costs).
//
// refine(eps) starts from an (alpha eps)-optimal flow (the zero pseudoflow with zero prices in
// the first phase), saturates every residual arc of negative reduced cost (the pseudoflow is
// then 0-optimal) and routes the excesses to the deficits by partial augment-relabel: from an
// active node, a path of admissible arcs (residual, reduced cost < 0) grows up to kMaxPath arcs
// or until it reaches a node with a deficit; a node without an admissible arc is relabelled
// (its price drops until its cheapest residual arc has reduced cost -eps) and the path retreats.
// Flow is then pushed along the path. Every refine opens with a global price update, repeated
// every 4 n relabels: a bucket-based Dijkstra from the deficit nodes over the reversed residual
// arcs, with arc lengths floor(reduced cost / eps) + 1 in units of eps, that lowers every price
// by its distance; it keeps the flow eps-optimal and makes a shortest path admissible from
// every node it reaches.
//
// Infeasibility: a node with excess that reaches no deficit node in the residual network
// (found by a price update) proves that the supplies cannot be met; so does a price that falls
// below what an eps-optimal flow allows when a feasible flow exists (Goldberg and Tarjan's
// bound: at most n eps below the price at the start of the refine, plus (alpha + 1) n eps
// counting the previous phase's slack). Either way the solve stops, and the primal-dual method
// computes the minimum-cost maximum flow that kInfeasible promises.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "spare_fast/graph.hpp"
#include "spare_fast/network_simplex.hpp"
#include "spare_fast/validate.hpp"
#include "flow_totals.hpp"

namespace spare_fast {
namespace {

using detail::Wide;

constexpr std::int64_t kAlpha = 16;     // eps shrinks by this factor per refine
constexpr std::size_t kMaxPath = 4;     // arcs per partial augmentation
constexpr std::int64_t kUpdateEvery = 4;  // a price update every kUpdateEvery n relabels

std::size_t sz(std::int64_t v) { return static_cast<std::size_t>(v); }

class CostScaling {
 public:
  CostScaling(std::size_t n, Span<std::int32_t> tail, Span<std::int32_t> head,
              Span<std::int64_t> capacity, Span<std::int64_t> cost, Span<std::int64_t> supply,
              std::int64_t cap_limit, std::int64_t scale, std::int64_t hard_floor)
      : n_(n), hard_floor_(hard_floor), forward_of_arc_(tail.size, -1) {
    std::vector<std::int32_t> degree(n + 1, 0);
    auto kept = [&](std::size_t a) { return capacity[a] > 0 && tail[a] != head[a]; };
    for (std::size_t a = 0; a < tail.size; ++a) {
      if (!kept(a)) continue;
      ++degree[sz(tail[a])];
      ++degree[sz(head[a])];
    }
    first_.assign(n + 1, 0);
    for (std::size_t v = 0; v < n; ++v) first_[v + 1] = first_[v] + degree[v];
    const std::size_t n_res = sz(first_[n]);
    to_.resize(n_res);
    rev_.resize(n_res);
    residual_.assign(n_res, 0);
    cost_.resize(n_res);
    std::vector<std::int32_t> fill(first_.begin(), first_.end() - 1);
    for (std::size_t a = 0; a < tail.size; ++a) {
      if (!kept(a)) continue;
      const std::int32_t u = tail[a];
      const std::int32_t v = head[a];
      const std::int32_t e = fill[sz(u)]++;
      const std::int32_t r = fill[sz(v)]++;
      to_[sz(e)] = v;
      to_[sz(r)] = u;
      rev_[sz(e)] = r;
      rev_[sz(r)] = e;
      residual_[sz(e)] = capacity[a] < cap_limit ? capacity[a] : cap_limit;
      cost_[sz(e)] = cost[a] * scale;
      cost_[sz(r)] = -cost_[sz(e)];
      forward_of_arc_[a] = e;
      max_cost_ = cost_[sz(e)] > max_cost_ ? cost_[sz(e)] : max_cost_;
    }
    excess_.assign(supply.data, supply.data + supply.size);
    price_.assign(n, 0);
    current_.assign(first_.begin(), first_.end() - 1);
    queue_.assign(n + 1, 0);
    queued_.assign(n, 0);
    rank_.assign(n, 0);
    scanned_.assign(n, 0);
  }

  // Runs the refines down to eps = 1; false when the supplies cannot be met.
  bool solve() {
    std::int64_t eps = max_cost_ / kAlpha > 1 ? max_cost_ / kAlpha : 1;
    // First refine: prices start at 0 and an optimal price vector spans at most
    // (n - 1) max cost, so an excess node never needs to fall below this.
    std::int64_t floor = -static_cast<std::int64_t>(n_) * (max_cost_ + 2 * eps) - 1;
    while (true) {
      if (!refine(eps, floor)) return false;
      if (eps == 1) break;
      eps = eps / kAlpha > 1 ? eps / kAlpha : 1;
      std::int64_t lowest = 0;
      for (std::size_t v = 0; v < n_; ++v) lowest = price_[v] < lowest ? price_[v] : lowest;
      // The previous flow was eps_prev-optimal with eps_prev < alpha (eps + 1).
      floor = lowest - static_cast<std::int64_t>(n_ + 1) * (2 * kAlpha + 2) * eps;
    }
    for (std::size_t v = 0; v < n_; ++v) {
      if (excess_[v] != 0) return false;  // never seen; the caller then solves otherwise
    }
    return true;
  }

  std::int64_t flow(std::size_t a) const {
    const std::int32_t e = forward_of_arc_[a];
    return e < 0 ? 0 : residual_[sz(rev_[sz(e)])];
  }

 private:
  std::int64_t reduced(std::size_t u, std::int32_t e) const {
    return cost_[sz(e)] + price_[u] - price_[sz(to_[sz(e)])];
  }

  void push(std::int32_t e, std::size_t u, std::int64_t delta) {
    residual_[sz(e)] -= delta;
    residual_[sz(rev_[sz(e)])] += delta;
    excess_[u] -= delta;
    excess_[sz(to_[sz(e)])] += delta;
  }

  void enqueue(std::int32_t v) {
    if (queued_[sz(v)]) return;
    queued_[sz(v)] = 1;
    queue_[tail_q_] = v;
    tail_q_ = tail_q_ + 1 == queue_.size() ? 0 : tail_q_ + 1;
  }

  // The lowest price node u may take: floor (the feasibility bound) when u holds excess,
  // hard_floor_ (the int64 headroom) otherwise.
  std::int64_t lowest_allowed(std::size_t u, std::int64_t floor) const {
    return excess_[u] > 0 ? floor : hard_floor_;
  }

  // Lowers the price of u until its cheapest residual arc has reduced cost -eps; false when u
  // has no residual arc or its price falls below what it may take (see lowest_allowed).
  bool relabel(std::size_t u, std::int64_t eps, std::int64_t floor) {
    std::int64_t best = std::numeric_limits<std::int64_t>::max();
    const std::int32_t end = first_[u + 1];
    for (std::int32_t e = first_[u]; e < end; ++e) {
      if (residual_[sz(e)] == 0) continue;
      const std::int64_t rc = reduced(u, e);
      if (rc < best) best = rc;
    }
    if (best == std::numeric_limits<std::int64_t>::max()) return false;
    price_[u] -= best + eps;
    current_[u] = first_[u];
    return price_[u] >= lowest_allowed(u, floor);
  }

  // Global price update (see the file comment). False when a node with excess reaches no
  // deficit node, or a price falls below floor.
  bool price_update(std::int64_t eps, std::int64_t floor) {
    const std::int64_t limit = static_cast<std::int64_t>(n_);
    if (buckets_.size() < sz(limit) + 2) buckets_.resize(sz(limit) + 2);
    for (auto& b : buckets_) b.clear();
    std::fill(scanned_.begin(), scanned_.end(), 0);
    std::int64_t excess_left = 0;
    for (std::size_t v = 0; v < n_; ++v) {
      rank_[v] = std::numeric_limits<std::int64_t>::max();
      if (excess_[v] > 0) excess_left += excess_[v];
      if (excess_[v] < 0) {
        rank_[v] = 0;
        buckets_[0].push_back(static_cast<std::int32_t>(v));
      }
    }
    bool beyond = false;
    std::int64_t k = 0;
    for (; k <= limit && excess_left > 0; ++k) {
      auto& bucket = buckets_[sz(k)];
      for (std::size_t i = 0; i < bucket.size() && excess_left > 0; ++i) {
        const std::int32_t v = bucket[i];
        if (scanned_[sz(v)] || rank_[sz(v)] != k) continue;
        scanned_[sz(v)] = 1;
        if (excess_[sz(v)] > 0) excess_left -= excess_[sz(v)];
        // Arcs u -> v with residual capacity are the reverses of v's arcs whose reverse has it.
        const std::int32_t end = first_[sz(v) + 1];
        for (std::int32_t e = first_[sz(v)]; e < end; ++e) {
          const std::int32_t r = rev_[sz(e)];
          if (residual_[sz(r)] == 0) continue;
          const std::int32_t u = to_[sz(e)];
          if (scanned_[sz(u)]) continue;
          const std::int64_t rc = reduced(sz(u), r);
          const std::int64_t len = (rc >= 0 ? rc / eps : -((-rc + eps - 1) / eps)) + 1;
          const std::int64_t nr = k + (len > 0 ? len : 0);
          if (nr >= rank_[sz(u)]) continue;
          if (nr > limit) {
            beyond = true;
            continue;
          }
          rank_[sz(u)] = nr;
          buckets_[sz(nr)].push_back(u);
        }
      }
      if (excess_left == 0) break;
    }
    if (excess_left > 0 && !beyond) return false;  // an excess reaches no deficit
    const std::int64_t stop = excess_left > 0 ? limit + 1 : k;
    for (std::size_t v = 0; v < n_; ++v) {
      const std::int64_t r = scanned_[v] ? rank_[v] : stop;
      if (r == 0) continue;
      price_[v] -= r * eps;
      current_[v] = first_[v];
      if (price_[v] < lowest_allowed(v, floor)) return false;
    }
    return true;
  }

  bool refine(std::int64_t eps, std::int64_t floor) {
    // Saturate the arcs of negative reduced cost: the pseudoflow becomes 0-optimal.
    for (std::size_t u = 0; u < n_; ++u) {
      const std::int32_t end = first_[u + 1];
      for (std::int32_t e = first_[u]; e < end; ++e) {
        if (residual_[sz(e)] > 0 && reduced(u, e) < 0) push(e, u, residual_[sz(e)]);
      }
    }
    head_q_ = 0;
    tail_q_ = 0;
    for (std::size_t v = 0; v < n_; ++v) {
      if (excess_[v] > 0) enqueue(static_cast<std::int32_t>(v));
    }
    if (head_q_ == tail_q_) return true;
    if (!price_update(eps, floor)) return false;
    const std::int64_t update_every = kUpdateEvery * static_cast<std::int64_t>(n_) + 64;
    std::int64_t relabels = 0;
    while (head_q_ != tail_q_) {
      const std::int32_t start = queue_[head_q_];
      if (excess_[sz(start)] <= 0) {
        queued_[sz(start)] = 0;
        head_q_ = head_q_ + 1 == queue_.size() ? 0 : head_q_ + 1;
        continue;
      }
      path_.clear();
      path_.push_back(start);
      std::int32_t tip = start;
      while (path_.size() <= kMaxPath && excess_[sz(tip)] >= 0) {
        const std::size_t t = sz(tip);
        const std::int32_t end = first_[t + 1];
        const std::int64_t pt = price_[t];
        std::int32_t e = current_[t];
        for (; e < end; ++e) {
          if (residual_[sz(e)] > 0 && cost_[sz(e)] + pt - price_[sz(to_[sz(e)])] < 0) break;
        }
        if (e < end) {
          current_[t] = e;
          tip = to_[sz(e)];
          path_.push_back(tip);
          continue;
        }
        if (!relabel(t, eps, floor)) return false;
        ++relabels;
        if (tip != start) {
          path_.pop_back();
          tip = path_.back();
        }
      }
      // Push along the path, as much as each node holds and each arc takes.
      for (std::size_t i = 0; i + 1 < path_.size(); ++i) {
        const std::size_t u = sz(path_[i]);
        const std::int32_t e = current_[u];
        const std::int64_t have = excess_[u];
        const std::int64_t delta = have < residual_[sz(e)] ? have : residual_[sz(e)];
        if (delta <= 0) break;
        const std::int32_t v = path_[i + 1];
        push(e, u, delta);
        if (excess_[sz(v)] > 0) enqueue(v);
      }
      if (relabels >= update_every) {
        relabels = 0;
        if (!price_update(eps, floor)) return false;
      }
    }
    return true;
  }

  std::size_t n_;
  std::int64_t hard_floor_;                   // no price goes below this (int64 headroom)
  std::vector<std::int32_t> forward_of_arc_;  // input arc -> forward residual arc, -1 if dropped
  std::vector<std::int32_t> first_;           // CSR offsets of the residual out-arcs
  std::vector<std::int32_t> to_;              // head of each residual arc
  std::vector<std::int32_t> rev_;             // the opposite residual arc
  std::vector<std::int64_t> residual_;        // residual capacity
  std::vector<std::int64_t> cost_;            // scaled cost (negated on reverse arcs)
  std::vector<std::int64_t> excess_;          // supply minus net outflow
  std::vector<std::int64_t> price_;           // node prices (reduced cost c + p(u) - p(v))
  std::vector<std::int32_t> current_;         // current-arc pointers
  std::vector<std::int32_t> queue_;           // FIFO ring of active nodes
  std::vector<char> queued_;                  // node is in queue_
  std::size_t head_q_ = 0;
  std::size_t tail_q_ = 0;
  std::vector<std::int32_t> path_;                    // partial augmentation path (nodes)
  std::vector<std::int64_t> rank_;                    // price update distances
  std::vector<char> scanned_;                         // price update: distance final
  std::vector<std::vector<std::int32_t>> buckets_;    // price update buckets (lazy)
  std::int64_t max_cost_ = 0;                         // largest scaled cost
};

}  // namespace

MinCostFlowResult cost_scaling(std::int64_t n_nodes, Span<std::int32_t> tail,
                               Span<std::int32_t> head, Span<std::int64_t> capacity,
                               Span<std::int64_t> cost, Span<std::int64_t> supply) {
  MinCostFlowResult result;
  detail::FlowTotals totals;
  // Scaled costs reach (n + 1) max cost and prices stay above about -4 (n + 1) times that
  // (they never rise); a price that would go lower ends the solve (hard floor
  // -4 (n + 2)^2 (max cost + 1)), and a reduced cost adds two prices and a cost, so
  // 16 (n + 2)^2 (max cost + 1) must fit int64. So must every excess: at most the total supply
  // plus the capacities, each clamped to the total supply.
  const Wide n2 = static_cast<Wide>(n_nodes) + 2;
  auto bound = [n2](const detail::FlowTotals& t) {
    const Wide b = 16 * n2 * n2 * (t.max_cost + 1);
    return b > t.flow_bound ? b : t.flow_bound;
  };
  if (!detail::start_min_cost_flow(n_nodes, tail, head, capacity, cost, supply, bound, result,
                                   totals)) {
    return result;
  }
  if (totals.positive == 0) {
    result.status = MinCostFlowStatus::kOptimal;  // zero flow, costs are nonnegative
    return result;
  }
  CostScaling solver(static_cast<std::size_t>(n_nodes), tail, head, capacity, cost, supply,
                     static_cast<std::int64_t>(totals.positive), n_nodes + 1,
                     -static_cast<std::int64_t>(4 * n2 * n2 * (totals.max_cost + 1)));
  if (!solver.solve()) {
    // Infeasible supplies (or, never seen, a price at the hard floor): the primal-dual method
    // computes the answer, a minimum-cost maximum flow when the supplies cannot be met.
    return min_cost_flow(n_nodes, tail, head, capacity, cost, supply);
  }
  for (std::size_t a = 0; a < tail.size; ++a) {
    result.flow[a] = solver.flow(a);
    result.total_cost += result.flow[a] * cost[a];
  }
  result.flow_value = static_cast<std::int64_t>(totals.positive);
  result.status = MinCostFlowStatus::kOptimal;
  return result;
}

}  // namespace spare_fast
