// The controller's goal-directed failure search for unit costs: Dijkstra on the reduced costs
// of the distance labels kept in State between failures (an A* search), with a bucket queue.
// Not installed; the algorithm and its invariant are described in controller_labels.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "controller_state.hpp"

namespace spare_fast::detail {

class LabelledSearch {
 public:
  // Sizes the scratch for st's graph (unit costs only).
  void reserve(const State& st);
  // Routes the unassigned type `source` to the sink along a shortest path, raises the labels
  // of the nodes it settled and augments. The labels must be valid at st.price_depth_
  // (State::prepare_labels or Relabel). False if no path exists (labels unchanged).
  bool augment(State& st, std::int32_t source);

 private:
  // A node settled in this search has its bit set in settled_bits_ (25 KB at N = 100,000: it
  // stays in cache, where a record per node would not) and is listed with its distance in
  // settled_, which clears the bits afterwards; its parent on the shortest path goes to
  // parent_, which is written at settling and read only along the path found.
  struct Settled {
    std::int32_t node;
    std::int32_t dist;
  };
  std::vector<std::uint64_t> settled_bits_;
  std::vector<Settled> settled_;
  std::vector<std::int32_t> parent_;
  // Bucket d of the search queue: (node, parent, label) entries at reduced distance d. A node
  // is queued once per improving edge and settled by its first entry popped.
  struct Entry {
    std::int32_t node;
    std::int32_t parent;
    std::int32_t label;  // the node's label (labels do not change during a search)
  };
  std::vector<std::vector<Entry>> bucket_;
  // A type's holders to queue once all of them are seen: (group node, distance, label).
  std::vector<Entry> later_;
};

}  // namespace spare_fast::detail
