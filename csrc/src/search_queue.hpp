// The queue and the edge relaxation of the controller's Dijkstra searches: the forward search
// (controller_dijkstra.cpp) and both sides of the two-ended search
// (controller_bidirectional.cpp). Not installed.
//
// The unit-cost failure search (controller_labels.cpp) keeps its own bucket queue: its entries
// carry a label and a parent and are queued lazily, which a (distance, node) queue cannot do
// without writing a record per queued node, the cost that search exists to avoid.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

namespace spare_fast::detail {

// Costs are summed along paths and over all types; check_move_cost bounds every such sum by a
// small multiple of kMaxTotalCost = 2**56 (types.hpp), far below this infinity.
constexpr std::int64_t kInfDistance = std::numeric_limits<std::int64_t>::max() / 4;

// A Dijkstra queue of (distance, node) that is a 0-1 BFS deque while every reduced cost is 0
// or 1 (unit costs, zero potentials, every assignment at cost 0: the state at the start of an
// event), far cheaper than a heap then. Entries are lazy: a node may be queued once per
// improving edge; the search skips the stale ones when it pops them.
class SearchQueue {
 public:
  using Entry = std::pair<std::int64_t, std::int32_t>;
  // Empties the queue for a new search (keeping its capacity).
  void reset(bool bfs01) {
    bfs01_ = bfs01;
    cur_ = 0;
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
    if (empty()) return kInfDistance;
    return bfs01_ ? deque_.front().first : heap_.front().first;
  }
  Entry pop() {
    Entry e;
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
  bool bfs01_ = false;
  std::int64_t cur_ = 0;
  std::vector<Entry> heap_;
  std::deque<Entry> deque_;
};

// One edge relaxation, shared by every Dijkstra search: node `to` takes distance nd through
// `from` if no label of this search reached it yet, or if nd is below its label. Returns true
// when it did (the caller queues `to` then). `Tree` is the search's record of its labels:
//   bool labelled(v)  - v has a label in this search;
//   void open(v)      - gives v a label, not settled (its value is set next);
//   void set(v, d, from), std::int64_t dist(v).
template <class Tree>
inline bool relax(Tree& tree, std::int32_t from, std::int32_t to, std::int64_t nd) {
  const bool labelled = tree.labelled(to);
  if (labelled && nd >= tree.dist(to)) return false;
  if (!labelled) tree.open(to);
  tree.set(to, nd, from);
  return true;
}

}  // namespace spare_fast::detail
