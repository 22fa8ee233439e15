// DijkstraSearch (controller_dijkstra.hpp): successive shortest paths, one path per call.
//
// Exactness. Dijkstra on the reduced costs c(u, v) + p(u) - p(v) >= 0 from the source type;
// the search stops once the queue's minimum reaches the best distance to the sink found so
// far. The Johnson update p(v) += min(dist(v), best) keeps every reduced cost >= 0 and makes
// the path's edges tight, so augmenting from a min-cost flow keeps it min-cost (the SSP
// invariant, controller.hpp).
#include "controller_dijkstra.hpp"

#include <stdexcept>

namespace spare_fast::detail {

bool DijkstraSearch::augment(State& st, std::int32_t source) {
  if (++stamp_ == 0) {
    for (SearchNode& n : st.node_) n.dist_stamp = 0;
    stamp_ = 1;
  }
  const std::int32_t T = st.n_types_;
  const auto R = static_cast<std::size_t>(st.redundancy_);
  const std::int32_t sink = T + st.n_groups_;
  SearchNode* const node = st.node_.data();
  Tree tree{node, stamp_};
  // While every reduced cost is 0 or 1 the queue is a deque (a 0-1 BFS).
  const bool bfs01 = st.unit_costs_ && st.zero_state_;
  SearchQueue& queue = queue_;
  queue.reset(bfs01);
  settled_.clear();
  tree.open(source);
  tree.set(source, 0, -1);
  queue.push(0, source);
  std::int64_t best = kInfDistance;
  std::int32_t best_group = -1;
  const std::int64_t p_sink = st.potential(sink);

  while (!queue.empty()) {
    // Plain variables, not a structured binding: the provided-types lambda below captures
    // them, which C++17 allows only for plain variables.
    const SearchQueue::Entry top = queue.pop();
    const std::int64_t d = top.first;
    const std::int32_t v = top.second;
    SearchNode& nv = node[v];
    if (nv.settled || d != nv.dist) continue;
    if (d >= best) break;
    queue.expanding(d);
    nv.settled = 1;
    settled_.push_back(v);
    const std::int64_t pv = st.potential(v);
    if (v < T) {
      // Type node: forward edges to alive holders other than its current provider.
      const auto vi = static_cast<std::size_t>(v);
      const std::int32_t provider = st.assign_[vi];
      for (std::size_t k = vi * R; k < (vi + 1) * R; ++k) {
        // In the 0-1 state the edge's reduced cost is its cost, known without touching the
        // group: an edge that cannot beat the best path found is skipped before the (random,
        // cache-missing) reads of the group's state. Once `best` is known this prunes most of
        // the last level's edges, which are most of a search near saturation.
        const auto [g, layer] = st.holder_at(k);
        if (bfs01 && d + st.cost_at(g, layer) >= best) continue;
        if (g == provider || !st.alive_[static_cast<std::size_t>(g)]) continue;
        const std::int32_t gn = T + g;
        if (tree.labelled(gn) && node[gn].settled) continue;
        const std::int64_t pg = st.potential(gn);
        const std::int64_t rc = st.cost_at(g, layer) + pv - pg;
        if (rc < 0) throw std::logic_error("controller: negative reduced cost (type edge)");
        if (relax(tree, v, gn, d + rc)) queue.push(d + rc, gn);
        // Look at the sink edge when a group is reached, not when it is settled: the search
        // can stop as soon as the queue's minimum reaches `best`, which skips the (often large)
        // set of nodes tied at the final distance.
        if (st.load_[static_cast<std::size_t>(g)] < st.price_depth_) {
          const std::int64_t rcs = pg - p_sink;
          if (rcs < 0) throw std::logic_error("controller: negative reduced cost (sink edge)");
          const std::int64_t cand = node[gn].dist + rcs;
          if (cand < best) {
            best = cand;
            best_group = g;
          }
        }
      }
    } else {
      // Backward edges to the types g provides: reassigning them frees capacity in g.
      const std::int32_t g = v - T;
      st.for_each_provided(g, [&](std::int32_t t, std::int32_t l) {
        if (tree.labelled(t) && node[t].settled) return;
        const std::int64_t rc = -st.cost_at(g, l) + pv - st.potential(t);
        if (rc < 0) throw std::logic_error("controller: negative reduced cost (group edge)");
        if (relax(tree, v, t, d + rc)) queue.push(d + rc, t);
      });
    }
  }
  if (best_group < 0) return false;

  // Johnson update: p(v) += min(dist(v), best), lazily: the shift adds `best` to every node and
  // the settled nodes closer than `best` take back the difference.
  st.pot_shift_ += best;
  for (const std::int32_t v : settled_) {
    const std::int64_t dv = node[v].dist;
    if (dv < best) st.add_potential(v, dv - best);
  }

  if (best != 0) st.zero_state_ = false;

  // Augment: walk back from the group that reached the sink.
  st.augment_path(source, best_group, [node](std::int32_t v) { return node[v].parent; });
  return true;
}

}  // namespace spare_fast::detail
