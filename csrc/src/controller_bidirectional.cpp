// Bidirectional shortest augmenting paths for the failure path near saturation.
//
// Why. When spare capacity is nearly exhausted (sum over alive groups of depth - load is a
// handful), a forward search from a displaced type explores about N / F groups before it
// reaches one of the F groups with room, and at F = 1 that is the whole residual graph: tens to
// hundreds of milliseconds at N = 100,000. Searching from both ends and stopping when the two
// balls meet explores about sqrt(N) nodes per side instead.
//
// Exactness. Both searches run Dijkstra (a 0-1 BFS in the zero state) on the reduced costs
// c_p(u, v) = c(u, v) + p(u) - p(v) >= 0: forward from the source type, backward from the
// sink over reversed residual edges. Every label that is found on both sides gives a path
// (d_f(v) + d_b(v)); the search stops once top_f + top_b >= mu, the best such sum, which is
// then the shortest distance (the classic bidirectional Dijkstra criterion). The Johnson
// update is
//   psi(v) = min(d_f(v), a) + max(0, mu - a - d_b(v)),  a = min(top_f, mu),
// with d_f = inf off the forward-settled set and d_b = inf off the backward-settled set. Each
// term alone is a feasible potential shift (a truncated distance); the two change only on
// disjoint sets (the forward core d_f < a and the backward core d_b < mu - a), and an edge
// from the forward core into the backward core costs at least mu - d_f(u) - d_b(v), which is
// what the two shifts together take from it, so psi keeps every reduced cost >= 0. On a
// shortest path d_f + d_b = mu, so psi(v) = d_f(v) there: every path edge becomes tight and
// its reversal costs 0. SSP from a min-cost flow thus stays exact, as with the forward search.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include "spare_fast/controller.hpp"

namespace spare_fast {

namespace {

constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::max() / 4;

// A Dijkstra queue that is a 0-1 BFS deque while every reduced cost is 0 or 1.
class SearchQueue {
 public:
  SearchQueue(bool bfs01, std::vector<std::pair<std::int64_t, std::int32_t>>& heap,
              std::deque<std::pair<std::int64_t, std::int32_t>>& deque)
      : bfs01_(bfs01), heap_(heap), deque_(deque) {
    heap_.clear();
    deque_.clear();
  }
  void push(std::int64_t d, std::int32_t v) {
    if (bfs01_) {
      if (d == cur_) {
        deque_.emplace_front(d, v);
      } else {
        deque_.emplace_back(d, v);
      }
    } else {
      heap_.emplace_back(d, v);
      std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
    }
  }
  bool empty() const { return bfs01_ ? deque_.empty() : heap_.empty(); }
  std::size_t size() const { return bfs01_ ? deque_.size() : heap_.size(); }
  // A lower bound on every unsettled label (stale entries only lower it).
  std::int64_t top() const {
    if (empty()) return kNone;
    return bfs01_ ? deque_.front().first : heap_.front().first;
  }
  std::pair<std::int64_t, std::int32_t> pop() {
    std::pair<std::int64_t, std::int32_t> e;
    if (bfs01_) {
      e = deque_.front();
      deque_.pop_front();
    } else {
      std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
      e = heap_.back();
      heap_.pop_back();
    }
    return e;
  }
  // The 0-1 BFS pushes relative to the distance of the node being expanded.
  void expanding(std::int64_t d) { cur_ = d; }

 private:
  bool bfs01_;
  std::int64_t cur_ = 0;
  std::vector<std::pair<std::int64_t, std::int32_t>>& heap_;
  std::deque<std::pair<std::int64_t, std::int32_t>>& deque_;
};

}  // namespace

bool Controller::near_saturation() const {
  // Spare capacity F = S * alive - T (the few unassigned types of an event aside). A forward
  // search meets a group with room after about alive / F groups; the backward search starts
  // from all F of them, so the two-ended search pays about F + sqrt(alive / F) per side and
  // wins while F is below a few sqrt(alive): F^2 < 12 alive (measured at N = 100,000,
  // r = 20 among thresholds alive/16, /64, /256: /64, i.e. F < 780 at 50,000 alive, was best).
  const std::int64_t slack = static_cast<std::int64_t>(price_depth_) * n_alive_ - n_types_;
  return slack < 0 || slack * slack < 12 * static_cast<std::int64_t>(n_alive_);
}

void Controller::reserve_backward_search() {
  // At construction, so that no decision pays for touching these pages first.
  const std::size_t nodes =
      static_cast<std::size_t>(n_types_) + static_cast<std::size_t>(n_groups_) + 1;
  bnode_.assign(nodes, BackNode{});
  bsettled_.assign(nodes, 0);
  fbits_.assign((nodes + 63) / 64, 0);
  bbits_.assign((nodes + 63) / 64, 0);
}

void Controller::seed_free_groups() {
  prepare_room(price_depth_);
  free_cache_.clear();
  for_each_room_group([this](std::int32_t g) { free_cache_.push_back(g); });
}

const std::vector<std::int32_t>& Controller::free_groups(std::int64_t unassigned) {
  // The free capacity is S * alive - (T - unassigned). Loads only grow between rebuilds, except
  // through events that also change what is free (rejoins, restarts, depth changes); so if the
  // cached groups still hold all of it, no other group has room. Otherwise scan all N.
  const std::int64_t s = price_depth_;
  const std::int64_t total = s * n_alive_ - (static_cast<std::int64_t>(n_types_) - unassigned);
  std::int64_t cached = 0;
  std::size_t kept = 0;
  for (const std::int32_t g : free_cache_) {
    const auto gi = static_cast<std::size_t>(g);
    if (alive_[gi] && load_[gi] < s) {
      cached += s - load_[gi];
      free_cache_[kept++] = g;
    }
  }
  free_cache_.resize(kept);
  if (cached != total) seed_free_groups();
  return free_cache_;
}

bool Controller::augment_bidirectional(std::int32_t source, std::int64_t unassigned) {
  const std::int32_t T = n_types_;
  const auto R = static_cast<std::size_t>(redundancy_);
  const auto H = static_cast<std::size_t>(height_);
  const std::int32_t sink = T + n_groups_;
  const std::size_t nodes = static_cast<std::size_t>(sink) + 1;
  if (bnode_.size() != nodes) reserve_backward_search();
  // Room and liveness from the bitmaps (in cache) rather than the per-group arrays.
  prepare_room(price_depth_);
  SearchNode* const node = node_.data();
  BackNode* const bnode = bnode_.data();
  const bool bfs01 = unit_costs_ && zero_state_;
  // Which nodes each side has labelled in this search, as bitmaps (25 KB each at
  // N = 100,000: they stay in cache, where the search records do not): a node's record is read
  // only once a side knows the node. Cleared whole per search, which costs far less than the
  // search.
  std::fill(fbits_.begin(), fbits_.end(), 0);
  std::fill(bbits_.begin(), bbits_.end(), 0);
  std::uint64_t* const fbits = fbits_.data();
  std::uint64_t* const bbits = bbits_.data();
  auto test = [](const std::uint64_t* bits, std::int32_t v) {
    const auto vi = static_cast<std::size_t>(v);
    return ((bits[vi >> 6] >> (vi & 63)) & 1U) != 0;
  };
  auto mark = [](std::uint64_t* bits, std::int32_t v) {
    const auto vi = static_cast<std::size_t>(v);
    bits[vi >> 6] |= std::uint64_t{1} << (vi & 63);
  };
  // In the 0-1 state every potential is 0 (controller.hpp): no record is read for it.
  auto pot = [&](std::int32_t v) { return bfs01 ? std::int64_t{0} : potential(v); };
  SearchQueue fq(bfs01, heap_, deque_);
  SearchQueue bq(bfs01, bheap_, bdeque_);
  settled_list_.clear();
  bsettled_list_.clear();

  std::int64_t mu = kNone;
  std::int32_t meet = -1;
  auto f_labelled = [&](std::int32_t v) { return test(fbits, v); };
  auto b_labelled = [&](std::int32_t v) { return test(bbits, v); };
  auto relax_f = [&](std::int32_t from, std::int32_t to, std::int64_t nd, bool queue) {
    SearchNode& n = node[to];
    const bool labelled = f_labelled(to);
    if (!labelled || nd < n.dist) {
      if (!labelled) {
        n.settled = 0;
        mark(fbits, to);
      }
      n.dist = nd;
      n.parent = from;
      if (queue) fq.push(nd, to);
      if (b_labelled(to) && nd + bnode[to].dist < mu) {
        mu = nd + bnode[to].dist;
        meet = to;
      }
    }
  };
  auto relax_b = [&](std::int32_t from, std::int32_t to, std::int64_t nd) {
    BackNode& n = bnode[to];
    const bool labelled = b_labelled(to);
    if (!labelled || nd < n.dist) {
      if (!labelled) {
        bsettled_[static_cast<std::size_t>(to)] = 0;
        mark(bbits, to);
      }
      n.dist = nd;
      n.next = from;
      bq.push(nd, to);
      if (f_labelled(to) && node[to].dist + nd < mu) {
        mu = node[to].dist + nd;
        meet = to;
      }
    }
  };

  // Forward root: the source type. Backward root: the sink, expanded at once (its in-edges
  // come from the alive groups with room). In the 0-1 state every such group is at backward
  // distance 0, so they are not pushed: the free list stands for them in the backward queue
  // (counted in its size, its top 0 while one remains) and each is labelled only when popped,
  // before any other backward node, which is a valid Dijkstra order. A search that the size
  // rule keeps mostly forward (a long free list, a short forward queue) then never touches
  // most of them; a forward label that reaches one meets the sink through its sink edge.
  relax_f(-1, source, 0, true);
  const std::vector<std::int32_t>& roots = free_groups(unassigned);
  std::size_t next_root = bfs01 ? 0 : roots.size();
  {
    const auto si = static_cast<std::size_t>(sink);
    bnode[sink].dist = 0;
    bnode[sink].next = -1;
    bsettled_[si] = 1;
    mark(bbits, sink);
    bsettled_list_.push_back(sink);
    if (!bfs01) {
      const std::int64_t p_sink = potential(sink);
      for (const std::int32_t g : roots) {
        const std::int64_t rc = potential(T + g) - p_sink;
        if (rc < 0) throw std::logic_error("controller: negative reduced cost (sink edge)");
        relax_b(sink, T + g, rc);
      }
    }
  }
  const std::int64_t p_sink = pot(sink);
  auto b_size = [&]() { return roots.size() - next_root + bq.size(); };
  auto b_top = [&]() { return next_root < roots.size() ? std::int64_t{0} : bq.top(); };

  while (!fq.empty() && b_size() > 0) {
    if (fq.top() + b_top() >= mu) break;
    if (fq.size() <= b_size()) {
      // Not a structured binding: the provided-types lambda below captures d and v, which
      // C++17 allows only for plain variables.
      const std::pair<std::int64_t, std::int32_t> top_entry = fq.pop();
      const std::int64_t d = top_entry.first;
      const std::int32_t v = top_entry.second;
      const auto vi = static_cast<std::size_t>(v);
      if (node[v].settled || d != node[v].dist) continue;
      fq.expanding(d);
      node[v].settled = 1;
      settled_list_.push_back(v);
      const std::int64_t pv = pot(v);
      if (v < T) {
        const std::int32_t provider = assign_[vi];
        for (std::size_t k = vi * R; k < (vi + 1) * R; ++k) {
          // As in augment_from: in the 0-1 state an edge that cannot beat mu is skipped
          // before the group's state is read.
          const auto [g, layer] = holder_at(k);
          if (bfs01 && d + cost_at(g, layer) >= mu) continue;
          if (!is_alive(g) || g == provider) continue;
          const std::int32_t gn = T + g;
          if (f_labelled(gn) && node[gn].settled) continue;
          const std::int64_t pg = pot(gn);
          const std::int64_t rc = cost_at(g, layer) + pv - pg;
          if (rc < 0) throw std::logic_error("controller: negative reduced cost (type edge)");
          relax_f(v, gn, d + rc, true);
          if (has_room(g)) {
            const std::int64_t rcs = pg - p_sink;
            if (rcs < 0) throw std::logic_error("controller: negative reduced cost (sink edge)");
            relax_f(gn, sink, node[gn].dist + rcs, false);
          }
        }
      } else {
        const std::int32_t g = v - T;
        for_each_provided(g, [&](std::int32_t t, std::int32_t l) {
          if (f_labelled(t) && node[t].settled) return;
          const std::int64_t rc = -cost_at(g, l) + pv - pot(t);
          if (rc < 0) throw std::logic_error("controller: negative reduced cost (group edge)");
          relax_f(v, t, d + rc, true);
        });
      }
    } else {
      std::int64_t d = 0;
      std::int32_t v = -1;
      if (next_root < roots.size()) {
        // A free group, labelled now at distance 0 (the sink edge costs 0 in the 0-1 state).
        v = T + roots[next_root++];
        BackNode& n = bnode[v];
        if (b_labelled(v) && bsettled_[static_cast<std::size_t>(v)]) continue;
        bsettled_[static_cast<std::size_t>(v)] = 0;
        mark(bbits, v);
        n.dist = 0;
        n.next = sink;
        if (f_labelled(v) && node[v].dist < mu) {
          mu = node[v].dist;
          meet = v;
        }
      } else {
        std::tie(d, v) = bq.pop();
      }
      const auto vi = static_cast<std::size_t>(v);
      if (bsettled_[vi] || d != bnode[v].dist) continue;
      bq.expanding(d);
      bsettled_[vi] = 1;
      bsettled_list_.push_back(v);
      const std::int64_t pv = pot(v);
      if (v < T) {
        // Reversed group -> type edge: from the type's provider (an unassigned type has none).
        const std::int32_t g = assign_[vi];
        if (g < 0) continue;
        const std::int32_t gn = T + g;
        if (b_labelled(gn) && bsettled_[static_cast<std::size_t>(gn)]) continue;
        const std::size_t k = slot_of(v, g);
        const std::int64_t rc = -cost_of_slot(static_cast<std::int64_t>(k)) + pot(gn) - pv;
        if (rc < 0) throw std::logic_error("controller: negative reduced cost (group edge)");
        relax_b(v, gn, d + rc);
      } else {
        // Reversed type -> group edges: the types g holds but does not provide.
        const std::int32_t g = v - T;
        const auto gi = static_cast<std::size_t>(g);
        const auto top = static_cast<std::size_t>(provided_layers(g));
        for (std::size_t l = 0; l < H; ++l) {
          if (bfs01 && d + cost_at(g, static_cast<std::int32_t>(l)) >= mu) continue;
          const std::int32_t t = stacks_[gi * H + l];
          // Unassigned types are labelled too (they are dead ends backward): the other types
          // still pending in this event need exact backward distances for psi.
          if (l < top && assign_[static_cast<std::size_t>(t)] == g) continue;
          if (b_labelled(t) && bsettled_[static_cast<std::size_t>(t)]) continue;
          const std::int64_t rc = cost_at(g, static_cast<std::int32_t>(l)) + pot(t) - pv;
          if (rc < 0) throw std::logic_error("controller: negative reduced cost (type edge)");
          relax_b(v, t, d + rc);
        }
      }
    }
  }
  if (meet < 0) return false;

  // The path: source .. meet by forward parents, meet .. sink by backward links; a zero-cost
  // cycle where the two halves cross is cut at the first shared node.
  path_fwd_.clear();
  for (std::int32_t v = meet; v != -1; v = node[v].parent) {
    path_fwd_.push_back(v);
  }
  std::reverse(path_fwd_.begin(), path_fwd_.end());
  path_bwd_.clear();
  for (std::int32_t v = meet; v != -1; v = bnode[v].next) {
    path_bwd_.push_back(v);
  }
  std::size_t cut_f = path_fwd_.size() - 1;
  std::size_t cut_b = 0;
  for (std::size_t i = 0; i < path_fwd_.size(); ++i) {
    const auto it = std::find(path_bwd_.begin(), path_bwd_.end(), path_fwd_[i]);
    if (it != path_bwd_.end()) {
      cut_f = i;
      cut_b = static_cast<std::size_t>(it - path_bwd_.begin());
      break;
    }
  }
  path_fwd_.resize(cut_f + 1);
  path_fwd_.insert(path_fwd_.end(), path_bwd_.begin() + static_cast<std::ptrdiff_t>(cut_b) + 1,
                   path_bwd_.end());
  // path_fwd_ is now source, g1, t1, g2, ..., gk, sink.
  if (path_fwd_.size() < 3 || path_fwd_.back() != sink || path_fwd_.front() != source) {
    throw std::logic_error("controller: malformed bidirectional path");
  }

  // Johnson update psi (see the header comment), lazily: the shift adds a to every node, the
  // forward core takes back a - d_f, the backward core gets mu - a - d_b on top.
  const std::int64_t a = std::min(fq.top(), mu);
  pot_shift_ += a;
  for (const std::int32_t v : settled_list_) {
    const std::int64_t d = node[v].dist;
    if (d < a) add_potential(v, d - a);
  }
  for (const std::int32_t v : bsettled_list_) {
    const std::int64_t d = bnode[v].dist;
    if (d < mu - a) add_potential(v, mu - a - d);
  }
  if (mu != 0) zero_state_ = false;

  // Augment along the path: each type moves to the next group; the last group gains a type.
  const std::size_t last = path_fwd_.size() - 2;
  const std::int32_t best_group = path_fwd_[last] - T;
  load_[static_cast<std::size_t>(best_group)] += 1;
  note_load(best_group);
  if (log_undo_) undo_.emplace_back(-1, best_group);
  for (std::size_t i = 0; i < last; i += 2) {
    const std::int32_t t = path_fwd_[i];
    if (log_undo_) undo_.emplace_back(t, assign_[static_cast<std::size_t>(t)]);
    assign_type(t, path_fwd_[i + 1] - T);
    record_change(t);
  }
  return true;
}

}  // namespace spare_fast
