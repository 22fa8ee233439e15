// Controller::Impl: what stands behind spare_fast::Controller (controller.hpp). Not installed.
//
// The state (State, controller_state.hpp) plus the four searches, each with its own scratch,
// and the event logic that drives them (controller.cpp, controller_snapshot.cpp). Impl is-a
// State so that the event logic reads the state as directly as the searches do: one pointer
// from the Controller per event, none inside it.
#pragma once

#include <cstdint>
#include <vector>

#include "controller_bidirectional.hpp"
#include "controller_dijkstra.hpp"
#include "controller_labels.hpp"
#include "controller_relabel.hpp"
#include "controller_state.hpp"
#include "spare_fast/controller.hpp"

namespace spare_fast {

struct Controller::Impl : detail::State {
  // Validates the layout and the costs and sizes everything; no decision yet (every group
  // alive, nothing assigned).
  Impl(Span<Index> stacks, std::int64_t n_groups, std::int64_t height, Span<Cost> move_cost);
  // The same, the stacks moved in as the layout (validated before they are taken).
  Impl(std::vector<Index>&& stacks, std::int64_t n_groups, std::int64_t height,
       Span<Cost> move_cost);
  // The initial decision (a full solve from depth 1, stacks reordered), kept for restart().
  void initial_decision();

  void validate_groups(Span<Index> groups, bool want_alive) const;
  void decide_failure(Span<Index> groups, Decision& d);
  Decision rejoin(Span<Index> groups);
  Decision restart();

  // Runs the depth search from `s_min` and the min-cost assignment; keeps stacks as the
  // "before" reference. Returns false on wipe-out (some type has no alive holder).
  bool full_solve(std::int32_t s_min);
  // Greedy zero-cost assignment of every type, then SSP for the rest. False if infeasible at S.
  bool assign_at_depth(std::int32_t s);
  // Moves every assigned type into its provider's top `depth_` layers; sums moves and swaps.
  void reorder_stacks(Decision& d);
  // Swaps layers a and b of g's stack; kb is the holder slot of the type at layer b.
  void swap_layers(std::int32_t g, std::int32_t a, std::int32_t b, std::size_t kb);
  // Completes a decision: wipe-out bookkeeping, or reorder + status/depth/phase.
  void finish(Decision& d, bool ok);

  detail::DijkstraSearch dijkstra_;
  detail::LabelledSearch labelled_;
  detail::Relabel relabel_;
  detail::TwoEndedSearch two_ended_;
  // Per-event scratch of decide_failure() and reorder_stacks(), kept to avoid allocations.
  std::vector<Index> displaced_;
  std::vector<Index> pending_;
  std::vector<Index> deep_;
};

}  // namespace spare_fast
