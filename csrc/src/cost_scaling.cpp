// Minimum-cost flow by cost scaling (push-relabel with epsilon-refinement); see
// network_simplex.hpp for the declaration, the bounds and the references.
//
// Residual network: every input arc with positive capacity and distinct ends gives a forward
// residual arc at its tail and a reverse one (cost negated, capacity 0) at its head, stored in
// CSR order by tail, each as one record with its head, its opposite, its cost and residual
// capacity, and the capacity of the pair (so the opposite's residual capacity is read without
// a second, random, load). Costs are multiplied by n + 1, so that a flow that is 1-optimal for
// the scaled costs is (1 / (n + 1))-optimal for the input costs, hence optimal (integer costs).
//
// refine(eps) starts from an (alpha eps)-optimal flow (the zero pseudoflow with zero prices in
// the first phase), saturates every residual arc of negative reduced cost (the pseudoflow is
// then 0-optimal) and routes the excesses to the deficits by partial augment-relabel: from an
// active node, a path of admissible arcs (residual, reduced cost < 0) grows up to kMaxPath arcs
// or until it reaches a node with a deficit; a node without an admissible arc is relabelled
// (its price drops until its cheapest residual arc has reduced cost -eps, which becomes its
// current arc) and the path retreats. Flow is then pushed along the path. Every refine opens
// with a global price update, repeated every kUpdateEvery n relabels: a bucket-based Dijkstra
// from the deficit nodes over the reversed residual arcs, with arc lengths
// floor(reduced cost / eps) + 1 in units of eps, that lowers every price by its distance; it
// keeps the flow eps-optimal and makes a shortest path admissible from every node it reaches.
//
// Early end: once eps is below one unit of the input costs (eps < n + 1 scaled), the feasible
// flow a refine leaves is often optimal already, while the refines down to eps = 1 would still
// take about as long as the earlier ones. After each such refine, certify_optimal() looks for
// prices that make the flow 1-optimal without moving any flow (Goldberg's price refinement, as
// LEMON's and CS2's cost scaling apply it between phases): a search for the least lowering of
// each price, largest lowering first, that is given at most two scans' worth of arcs. When it
// runs into a negative cycle, the cycle is cancelled and the search runs once more. On success
// the flow is optimal and the solve ends; otherwise the cancellation is undone and prices are
// left as they were.
//
// Infeasibility: a node with excess that reaches no deficit node in the residual network
// (found by a price update) proves that the supplies cannot be met; so does a price that falls
// below what an eps-optimal flow allows when a feasible flow exists (Goldberg and Tarjan's
// bound: at most n eps below the price at the start of the refine, plus (alpha + 1) n eps
// counting the previous phase's slack). Either way the solve stops, and the primal-dual method
// computes the minimum-cost maximum flow that kInfeasible promises.
#include <algorithm>
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

constexpr std::int64_t kAlpha = 16;  // eps shrinks by this factor per refine
// Arcs per partial augmentation. On NETGEN-8 at 2^17 nodes 16-32 measured 15-25% faster than
// 4 (fewer retreats and relabels per unit of flow moved); 64 and more were slower again.
constexpr std::size_t kMaxPath = 32;
constexpr std::int64_t kUpdateEvery = 4;  // a price update every kUpdateEvery n relabels
constexpr std::int64_t kCertifyScans = 2;  // certify_optimal's work: scans of the residual arcs
// certify_optimal's negative cycles cancelled at most: on NETGEN-8 at 2^17 nodes one cycle (of
// 208 arcs, one unit of cost) stands between the flow of the refine at eps = 1,250 and the
// optimum, and cancelling it saves the last refine; where more remain (after eps = 20,000
// there, 40,000 at 2^18), four rounds did not reach the optimum and only cost searches.
constexpr std::int64_t kCancelRounds = 1;
constexpr std::int32_t kCertified = -2;    // lower_prices found prices that certify the flow

std::size_t sz(std::int64_t v) { return static_cast<std::size_t>(v); }

class CostScaling {
 public:
  CostScaling(std::size_t n, Span<std::int32_t> tail, Span<std::int32_t> head,
              Span<std::int64_t> capacity, Span<std::int64_t> cost, Span<std::int64_t> supply,
              std::int64_t cap_limit, std::int64_t scale, std::int64_t hard_floor)
      : n_(n), scale_(scale), hard_floor_(hard_floor), forward_of_arc_(tail.size, -1) {
    std::vector<std::int32_t> degree(n + 1, 0);
    auto kept = [&](std::size_t a) { return capacity[a] > 0 && tail[a] != head[a]; };
    for (std::size_t a = 0; a < tail.size; ++a) {
      if (!kept(a)) continue;
      ++degree[sz(tail[a])];
      ++degree[sz(head[a])];
    }
    first_.assign(n + 1, 0);
    for (std::size_t v = 0; v < n; ++v) first_[v + 1] = first_[v] + degree[v];
    arcs_.resize(sz(first_[n]));
    std::vector<std::int32_t> fill(first_.begin(), first_.end() - 1);
    for (std::size_t a = 0; a < tail.size; ++a) {
      if (!kept(a)) continue;
      const std::int32_t u = tail[a];
      const std::int32_t v = head[a];
      const std::int32_t e = fill[sz(u)]++;
      const std::int32_t r = fill[sz(v)]++;
      const std::int64_t c = cost[a] * scale;
      const std::int64_t cap = capacity[a] < cap_limit ? capacity[a] : cap_limit;
      arcs_[sz(e)] = ResidualArc{v, r, c, cap, cap};
      arcs_[sz(r)] = ResidualArc{u, e, -c, 0, cap};
      forward_of_arc_[a] = e;
      max_cost_ = c > max_cost_ ? c : max_cost_;
    }
    excess_.assign(supply.data, supply.data + supply.size);
    price_.assign(n, 0);
    current_.assign(first_.begin(), first_.end() - 1);
    queue_.assign(n + 1, 0);
    queued_.assign(n, 0);
    rank_.assign(n, 0);
  }

  // Runs the refines down to eps = 1, or until certify_optimal() proves the flow optimal;
  // false when the supplies cannot be met.
  bool solve() {
    std::int64_t eps = max_cost_ / kAlpha > 1 ? max_cost_ / kAlpha : 1;
    // First refine: prices start at 0 and an optimal price vector spans at most
    // (n - 1) max cost, so an excess node never needs to fall below this.
    std::int64_t floor = -static_cast<std::int64_t>(n_) * (max_cost_ + 2 * eps) - 1;
    while (true) {
      if (!refine(eps, floor)) return false;
      if (eps == 1) break;
      if (eps < scale_ && certify_optimal(eps)) break;
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
    return e < 0 ? 0 : arcs_[sz(arcs_[sz(e)].rev)].residual;
  }

 private:
  // A residual arc: what a scan of its tail's arcs reads, in one record.
  struct ResidualArc {
    std::int32_t to;        // head
    std::int32_t rev;       // the opposite residual arc
    std::int64_t cost;      // scaled cost (negated on reverse arcs)
    std::int64_t residual;  // residual capacity
    std::int64_t pair;      // residual capacity of this arc and its opposite together
  };

  struct Cancelled {  // certify_optimal's undo log: delta pushed along arc
    std::int32_t arc;
    std::int64_t delta;
  };

  struct HeapItem {  // certify_optimal's max-heap of (lowering, node)
    std::int64_t lower;
    std::int32_t node;
    bool operator<(const HeapItem& o) const { return lower < o.lower; }
  };

  void push(std::int32_t e, std::size_t u, std::int64_t delta) {
    ResidualArc& a = arcs_[sz(e)];
    a.residual -= delta;
    arcs_[sz(a.rev)].residual += delta;
    excess_[u] -= delta;
    excess_[sz(a.to)] += delta;
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

  // Lowers the price of u until its cheapest residual arc has reduced cost -eps. The arcs from
  // scanned_from on were scanned by the caller, who found none admissible: best is their least
  // reduced cost and best_arc the first arc with it (-1: none residual). That arc (or an
  // earlier one of the same reduced cost) becomes u's current arc: the arcs before it that the
  // new price makes admissible are found at u's next relabel, which then keeps the price. False
  // when u has no residual arc or its price falls below what it may take (see lowest_allowed).
  bool relabel(std::size_t u, std::int32_t scanned_from, std::int64_t best,
               std::int32_t best_arc, std::int64_t eps, std::int64_t floor) {
    const std::int64_t pu = price_[u];
    for (std::int32_t e = first_[u]; e < scanned_from; ++e) {
      const ResidualArc& a = arcs_[sz(e)];
      if (a.residual == 0) continue;
      const std::int64_t rc = a.cost + pu - price_[sz(a.to)];
      if (rc <= best) {
        best = rc;
        best_arc = e;
      }
    }
    if (best_arc < 0) return false;
    price_[u] -= best + eps;
    current_[u] = best_arc;
    return price_[u] >= lowest_allowed(u, floor);
  }

  // Global price update (see the file comment). False when a node with excess reaches no
  // deficit node, or a price falls below floor. rank_[v] is v's tentative distance in units of
  // eps while v is unscanned and -1 - distance once scanned (one random load per arc tells
  // both); the buckets are lazy (a node moved nearer leaves a stale entry that is skipped).
  bool price_update(std::int64_t eps, std::int64_t floor) {
    const std::int32_t limit = static_cast<std::int32_t>(n_);
    constexpr std::int32_t kFar = std::numeric_limits<std::int32_t>::max();
    std::int64_t excess_left = 0;
    buckets_used_ = 0;
    for (std::size_t v = 0; v < n_; ++v) {
      rank_[v] = kFar;
      if (excess_[v] > 0) excess_left += excess_[v];
    }
    for (std::size_t v = 0; v < n_; ++v) {
      if (excess_[v] < 0) {
        rank_[v] = 0;
        bucket_push(0, static_cast<std::int32_t>(v));
      }
    }
    bool beyond = false;
    std::int32_t k = 0;
    for (; sz(k) < buckets_used_; ++k) {
      // Nodes join bucket k while it is scanned (arcs of length 0), hence the index loop.
      for (std::size_t i = 0; i < buckets_[sz(k)].size() && excess_left > 0; ++i) {
        const std::int32_t v = buckets_[sz(k)][i];
        if (rank_[sz(v)] != k) continue;  // stale: moved nearer, or scanned already
        rank_[sz(v)] = -1 - k;
        if (excess_[sz(v)] > 0) excess_left -= excess_[sz(v)];
        // Arcs u -> v with residual capacity are the opposites of v's arcs that are not full.
        const std::int32_t end = first_[sz(v) + 1];
        const std::int64_t pv = price_[sz(v)];
        for (std::int32_t e = first_[sz(v)]; e < end; ++e) {
          const ResidualArc& a = arcs_[sz(e)];
          const std::int32_t u = a.to;
          const std::int32_t ru = rank_[sz(u)];
          if (ru <= k) continue;               // scanned (negative), or as near already
          if (a.residual == a.pair) continue;  // u -> v has no residual capacity
          const std::int64_t rc = -a.cost + price_[sz(u)] - pv;  // reduced cost of u -> v
          const std::int64_t len = (rc >= 0 ? rc / eps : -((-rc + eps - 1) / eps)) + 1;
          const std::int64_t nr = k + (len > 0 ? len : 0);
          if (nr >= ru) continue;
          if (nr > limit) {
            beyond = true;
            continue;
          }
          rank_[sz(u)] = static_cast<std::int32_t>(nr);
          bucket_push(static_cast<std::int32_t>(nr), u);
        }
      }
      if (excess_left == 0) break;  // k: the distance every unscanned node gets
    }
    if (excess_left > 0 && !beyond) return false;  // an excess reaches no deficit
    const std::int64_t stop = excess_left > 0 ? std::int64_t{limit} + 1 : k;
    for (std::size_t v = 0; v < n_; ++v) {
      const std::int64_t r = rank_[v] < 0 ? -1 - std::int64_t{rank_[v]} : stop;
      if (r == 0) continue;
      price_[v] -= r * eps;
      current_[v] = first_[v];
      if (price_[v] < lowest_allowed(v, floor)) return false;
    }
    return true;
  }

  // Puts v in bucket k, clearing the buckets this update has not used yet.
  void bucket_push(std::int32_t k, std::int32_t v) {
    if (sz(k) >= buckets_.size()) buckets_.resize(sz(k) + 1);
    for (; buckets_used_ <= sz(k); ++buckets_used_) buckets_[buckets_used_].clear();
    buckets_[sz(k)].push_back(v);
  }

  // Called with a feasible, eps-optimal flow (eps < scale_): looks for prices under which every
  // residual arc has reduced cost >= -1, lowering each price by the least amount D(v) >= 0 with
  // rc(u, v) - D(u) + D(v) >= -1; such prices exist exactly when the flow is optimal. Nodes are
  // taken largest lowering first, so that each is usually scanned once. A search that runs past
  // kCertifyScans scans' worth of arcs, or lowers a price by more than n eps (no optimal flow
  // needs more: a path adds at most eps - 1 per arc), has most likely met a negative cycle: the
  // arcs that set the lowerings then close one, which is cancelled (it costs at least one unit
  // of the input costs less) before the search starts again, up to kCancelRounds times. When
  // no search succeeds, the cancellations are undone and prices are left as they were, so the
  // next refine starts from the eps-optimal flow it expects.
  bool certify_optimal(std::int64_t eps) {
    undo_.clear();
    bool ok = false;
    for (std::int64_t round = 0; round <= kCancelRounds; ++round) {
      const std::int32_t stuck = lower_prices(eps);
      if (stuck == kCertified) {
        ok = true;
        break;
      }
      if (stuck < 0 || round == kCancelRounds || !cancel_cycle(stuck)) break;
    }
    if (ok) {
      for (std::size_t v = 0; v < n_; ++v) {
        if (price_[v] - lower_[v] < hard_floor_) ok = false;
      }
    }
    if (!ok) {
      for (std::size_t i = undo_.size(); i-- > 0;) {
        const ResidualArc& a = arcs_[sz(undo_[i].arc)];
        push(a.rev, sz(a.to), undo_[i].delta);
      }
      return false;
    }
    for (std::size_t v = 0; v < n_; ++v) price_[v] -= lower_[v];
    return true;
  }

  // One search of certify_optimal: kCertified when every arc meets the bound with the lowerings
  // in lower_; otherwise the node lowered last (where a negative cycle shows), or -1 when the
  // search stopped without lowering anything past its first scan.
  std::int32_t lower_prices(std::int64_t eps) {
    std::int64_t budget = kCertifyScans * static_cast<std::int64_t>(arcs_.size());
    const std::int64_t most = static_cast<std::int64_t>(n_) * eps;
    lower_.assign(n_, 0);
    lowered_by_.assign(n_, -1);
    heap_.clear();
    std::int32_t last = -1;
    bool too_far = false;
    auto scan = [&](std::size_t u) {
      const std::int32_t end = first_[u + 1];
      const std::int64_t pu = price_[u] - lower_[u];
      for (std::int32_t e = first_[u]; e < end; ++e) {
        const ResidualArc& a = arcs_[sz(e)];
        if (a.residual == 0) continue;
        const std::size_t v = sz(a.to);
        const std::int64_t rc = a.cost + pu - (price_[v] - lower_[v]);
        if (rc >= -1) continue;
        lower_[v] += -1 - rc;
        lowered_by_[v] = e;
        last = a.to;
        if (lower_[v] > most) too_far = true;
        heap_.push_back(HeapItem{lower_[v], a.to});
        std::push_heap(heap_.begin(), heap_.end());
      }
      budget -= end - first_[u];
    };
    for (std::size_t u = 0; u < n_ && !too_far; ++u) scan(u);
    while (!heap_.empty()) {
      if (budget < 0 || too_far) return last;
      std::pop_heap(heap_.begin(), heap_.end());
      const HeapItem top = heap_.back();
      heap_.pop_back();
      if (top.lower == lower_[sz(top.node)]) scan(sz(top.node));  // else a stale entry
    }
    return too_far ? last : kCertified;
  }

  // Follows the arcs that set the lowerings back from v; if they close a cycle, pushes the
  // cycle's least residual capacity around it (logged in undo_) and returns true.
  bool cancel_cycle(std::int32_t v) {
    // Walk back at most n steps, marking the walk; the first node met twice is on the cycle.
    seen_.assign(n_, 0);
    std::int32_t x = v;
    for (std::size_t steps = 0; steps <= n_; ++steps) {
      if (seen_[sz(x)]) break;
      seen_[sz(x)] = 1;
      const std::int32_t e = lowered_by_[sz(x)];
      if (e < 0) return false;  // reached a node no arc lowered: no cycle behind v
      x = arcs_[sz(arcs_[sz(e)].rev)].to;  // the tail of e
    }
    if (!seen_[sz(x)]) return false;
    std::int64_t delta = std::numeric_limits<std::int64_t>::max();
    std::int32_t y = x;
    do {
      const std::int32_t e = lowered_by_[sz(y)];
      delta = arcs_[sz(e)].residual < delta ? arcs_[sz(e)].residual : delta;
      y = arcs_[sz(arcs_[sz(e)].rev)].to;
    } while (y != x);
    if (delta <= 0) return false;
    y = x;
    do {
      const std::int32_t e = lowered_by_[sz(y)];
      const std::int32_t tail = arcs_[sz(arcs_[sz(e)].rev)].to;
      push(e, sz(tail), delta);
      undo_.push_back(Cancelled{e, delta});
      y = tail;
    } while (y != x);
    return true;
  }

  bool refine(std::int64_t eps, std::int64_t floor) {
    // Saturate the arcs of negative reduced cost: the pseudoflow becomes 0-optimal.
    for (std::size_t u = 0; u < n_; ++u) {
      const std::int32_t end = first_[u + 1];
      const std::int64_t pu = price_[u];
      for (std::int32_t e = first_[u]; e < end; ++e) {
        const ResidualArc& a = arcs_[sz(e)];
        if (a.residual > 0 && a.cost + pu - price_[sz(a.to)] < 0) push(e, u, a.residual);
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
        // Look for an admissible arc from the current arc on, keeping the least reduced cost
        // seen for the relabel that follows if there is none.
        const std::size_t t = sz(tip);
        const std::int32_t end = first_[t + 1];
        const std::int64_t pt = price_[t];
        std::int64_t best = std::numeric_limits<std::int64_t>::max();
        std::int32_t best_arc = -1;
        std::int32_t e = current_[t];
        for (; e < end; ++e) {
          const ResidualArc& a = arcs_[sz(e)];
          if (a.residual == 0) continue;
          const std::int64_t rc = a.cost + pt - price_[sz(a.to)];
          if (rc < 0) break;
          if (rc < best) {
            best = rc;
            best_arc = e;
          }
        }
        if (e < end) {
          current_[t] = e;
          tip = arcs_[sz(e)].to;
          path_.push_back(tip);
          continue;
        }
        if (!relabel(t, current_[t], best, best_arc, eps, floor)) return false;
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
        const std::int64_t room = arcs_[sz(e)].residual;
        const std::int64_t delta = have < room ? have : room;
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
  std::int64_t scale_;                        // cost multiplier (n + 1)
  std::int64_t hard_floor_;                   // no price goes below this (int64 headroom)
  std::vector<std::int32_t> forward_of_arc_;  // input arc -> forward residual arc, -1 if dropped
  std::vector<std::int32_t> first_;           // CSR offsets of the residual out-arcs
  std::vector<ResidualArc> arcs_;             // residual arcs in CSR order by tail
  std::vector<std::int64_t> excess_;          // supply minus net outflow
  std::vector<std::int64_t> price_;           // node prices (reduced cost c + p(u) - p(v))
  std::vector<std::int32_t> current_;         // current-arc pointers
  std::vector<std::int32_t> queue_;           // FIFO ring of active nodes
  std::vector<char> queued_;                  // node is in queue_
  std::size_t head_q_ = 0;
  std::size_t tail_q_ = 0;
  std::vector<std::int32_t> path_;                // partial augmentation path (nodes)
  std::vector<std::int32_t> rank_;                // price update distances (see there)
  std::vector<std::vector<std::int32_t>> buckets_;  // price update buckets (lazy)
  std::size_t buckets_used_ = 0;                  // buckets cleared for this update
  std::vector<std::int64_t> lower_;               // certify_optimal: lowering of each price
  std::vector<HeapItem> heap_;                    // certify_optimal: nodes to scan
  std::vector<std::int32_t> lowered_by_;          // certify_optimal: arc that set lower_
  std::vector<char> seen_;                        // certify_optimal: the walk back
  std::vector<Cancelled> undo_;                   // certify_optimal: cycles cancelled
  std::int64_t max_cost_ = 0;                     // largest scaled cost
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
