#include "spare_fast/batch.hpp"

#include <chrono>

namespace spare_fast {

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

FailEachResult fail_each(Controller& controller, Span<std::int32_t> groups,
                         bool stop_at_wipeout) {
  // The whole sequence is checked before the first event, so a rejected call changes nothing:
  // each id in range, alive now, and not repeated (a group fails once).
  controller.validate_groups(groups, /*want_alive=*/true);
  FailEachResult out;
  const std::size_t n = groups.size;
  out.status.reserve(n);
  out.depth.reserve(n);
  out.moves.reserve(n);
  out.swaps.reserve(n);
  out.full_solve.reserve(n);
  out.seconds.reserve(n);
  Decision d;  // one decision reused: no allocation per event
  // One clock reading per event: event i's time runs from the end of event i - 1 (or the
  // start) to its own end, so it also carries its share of this loop's bookkeeping.
  auto last = Clock::now();
  for (std::size_t i = 0; i < n; ++i) {
    // The next failures are known: start their first cache misses now (a two-stage pipeline:
    // the stack row two events ahead, then what the next event reads through that row).
    if (i + 2 < n) controller.prefetch_failure(groups[i + 2], 0);
    if (i + 1 < n) controller.prefetch_failure(groups[i + 1], 1);
    // Validated above (a group fails once, so each is still alive when its turn comes).
    controller.decide_failure(Span<std::int32_t>(groups.data + i, 1), d);
    const auto now = Clock::now();
    d.seconds = std::chrono::duration<double>(now - last).count();
    last = now;
    out.status.push_back(static_cast<std::int32_t>(d.status));
    out.depth.push_back(d.depth);
    out.moves.push_back(d.moves);
    out.swaps.push_back(d.swaps);
    out.full_solve.push_back(d.full_solve ? 1 : 0);
    out.seconds.push_back(d.seconds);
    out.patch.insert(out.patch.end(), d.patch.begin(), d.patch.end());
    out.patch_event.insert(out.patch_event.end(), d.patch.size() / 2,
                           static_cast<std::int64_t>(i));
    if (stop_at_wipeout && d.status == Status::kWipeout) break;
  }
  return out;
}

}  // namespace spare_fast
