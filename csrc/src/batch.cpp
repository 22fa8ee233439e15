#include "spare_fast/batch.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace spare_fast {

namespace {

// The whole sequence is checked before the first event so that a rejected call changes
// nothing: each id in range and alive now, and no id twice (a group fails once).
void validate_sequence(const Controller& c, Span<std::int32_t> groups) {
  const std::uint8_t* alive = c.alive();
  for (std::size_t i = 0; i < groups.size; ++i) {
    check_range(index_name("groups", i), groups[i], 0, c.n_groups());
  }
  for (std::size_t i = 0; i < groups.size; ++i) {
    if (!alive[static_cast<std::size_t>(groups[i])]) {
      throw std::invalid_argument(index_name("groups", i) + " = " + std::to_string(groups[i]) +
                                  " is already dead");
    }
  }
  if (groups.size > 1) {
    // Sorting a copy keeps the check linear-logarithmic in len(groups), with no O(N) scratch.
    std::vector<std::pair<std::int32_t, std::size_t>> sorted;
    sorted.reserve(groups.size);
    for (std::size_t i = 0; i < groups.size; ++i) sorted.emplace_back(groups[i], i);
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 1; i < sorted.size(); ++i) {
      if (sorted[i].first == sorted[i - 1].first) {
        throw std::invalid_argument(index_name("groups", sorted[i].second) + " = " +
                                    std::to_string(sorted[i].first) + " repeats " +
                                    index_name("groups", sorted[i - 1].second));
      }
    }
  }
}

}  // namespace

FailEachResult fail_each(Controller& controller, Span<std::int32_t> groups,
                         bool stop_at_wipeout) {
  validate_sequence(controller, groups);
  FailEachResult out;
  const std::size_t n = groups.size;
  out.status.reserve(n);
  out.depth.reserve(n);
  out.moves.reserve(n);
  out.swaps.reserve(n);
  out.full_solve.reserve(n);
  out.seconds.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Decision d = controller.fail(Span<std::int32_t>(groups.data + i, 1));
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
