// Goal-directed augmenting paths for unit-cost failures: distance labels kept between events.
//
// Why. Near saturation (a handful of groups with room among 50,000) a blind search from a
// displaced type explores a large part of the residual graph before it meets a group with
// room, and every failure pays that again although the graph changed by one group and one
// path. Distances to the sink change little from one failure to the next, so we keep what the
// searches learn about them.
//
// Labels. label(v) (types and groups; the sink's label is 0) is a lower bound on v's
// shortest residual distance to the sink: for every residual edge (u, v),
//   c(u, v) + label(v) - label(u) >= 0,                                        (L)
// which also says the labels are feasible potentials, so the flow is a min-cost flow for its
// value (its residual graph has no negative cycle). All zero is valid at the start of a depth
// (every edge then costs >= 0: I1 in controller.hpp). Between events (L) survives because a
// failure only deletes nodes and edges, a greedy zero-cost placement goes to a group with room
// (label 0 by (L) on its sink edge), reordering the stacks only raises edge costs, and no load
// falls. A depth change lowers costs (layer S becomes free), and rejoins, restarts, the full
// solve and the other searches change the graph in ways (L) does not survive: each resets the
// labels (label_depth_ = 0).
//
// Search. Dijkstra from the displaced type on the reduced costs of (L), which are >= 0 (an A*
// search whose heuristic is the labels): it settles only the nodes v with
// delta(v) = dist(source, v) - label(source) + label(v) below mu = delta(sink), which is small
// where the labels are accurate. The costs are small integers, so the queue is an array of
// buckets, each a stack (depth-first within a distance, as the 0-1 BFS of augment_from).
// Afterwards label(v) += mu - delta(v) for every settled v (delta(v) < mu). That keeps (L):
// for an edge from a settled u the new reduced cost is at least delta(u) + c_L(u, v) - delta(v)
// >= 0, and an edge into a settled v only gains. On the shortest path every edge becomes tight
// (reduced cost 0), so its reversal satisfies (L) too: the augmentation keeps the labels valid,
// and each path is a shortest path (successive shortest paths, hence exact). A raised label
// is D(source) - dist(source, v) for the distance D to the sink: at most D(v) by the triangle
// inequality, exact on the path found, and larger than before, so the next search starts from
// better bounds.
//
// Determinism. The labels steer only which of several min-cost answers is taken. They are not
// in a snapshot; snapshot() resets them instead, so a restored controller and the one that
// wrote the snapshot go on with identical decisions.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "spare_fast/controller.hpp"

namespace spare_fast {

void Controller::prepare_labels(std::int32_t s) {
  if (label_depth_ == s) return;
  const std::size_t n = static_cast<std::size_t>(n_types_) + static_cast<std::size_t>(n_groups_);
  if (lnode_.size() != n) lnode_.assign(n, LabelNode{});
  for (LabelNode& v : lnode_) v.label = 0;
  label_depth_ = s;
}

bool Controller::augment_labelled(std::int32_t source) {
  // mark = 2 * stamp + settled: a node is labelled in this search iff mark >> 1 == stamp.
  if (++label_stamp_ >= (1u << 31)) {
    for (LabelNode& v : lnode_) v.mark = 0;
    label_stamp_ = 1;
  }
  const std::uint32_t here = label_stamp_ << 1;  // labelled, not settled
  const std::int32_t T = n_types_;
  const auto R = static_cast<std::size_t>(redundancy_);
  const std::int32_t s = price_depth_;
  LabelNode* const node = lnode_.data();

  // Bucket d holds the nodes labelled at reduced distance d (stale entries are skipped).
  std::size_t used = 0;  // buckets [0, used) may be nonempty
  auto push = [&](std::int64_t d, std::int32_t v) {
    const auto b = static_cast<std::size_t>(d);
    if (b >= bucket_.size()) bucket_.resize(b + 1);
    bucket_[b].push_back(v);
    used = std::max(used, b + 1);
  };
  auto relax = [&](std::int32_t from, std::int32_t to, std::int64_t nd) {
    LabelNode& n = node[to];
    if ((n.mark | 1u) != (here | 1u)) {
      n.mark = here;
    } else if (n.mark != here || nd >= n.dist) {
      return;  // settled, or no shorter
    }
    n.dist = static_cast<std::int32_t>(nd);
    n.parent = from;
    push(nd, to);
  };

  settled_list_.clear();
  {
    LabelNode& n = node[source];
    n.mark = here;
    n.dist = 0;
    n.parent = -1;
  }
  push(0, source);
  std::int64_t best = std::numeric_limits<std::int64_t>::max();
  std::int32_t best_group = -1;

  for (std::size_t b = 0; b < used && static_cast<std::int64_t>(b) < best; ++b) {
    // By index: a push may grow bucket_ and move its elements.
    const auto d = static_cast<std::int64_t>(b);
    while (!bucket_[b].empty() && d < best) {
      const std::int32_t v = bucket_[b].back();
      bucket_[b].pop_back();
      LabelNode& nv = node[v];
      if (nv.mark != here || nv.dist != d) continue;
      nv.mark = here | 1u;
      settled_list_.push_back(v);
      const std::int64_t lv = nv.label;
      if (v < T) {
        // Forward edges to the alive holders other than the provider.
        const auto vi = static_cast<std::size_t>(v);
        const std::int32_t provider = assign_[vi];
        for (std::size_t k = vi * R; k < (vi + 1) * R; ++k) {
          const std::int32_t g = holder_[k];
          if (g == provider || !alive_[static_cast<std::size_t>(g)]) continue;
          const std::int32_t gn = T + g;
          const std::int64_t rc = cost_at(g, slot_layer_[k]) + node[gn].label - lv;
          if (rc < 0) throw std::logic_error("controller: invalid distance label (type edge)");
          const std::int64_t nd = d + rc;
          if (nd >= best) continue;  // reduced costs are >= 0: no better path through g
          relax(v, gn, nd);
          if (load_[static_cast<std::size_t>(g)] < s) {
            // The sink edge costs 0 and (L) on it keeps a group with room at label 0.
            if (node[gn].label != 0) {
              throw std::logic_error("controller: invalid distance label (sink edge)");
            }
            if (node[gn].dist < best) {
              best = node[gn].dist;
              best_group = g;
            }
          }
        }
      } else {
        // Reversed edges to the types g provides.
        const std::int32_t g = v - T;
        for_each_provided(g, [&](std::int32_t t, std::int32_t l) {
          const std::int64_t rc = node[t].label - cost_at(g, l) - lv;
          if (rc < 0) throw std::logic_error("controller: invalid distance label (group edge)");
          const std::int64_t nd = d + rc;
          if (nd < best) relax(v, t, nd);
        });
      }
    }
  }
  for (std::size_t b = 0; b < used; ++b) bucket_[b].clear();
  if (best_group < 0) return false;

  // Every node with delta < best was settled (reduced costs are >= 0 and buckets run in
  // order); raise those labels by best - delta (see the header comment).
  for (const std::int32_t v : settled_list_) {
    const std::int64_t dv = node[v].dist;
    if (dv < best) node[v].label += static_cast<std::int32_t>(best - dv);
  }

  augment_path(source, best_group, [node](std::int32_t v) { return node[v].parent; });
  return true;
}

}  // namespace spare_fast
