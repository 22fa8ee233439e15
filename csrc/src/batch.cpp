#include "spare_fast/batch.hpp"

#include <chrono>
#include <cstdint>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <x86intrin.h>
#define SPARE_FAST_TSC 1
#endif

namespace spare_fast {

namespace {

using Clock = std::chrono::steady_clock;

// Per-event times. A steady-clock reading costs tens of nanoseconds, a few percent of an
// event here, so where the processor's time-stamp counter runs at a constant rate (CPUID
// leaf 0x80000007, EDX bit 8: "invariant TSC") each event reads the counter instead, and the
// counts become seconds at the end, scaled by the steady clock over the whole loop.
class EventClock {
 public:
  EventClock() : start_(Clock::now()) {
#ifdef SPARE_FAST_TSC
    unsigned a = 0, b = 0, c = 0, d = 0;
    tsc_ = __get_cpuid(0x80000007, &a, &b, &c, &d) != 0 && ((d >> 8) & 1U) != 0;
    if (tsc_) tsc_start_ = __rdtsc();
#endif
  }
  // A reading, in counts (TSC) or steady-clock ticks.
  std::uint64_t now() const {
#ifdef SPARE_FAST_TSC
    if (tsc_) return __rdtsc();
#endif
    return static_cast<std::uint64_t>(Clock::now().time_since_epoch().count());
  }
  std::uint64_t start() const {
#ifdef SPARE_FAST_TSC
    if (tsc_) return tsc_start_;
#endif
    return static_cast<std::uint64_t>(start_.time_since_epoch().count());
  }
  // Seconds per count, from the steady clock over [construction, now].
  double seconds_per_count() const {
    const auto end = Clock::now();
    const double secs = std::chrono::duration<double>(end - start_).count();
#ifdef SPARE_FAST_TSC
    if (tsc_) {
      const std::uint64_t counts = __rdtsc() - tsc_start_;
      return counts == 0 ? 0.0 : secs / static_cast<double>(counts);
    }
#endif
    return std::chrono::duration<double>(Clock::duration(1)).count();
  }

 private:
  Clock::time_point start_;
  bool tsc_ = false;
  std::uint64_t tsc_start_ = 0;
};

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
  const EventClock clock;
  std::uint64_t last = clock.start();
  for (std::size_t i = 0; i < n; ++i) {
    // The next failures are known: start their first cache misses now (a two-stage pipeline:
    // the stack row two events ahead, then what the next event reads through that row).
    if (i + 2 < n) controller.prefetch_failure(groups[i + 2], 0);
    if (i + 1 < n) controller.prefetch_failure(groups[i + 1], 1);
    // Validated above (a group fails once, so each is still alive when its turn comes).
    controller.decide_failure(Span<std::int32_t>(groups.data + i, 1), d);
    const std::uint64_t now = clock.now();
    d.seconds = static_cast<double>(now - last);  // counts, scaled below
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
  const double scale = clock.seconds_per_count();
  for (double& s : out.seconds) s *= scale;
  return out;
}

}  // namespace spare_fast
