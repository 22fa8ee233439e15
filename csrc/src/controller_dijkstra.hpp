// The controller's forward search: one shortest augmenting path by Dijkstra with Johnson
// potentials (a 0-1 BFS in the zero state), used by the full solve and by failures with
// general costs away from saturation. Not installed.
#pragma once

#include <cstdint>
#include <vector>

#include "controller_state.hpp"
#include "search_queue.hpp"

namespace spare_fast::detail {

class DijkstraSearch {
 public:
  // Routes the unassigned type `source` to the sink along a shortest path in the residual
  // graph, updates the potentials (they stay feasible, the path's edges tight) and augments.
  // False, with nothing changed but search scratch, if no path exists.
  bool augment(State& st, std::int32_t source);

 private:
  // This search's labels: node_[v].dist/parent/settled are valid iff
  // node_[v].dist_stamp == stamp_ (no clearing between searches).
  struct Tree {
    SearchNode* node;
    std::uint32_t stamp;
    bool labelled(std::int32_t v) const { return node[v].dist_stamp == stamp; }
    void open(std::int32_t v) {
      node[v].settled = 0;
      node[v].dist_stamp = stamp;
    }
    void set(std::int32_t v, std::int64_t d, std::int32_t from) {
      node[v].dist = d;
      node[v].parent = from;
    }
    std::int64_t dist(std::int32_t v) const { return node[v].dist; }
  };
  std::uint32_t stamp_ = 0;
  SearchQueue queue_;
  std::vector<std::int32_t> settled_;  // for the potential update
};

}  // namespace spare_fast::detail
