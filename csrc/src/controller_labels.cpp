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
// labels (State::reset_labels).
//
// Relabelling. Near saturation the labels are set afresh to min(distance to the sink, 2)
// before a failure's first search (controller_relabel.cpp), which keeps (L).
//
// Search. Dijkstra from the displaced type on the reduced costs of (L), which are >= 0 (an A*
// search whose heuristic is the labels): it settles only the nodes v with
// delta(v) = dist(source, v) - label(source) + label(v) below mu = delta(sink), which is small
// where the labels are accurate. The costs are small integers, so the queue is an array of
// buckets, each a stack (depth-first within a distance, as the 0-1 BFS of DijkstraSearch).
// Afterwards label(v) += mu - delta(v) for every settled v (delta(v) <= mu). That keeps (L):
// for an edge from a settled u the new reduced cost is at least delta(u) + c_L(u, v) - delta(v)
// >= 0, and an edge into a settled v only gains. On the shortest path every edge becomes tight
// (reduced cost 0), so its reversal satisfies (L) too: the augmentation keeps the labels valid,
// and each path is a shortest path (successive shortest paths, hence exact). A raised label
// is D(source) - dist(source, v) for the distance D to the sink: at most D(v) by the triangle
// inequality, exact on the path found, and larger than before, so the next search starts from
// better bounds.
//
// Memory. At N = 100,000 the nodes' data is tens of MB, so the search's cost is its cache
// misses, not its arithmetic. Per holder it reads only the holder's label (a dead group's
// label marks it dead), and only while d + cost - label(v), a lower bound on the distance
// through that holder, is below the best path found; whether a group has room is a bitmap
// (State::room_bits_, kept with the labels). A type's holders are taken in chunks of 8:
// their labels are loaded first, all at once (independent misses overlap), then decided on.
// A queue entry carries its node's label (labels do not change during a search). It writes
// nothing per queued node: the queue is lazy (a node is queued once per improving edge, and
// settled by its first entry popped), a type's holders are queued after all of them are seen
// and only if still below the best distance, and most queued nodes are never popped. Settled nodes
// are kept in a bitmap that stays in cache. Queueing a node prefetches what expanding it
// reads first.
//
// Determinism. The labels steer only which of several min-cost answers is taken. They are not
// in a snapshot; snapshot() resets them instead, so a restored controller and the one that
// wrote the snapshot go on with identical decisions.
#include "controller_labels.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "prefetch.hpp"

namespace spare_fast::detail {

void LabelledSearch::reserve(const State& st) {
  // At construction, so that no decision pays for touching these pages first.
  const std::size_t nodes =
      static_cast<std::size_t>(st.n_types_) + static_cast<std::size_t>(st.n_groups_);
  parent_.assign(nodes, -1);
  settled_bits_.assign((nodes + 63) / 64, 0);
}

bool LabelledSearch::augment(State& st, std::int32_t source) {
  const std::int32_t T = st.n_types_;
  const auto R = static_cast<std::size_t>(st.redundancy_);
  const std::int32_t s = st.price_depth_;
  std::int32_t* const parent_of = parent_.data();
  std::uint64_t* const bits = settled_bits_.data();
  const std::int32_t* const cells = st.slot_cell_.data();
  const std::int32_t H = st.height_;
  const Divider by_height = st.height_div_;
  struct Held {
    std::int32_t group;
    std::int32_t cell;
    std::int32_t label;
  };
  constexpr std::size_t kGather = 8;
  Held held[kGather];
  // A type's holders to queue: (group node, distance in the parent field, label).
  std::vector<Entry>& later = later_;

  // Lazy Dijkstra: an edge that improves nothing we know of is queued as (node, parent) in the
  // bucket of its distance, and only the first entry of a node to be popped settles it. Most
  // queued nodes are never popped (their bucket is not below the best path's), so the search
  // writes a node's record only when it settles it: per holder it reads the holder's label
  // and nothing else of it.
  std::size_t used = 0;  // buckets [0, used) may be nonempty
  auto push = [&](std::int64_t d, std::int32_t v, std::int32_t parent, std::int32_t lv) {
    const auto b = static_cast<std::size_t>(d);
    if (b >= bucket_.size()) bucket_.resize(b + 1);
    bucket_[b].push_back(Entry{v, parent, lv});
    used = std::max(used, b + 1);
    // Start loading what expanding v reads first, so that the entries popped soon find it in
    // cache: a type's holder slots, a group's stack row and event mark.
    if (v < T) {
      st.prefetch_holder_slots(v);
    } else {
      const auto g = static_cast<std::size_t>(v - T);
      prefetch(st.stacks_.data() + g * static_cast<std::size_t>(st.height_));
      prefetch(st.deep_stamp_.data() + g);
    }
  };

  settled_.clear();
  push(0, source, -1, st.label_of(source));
  std::int64_t best = std::numeric_limits<std::int64_t>::max();
  std::int32_t best_group = -1;
  std::int32_t best_parent = -1;

  for (std::size_t b = 0; b < used && static_cast<std::int64_t>(b) < best; ++b) {
    // By index: a push may grow bucket_ and move its elements.
    const auto d = static_cast<std::int64_t>(b);
    while (!bucket_[b].empty() && d < best) {
      const Entry e = bucket_[b].back();
      bucket_[b].pop_back();
      const std::int32_t v = e.node;
      const auto vi = static_cast<std::size_t>(v);
      const std::uint64_t bit = std::uint64_t{1} << (vi & 63);
      if (bits[vi >> 6] & bit) continue;  // settled by an earlier entry
      bits[vi >> 6] |= bit;
      parent_of[vi] = e.parent;
      settled_.push_back(Settled{v, static_cast<std::int32_t>(d)});
      const std::int64_t lv = e.label;
      if (v < T) {
        // Forward edges to the alive holders other than the provider. A type is queued only
        // by its provider's expansion (the source, unassigned, by none), so the entry's
        // parent names the provider.
        const std::int32_t provider = e.parent < 0 ? -1 : e.parent - T;
        // Two passes per chunk of holders: the first only loads (the holders' labels are
        // random reads, independent of each other, so the processor overlaps them all), the
        // second decides on values already at hand. Small chunks: once a path is found, the
        // later chunks load only the labels that could still beat it.
        const std::size_t end = (vi + 1) * R;
        for (std::size_t k0 = vi * R; k0 < end; k0 += kGather) {
          const std::size_t m = std::min(kGather, end - k0);
          for (std::size_t i = 0; i < m; ++i) {
            const std::int32_t cell = cells[k0 + i];
            const std::int32_t g = by_height.quotient(cell);
            // A holder's label is at least 0, so d + cost - lv bounds its distance from
            // below: once that reaches the best path found, its label is not worth a load
            // (marked as if dead: either way it is passed over).
            const std::int64_t low = d + (cell - g * H >= s ? 1 : 0) - lv;
            held[i] = Held{g, cell, low < best ? st.label_of(T + g) : State::kDeadLabel};
          }
          for (std::size_t i = 0; i < m; ++i) {
            const std::int64_t lg = held[i].label;
            const std::int32_t g = held[i].group;
            if (lg >= State::kDeadLabel || g == provider) continue;
            // Unit costs: 0 inside the top s layers (before the event), 1 below.
            const std::int64_t rc = (held[i].cell - g * H >= s ? 1 : 0) + lg - lv;
            if (rc < 0) throw std::logic_error("controller: invalid distance label (type edge)");
            const std::int64_t nd = d + rc;
            if (nd >= best) continue;  // reduced costs are >= 0: no better path through g
            // The sink edge costs 0, so (L) on it keeps a group with room at label 0: only a
            // group at label 0 needs its load read. The path ends at a group with room:
            // through it no path to the sink is shorter than nd.
            if (lg == 0 && st.has_room(g)) {
              best = nd;
              best_group = g;
              best_parent = v;
              // Most searches end here: start loading what the augmentation and the
              // reorder write first.
              prefetch(st.load_.data() + g, true);
              prefetch(st.deep_stamp_.data() + g, true);
              st.prefetch_reorder(g);
            } else {
              later.push_back(Entry{T + g, static_cast<std::int32_t>(nd),
                                         static_cast<std::int32_t>(lg)});
            }
          }
        }
        // Queued once all of v's holders are seen, and only those still below the best
        // distance: the others would never be popped, and queueing starts their loads. The
        // order of the queued ones, hence the search, is as if each were queued when seen.
        for (const Entry& c : later) {
          if (c.parent < best) push(c.parent, c.node, v, c.label);
        }
        later.clear();
      } else {
        // Reversed edges to the types g provides.
        const std::int32_t g = v - T;
        st.for_each_provided(g, [&](std::int32_t t, std::int32_t l) {
          const std::int32_t lt = st.label_of(t);
          const std::int64_t rc = lt - (l >= s ? 1 : 0) - lv;
          if (rc < 0) throw std::logic_error("controller: invalid distance label (group edge)");
          const std::int64_t nd = d + rc;
          if (nd < best) push(nd, t, v, lt);
        });
      }
    }
  }
  for (std::size_t b = 0; b < used; ++b) bucket_[b].clear();
  // Clear the settled bits. If a path was found, every node with delta < best was settled
  // (reduced costs are >= 0 and buckets run in order): raise those labels by best - delta
  // (see the header comment).
  const bool found = best_group >= 0;
  for (const Settled& e : settled_) {
    const auto vi = static_cast<std::size_t>(e.node);
    bits[vi >> 6] &= ~(std::uint64_t{1} << (vi & 63));
    if (found) {
      st.set_label(e.node, st.label_of(e.node) + static_cast<std::int32_t>(best - e.dist));
    }
  }
  if (!found) return false;

  // The end of the event swaps a type that best_group does not provide out of its top s
  // layers (reorder_stacks), and rewrites that type's holder slot: start loading them.
  const std::int32_t* row = st.stacks_.data() + static_cast<std::size_t>(best_group) *
                                                 static_cast<std::size_t>(H);
  for (std::int32_t l = 0; l < std::min(s, H); ++l) st.prefetch_holder_slots(row[l]);
  const std::int32_t last = T + best_group;
  st.augment_path(source, best_group, [parent_of, last, best_parent](std::int32_t v) {
    return v == last ? best_parent : parent_of[v];
  });
  return true;
}

}  // namespace spare_fast::detail
