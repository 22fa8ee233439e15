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
#include "controller_bidirectional.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

namespace spare_fast::detail {

bool TwoEndedSearch::near_saturation(const State& st) {
  // Spare capacity F = S * alive - T (the few unassigned types of an event aside). A forward
  // search meets a group with room after about alive / F groups; the backward search starts
  // from all F of them, so the two-ended search pays about F + sqrt(alive / F) per side and
  // wins while F is below a few sqrt(alive): F^2 < 12 alive (measured at N = 100,000,
  // r = 20 among thresholds alive/16, /64, /256: /64, i.e. F < 780 at 50,000 alive, was best).
  const std::int64_t slack = static_cast<std::int64_t>(st.price_depth_) * st.n_alive_ - st.n_types_;
  return slack < 0 || slack * slack < 12 * static_cast<std::int64_t>(st.n_alive_);
}

void TwoEndedSearch::reserve(const State& st) {
  // At construction, so that no decision pays for touching these pages first.
  const std::size_t nodes =
      static_cast<std::size_t>(st.n_types_) + static_cast<std::size_t>(st.n_groups_) + 1;
  bnode_.assign(nodes, BackNode{});
  bsettled_.assign(nodes, 0);
  fbits_.assign((nodes + 63) / 64, 0);
  bbits_.assign((nodes + 63) / 64, 0);
}

void TwoEndedSearch::seed_free_groups(State& st) {
  st.prepare_room(st.price_depth_);
  free_cache_.clear();
  st.for_each_room_group([this](std::int32_t g) { free_cache_.push_back(g); });
}

const std::vector<std::int32_t>& TwoEndedSearch::free_groups(State& st,
                                                             std::int64_t unassigned) {
  // The free capacity is S * alive - (T - unassigned). Loads only grow between rebuilds, except
  // through events that also change what is free (rejoins, restarts, depth changes); so if the
  // cached groups still hold all of it, no other group has room. Otherwise scan all N.
  const std::int64_t s = st.price_depth_;
  const std::int64_t total =
      s * st.n_alive_ - (static_cast<std::int64_t>(st.n_types_) - unassigned);
  std::int64_t cached = 0;
  std::size_t kept = 0;
  for (const std::int32_t g : free_cache_) {
    const auto gi = static_cast<std::size_t>(g);
    if (st.alive_[gi] && st.load_[gi] < s) {
      cached += s - st.load_[gi];
      free_cache_[kept++] = g;
    }
  }
  free_cache_.resize(kept);
  if (cached != total) seed_free_groups(st);
  return free_cache_;
}

bool TwoEndedSearch::augment(State& st, std::int32_t source, std::int64_t unassigned) {
  const std::int32_t T = st.n_types_;
  const auto R = static_cast<std::size_t>(st.redundancy_);
  const auto H = static_cast<std::size_t>(st.height_);
  const std::int32_t sink = T + st.n_groups_;
  const std::size_t nodes = static_cast<std::size_t>(sink) + 1;
  if (bnode_.size() != nodes) reserve(st);
  // Room and liveness from the bitmaps (in cache) rather than the per-group arrays.
  st.prepare_room(st.price_depth_);
  SearchNode* const node = st.node_.data();
  BackNode* const bnode = bnode_.data();
  std::uint8_t* const bsettled = bsettled_.data();
  const bool bfs01 = st.unit_costs_ && st.zero_state_;
  // Which nodes each side has labelled in this search, as bitmaps (25 KB each at
  // N = 100,000: they stay in cache, where the search records do not): a node's record is read
  // only once a side knows the node. Cleared whole per search, which costs far less than the
  // search.
  std::fill(fbits_.begin(), fbits_.end(), 0);
  std::fill(bbits_.begin(), bbits_.end(), 0);
  ForwardTree ftree{node, fbits_.data()};
  BackwardTree btree{bnode, bsettled, bbits_.data()};
  // In the 0-1 state every potential is 0 (controller_state.hpp): no record is read for it.
  auto pot = [&](std::int32_t v) { return bfs01 ? std::int64_t{0} : st.potential(v); };
  SearchQueue& fq = fq_;
  SearchQueue& bq = bq_;
  fq.reset(bfs01);
  bq.reset(bfs01);
  fsettled_list_.clear();
  bsettled_list_.clear();

  std::int64_t mu = kInfDistance;
  std::int32_t meet = -1;
  // A label that both sides know gives a path through its node: keep the shortest.
  auto meets = [&](std::int32_t v) {
    if (ftree.labelled(v) && btree.labelled(v) && node[v].dist + bnode[v].dist < mu) {
      mu = node[v].dist + bnode[v].dist;
      meet = v;
    }
  };
  auto relax_f = [&](std::int32_t from, std::int32_t to, std::int64_t nd, bool queue) {
    if (!relax(ftree, from, to, nd)) return;
    if (queue) fq.push(nd, to);
    meets(to);
  };
  auto relax_b = [&](std::int32_t from, std::int32_t to, std::int64_t nd) {
    if (!relax(btree, from, to, nd)) return;
    bq.push(nd, to);
    meets(to);
  };

  // Forward root: the source type. Backward root: the sink, expanded at once (its in-edges
  // come from the alive groups with room). In the 0-1 state every such group is at backward
  // distance 0, so they are not pushed: the free list stands for them in the backward queue
  // (counted in its size, its top 0 while one remains) and each is labelled only when popped,
  // before any other backward node, which is a valid Dijkstra order. A search that the size
  // rule keeps mostly forward (a long free list, a short forward queue) then never touches
  // most of them; a forward label that reaches one meets the sink through its sink edge.
  relax_f(-1, source, 0, true);
  const std::vector<std::int32_t>& roots = free_groups(st, unassigned);
  std::size_t next_root = bfs01 ? 0 : roots.size();
  {
    btree.open(sink);
    btree.set(sink, 0, -1);
    bsettled[sink] = 1;
    bsettled_list_.push_back(sink);
    if (!bfs01) {
      const std::int64_t p_sink = st.potential(sink);
      for (const std::int32_t g : roots) {
        const std::int64_t rc = st.potential(T + g) - p_sink;
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
      const SearchQueue::Entry top_entry = fq.pop();
      const std::int64_t d = top_entry.first;
      const std::int32_t v = top_entry.second;
      const auto vi = static_cast<std::size_t>(v);
      if (node[v].settled || d != node[v].dist) continue;
      fq.expanding(d);
      node[v].settled = 1;
      fsettled_list_.push_back(v);
      const std::int64_t pv = pot(v);
      if (v < T) {
        const std::int32_t provider = st.assign_[vi];
        for (std::size_t k = vi * R; k < (vi + 1) * R; ++k) {
          // As in DijkstraSearch: in the 0-1 state an edge that cannot beat mu is skipped
          // before the group's state is read.
          const auto [g, layer] = st.holder_at(k);
          if (bfs01 && d + st.cost_at(g, layer) >= mu) continue;
          if (!st.is_alive(g) || g == provider) continue;
          const std::int32_t gn = T + g;
          if (ftree.labelled(gn) && node[gn].settled) continue;
          const std::int64_t pg = pot(gn);
          const std::int64_t rc = st.cost_at(g, layer) + pv - pg;
          if (rc < 0) throw std::logic_error("controller: negative reduced cost (type edge)");
          relax_f(v, gn, d + rc, true);
          if (st.has_room(g)) {
            const std::int64_t rcs = pg - p_sink;
            if (rcs < 0) throw std::logic_error("controller: negative reduced cost (sink edge)");
            relax_f(gn, sink, node[gn].dist + rcs, false);
          }
        }
      } else {
        const std::int32_t g = v - T;
        st.for_each_provided(g, [&](std::int32_t t, std::int32_t l) {
          if (ftree.labelled(t) && node[t].settled) return;
          const std::int64_t rc = -st.cost_at(g, l) + pv - pot(t);
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
        if (btree.labelled(v) && bsettled[v]) continue;
        btree.open(v);
        btree.set(v, 0, sink);
        meets(v);
      } else {
        const SearchQueue::Entry top_entry = bq.pop();
        d = top_entry.first;
        v = top_entry.second;
      }
      const auto vi = static_cast<std::size_t>(v);
      if (bsettled[vi] || d != bnode[v].dist) continue;
      bq.expanding(d);
      bsettled[vi] = 1;
      bsettled_list_.push_back(v);
      const std::int64_t pv = pot(v);
      if (v < T) {
        // Reversed group -> type edge: from the type's provider (an unassigned type has none).
        const std::int32_t g = st.assign_[vi];
        if (g < 0) continue;
        const std::int32_t gn = T + g;
        if (btree.labelled(gn) && bsettled[gn]) continue;
        const std::size_t k = st.slot_of(v, g);
        const std::int64_t rc = -st.cost_of_slot(static_cast<std::int64_t>(k)) + pot(gn) - pv;
        if (rc < 0) throw std::logic_error("controller: negative reduced cost (group edge)");
        relax_b(v, gn, d + rc);
      } else {
        // Reversed type -> group edges: the types g holds but does not provide.
        const std::int32_t g = v - T;
        const auto gi = static_cast<std::size_t>(g);
        const auto top = static_cast<std::size_t>(st.provided_layers(g));
        for (std::size_t l = 0; l < H; ++l) {
          if (bfs01 && d + st.cost_at(g, static_cast<std::int32_t>(l)) >= mu) continue;
          const std::int32_t t = st.stacks_[gi * H + l];
          // Unassigned types are labelled too (they are dead ends backward): the other types
          // still pending in this event need exact backward distances for psi.
          if (l < top && st.assign_[static_cast<std::size_t>(t)] == g) continue;
          if (btree.labelled(t) && bsettled[t]) continue;
          const std::int64_t rc = st.cost_at(g, static_cast<std::int32_t>(l)) + pot(t) - pv;
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
  st.pot_shift_ += a;
  for (const std::int32_t v : fsettled_list_) {
    const std::int64_t d = node[v].dist;
    if (d < a) st.add_potential(v, d - a);
  }
  for (const std::int32_t v : bsettled_list_) {
    const std::int64_t d = bnode[v].dist;
    if (d < mu - a) st.add_potential(v, mu - a - d);
  }
  if (mu != 0) st.zero_state_ = false;

  // Augment along the path, walking it back from its last group (the one entering the sink):
  // each node's predecessor on the path is its parent.
  std::size_t at = path_fwd_.size() - 2;
  const std::int32_t last_group = path_fwd_[at] - T;
  const std::int32_t* const path = path_fwd_.data();
  st.augment_path(source, last_group, [path, &at](std::int32_t) { return path[--at]; });
  return true;
}

}  // namespace spare_fast::detail
