// Batch events: many controller decisions in one call.
//
// Problem. A simulator or a Monte Carlo study fails groups one at a time, in a given order, and
// wants every decision's summary. Calling Controller::fail once per group from a scripting
// language pays the crossing and the result objects per decision, which at N = 100,000 costs
// several times the decision itself. fail_each runs the whole sequence in C++ and returns the
// per-event figures as flat arrays (one entry per event, column-wise), so one crossing serves
// the whole trajectory.
//
// Semantics. Event i is Controller::fail on the single group groups[i], in order. The whole
// input is validated first (every id in [0, n_groups), alive, no repeats), so a rejected call
// changes nothing. With stop_at_wipeout the sequence ends at the first wipe-out (that event
// included); otherwise every group is failed and the events after a wipe-out report
// Status::kWipeout. Each event equals the corresponding single fail() call bit for bit, its
// time aside: events are validated together up front and each is timed from the end of the
// one before it (or the call's start) to its own end, one clock reading per event, so an
// event's seconds also carry its share of the loop's bookkeeping.
//
// Complexity. The sum of the single decisions plus O(len(groups)) for validation and output.
#pragma once

#include <cstdint>
#include <vector>

#include "spare_fast/controller.hpp"
#include "spare_fast/validate.hpp"

namespace spare_fast {

// Column-wise decisions of a fail_each call: entry i belongs to event i.
struct FailEachResult {
  std::vector<std::int32_t> status;      // Status as int32 (0 ok, 1 wipe-out)
  std::vector<std::int32_t> depth;       // Decision::depth
  std::vector<std::int64_t> moves;       // Decision::moves
  std::vector<std::int64_t> swaps;       // Decision::swaps
  std::vector<std::uint8_t> full_solve;  // Decision::full_solve (0/1)
  std::vector<double> seconds;           // wall time of the event (see above)
  // Patch rows of all events, flattened (type, group), with the event index of each row.
  std::vector<std::int32_t> patch;
  std::vector<std::int64_t> patch_event;

  std::size_t size() const { return status.size(); }
};

// Fails groups[0], groups[1], ... one at a time (see the header comment). Throws
// std::out_of_range for an id outside [0, n_groups) and std::invalid_argument for a dead or
// repeated id, naming its position; the controller is then unchanged.
FailEachResult fail_each(Controller& controller, Span<std::int32_t> groups,
                         bool stop_at_wipeout = true);

}  // namespace spare_fast
