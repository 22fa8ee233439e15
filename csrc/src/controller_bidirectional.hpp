// The controller's two-ended failure search: the shortest augmenting path searched from the
// displaced type and from the sink at once, for failures while spare capacity is nearly
// exhausted. Not installed; the algorithm is described in controller_bidirectional.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "controller_state.hpp"
#include "search_queue.hpp"

namespace spare_fast::detail {

class TwoEndedSearch {
 public:
  // True when the spare capacity at st.price_depth_ is small enough that searching from both
  // ends beats the forward search.
  static bool near_saturation(const State& st);
  // Sizes the scratch for st's graph.
  void reserve(const State& st);
  // Routes the unassigned type `source` to the sink along a shortest path, updates the
  // potentials and augments; `unassigned`: how many types (source included) have no provider
  // now. False if no path exists.
  bool augment(State& st, std::int32_t source, std::int64_t unassigned);

 private:
  // The alive groups with load < st.price_depth_ (cached between calls, checked by total
  // room), and the rebuild of that cache from the room bitmap.
  const std::vector<std::int32_t>& free_groups(State& st, std::int64_t unassigned);
  void seed_free_groups(State& st);

  // Backward labels: distance to the sink and the next node towards it.
  struct BackNode {
    std::int64_t dist = 0;   // valid while the node's bit is set in bbits_
    std::int32_t next = -1;  // next node towards the sink
  };
  // The forward side's labels: st.node_[v].dist/parent/settled, valid iff v's bit is set.
  struct ForwardTree {
    SearchNode* node;
    std::uint64_t* bits;
    bool labelled(std::int32_t v) const { return test(bits, v); }
    void open(std::int32_t v) {
      node[v].settled = 0;
      mark(bits, v);
    }
    void set(std::int32_t v, std::int64_t d, std::int32_t from) {
      node[v].dist = d;
      node[v].parent = from;
    }
    std::int64_t dist(std::int32_t v) const { return node[v].dist; }
  };
  // The backward side's labels: bnode_[v] and bsettled_[v], valid iff v's bit is set.
  struct BackwardTree {
    BackNode* node;
    std::uint8_t* settled;
    std::uint64_t* bits;
    bool labelled(std::int32_t v) const { return test(bits, v); }
    void open(std::int32_t v) {
      settled[v] = 0;
      mark(bits, v);
    }
    void set(std::int32_t v, std::int64_t d, std::int32_t next) {
      node[v].dist = d;
      node[v].next = next;
    }
    std::int64_t dist(std::int32_t v) const { return node[v].dist; }
  };
  static bool test(const std::uint64_t* bits, std::int32_t v) {
    const auto vi = static_cast<std::size_t>(v);
    return ((bits[vi >> 6] >> (vi & 63)) & 1U) != 0;
  }
  static void mark(std::uint64_t* bits, std::int32_t v) {
    const auto vi = static_cast<std::size_t>(v);
    bits[vi >> 6] |= std::uint64_t{1} << (vi & 63);
  }

  std::vector<BackNode> bnode_;
  std::vector<std::uint8_t> bsettled_;
  // The nodes each side has labelled in this search (bitmaps that stay in cache).
  std::vector<std::uint64_t> fbits_;
  std::vector<std::uint64_t> bbits_;
  std::vector<std::int32_t> fsettled_list_;
  std::vector<std::int32_t> bsettled_list_;
  SearchQueue fq_;
  SearchQueue bq_;
  // The path assembled from the two halves.
  std::vector<std::int32_t> path_fwd_;
  std::vector<std::int32_t> path_bwd_;
  std::vector<std::int32_t> free_cache_;
};

}  // namespace spare_fast::detail
