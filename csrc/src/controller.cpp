// Controller (controller.hpp): the events, the full solve and the stack reordering. The searches
// they call live in their own files (controller_dijkstra.cpp, controller_labels.cpp,
// controller_relabel.cpp, controller_bidirectional.cpp).
#include "spare_fast/controller.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "controller_impl.hpp"
#include "prefetch.hpp"

namespace spare_fast {

namespace {

using detail::kInfDistance;
static_assert(kMaxTotalCost <= kInfDistance / 16, "search distances must stay below infinity");

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::int32_t ceil_div(std::int64_t a, std::int64_t b) {
  return static_cast<std::int32_t>((a + b - 1) / b);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Construction and validation
// ---------------------------------------------------------------------------------------------

Controller::Impl::Impl(Span<std::int32_t> stacks, std::int64_t n_groups, std::int64_t height,
                       Span<std::int64_t> move_cost) {
  // Everything is checked before anything is sized by the input (validate.hpp).
  const StacksInfo info = check_stacks(stacks, n_groups, height, /*n_types=*/-1,
                                       /*equal_counts=*/true);
  const std::size_t cells =
      static_cast<std::size_t>(info.n_groups) * static_cast<std::size_t>(info.height);
  const bool unit = check_move_cost(move_cost, cells, info.height);
  init(std::vector<std::int32_t>(stacks.begin(), stacks.end()), info.n_groups, info.height,
       info.n_types, info.redundancy, unit, move_cost);
  two_ended_.reserve(*this);
  if (unit_costs_) labelled_.reserve(*this);
}

Controller::Impl::Impl(std::vector<std::int32_t>&& stacks, std::int64_t n_groups,
                       std::int64_t height, Span<std::int64_t> move_cost) {
  const StacksInfo info =
      check_stacks(Span<std::int32_t>(stacks.data(), stacks.size()), n_groups, height,
                   /*n_types=*/-1, /*equal_counts=*/true);
  const std::size_t cells =
      static_cast<std::size_t>(info.n_groups) * static_cast<std::size_t>(info.height);
  const bool unit = check_move_cost(move_cost, cells, info.height);
  init(std::move(stacks), info.n_groups, info.height, info.n_types, info.redundancy, unit,
       move_cost);
  two_ended_.reserve(*this);
  if (unit_costs_) labelled_.reserve(*this);
}

void Controller::Impl::initial_decision() {
  Decision d;
  full_solve(1);
  reorder_stacks(d);
  initial_moves_ = d.moves;
  initial_swaps_ = d.swaps;
  // Kept apart only when the initial decision reordered the layout (layer 0 not a
  // permutation): otherwise the layout's stacks serve, held once.
  if (stacks_ != layout_stacks_) {
    initial_stacks_ = stacks_;
  } else {
    initial_stacks_.clear();
    initial_stacks_.shrink_to_fit();
  }
  initial_assign_ = assign_;
  initial_depth_ = depth_;
}

Controller::Controller(Span<std::int32_t> stacks, std::int64_t n_groups, std::int64_t height,
                       Span<std::int64_t> move_cost)
    : impl_(std::make_unique<Impl>(stacks, n_groups, height, move_cost)) {
  impl_->initial_decision();
}

Controller::Controller(std::vector<std::int32_t>&& stacks, std::int64_t n_groups,
                       std::int64_t height, Span<std::int64_t> move_cost)
    : impl_(std::make_unique<Impl>(std::move(stacks), n_groups, height, move_cost)) {
  impl_->initial_decision();
}

Controller::Controller(const Controller& other) : impl_(std::make_unique<Impl>(*other.impl_)) {}
Controller& Controller::operator=(const Controller& other) {
  if (this != &other) impl_ = std::make_unique<Impl>(*other.impl_);
  return *this;
}
Controller::Controller(Controller&& other) noexcept = default;
Controller& Controller::operator=(Controller&& other) noexcept = default;
Controller::~Controller() = default;

std::int32_t Controller::n_groups() const { return impl_->n_groups_; }
std::int32_t Controller::n_types() const { return impl_->n_types_; }
std::int32_t Controller::height() const { return impl_->height_; }
std::int32_t Controller::redundancy() const { return impl_->redundancy_; }
std::int32_t Controller::depth() const { return impl_->depth_; }
std::int32_t Controller::n_alive() const { return impl_->n_alive_; }
bool Controller::wiped_out() const { return impl_->wiped_out_; }
std::uint64_t Controller::events() const { return impl_->events_; }
const std::int32_t* Controller::stacks() const { return impl_->stacks_.data(); }
const std::int32_t* Controller::initial_stacks() const { return impl_->initial_stacks().data(); }
const std::int32_t* Controller::layout_stacks() const { return impl_->layout_stacks_.data(); }
const std::uint8_t* Controller::alive() const { return impl_->alive_.data(); }
const std::int32_t* Controller::assignment() const { return impl_->assign_.data(); }
const std::int32_t* Controller::load() const { return impl_->load_.data(); }
const std::int64_t* Controller::move_cost() const { return impl_->move_cost_.data(); }
bool Controller::unit_costs() const { return impl_->unit_costs_; }

void Controller::validate_groups(Span<std::int32_t> groups, bool want_alive) const {
  impl_->validate_groups(groups, want_alive);
}

void Controller::Impl::validate_groups(Span<std::int32_t> groups, bool want_alive) const {
  // Short inputs: a sorted copy finds repeats without an O(N) scratch array.
  for (std::size_t i = 0; i < groups.size; ++i) {
    // The name is built only for an error: this check runs once per event.
    if (groups[i] < 0 || groups[i] >= n_groups_) {
      check_range(index_name("groups", i), groups[i], 0, n_groups_);
    }
  }
  for (std::size_t i = 0; i < groups.size; ++i) {
    const auto g = static_cast<std::size_t>(groups[i]);
    if ((alive_[g] != 0) != want_alive) {
      throw std::invalid_argument(index_name("groups", i) + " = " + std::to_string(groups[i]) +
                                  (want_alive ? " is already dead" : " is already alive"));
    }
  }
  if (groups.size > static_cast<std::size_t>(n_groups_) / 64) {
    // A long sequence (fail_each over a whole trajectory): one pass over a bitmap of the N
    // groups, cheaper than sorting once the sequence is a sizeable fraction of N.
    std::vector<std::uint8_t> seen(static_cast<std::size_t>(n_groups_), 0);
    for (std::size_t i = 0; i < groups.size; ++i) {
      const auto g = static_cast<std::size_t>(groups[i]);
      if (seen[g]) {
        std::size_t first = 0;
        while (groups[first] != groups[i]) ++first;
        throw std::invalid_argument(index_name("groups", i) + " = " +
                                    std::to_string(groups[i]) + " repeats " +
                                    index_name("groups", first));
      }
      seen[g] = 1;
    }
  } else if (groups.size > 1) {
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

// ---------------------------------------------------------------------------------------------
// The full solve
// ---------------------------------------------------------------------------------------------

bool Controller::Impl::assign_at_depth(std::int32_t s) {
  depth_ = s;
  price_depth_ = s;
  std::fill(assign_.begin(), assign_.end(), -1);
  std::fill(load_.begin(), load_.end(), 0);
  invalidate_room();
  reset_potentials();
  const auto R = static_cast<std::size_t>(redundancy_);
  // Greedy zero-cost start: every assignment costs 0, so zero potentials are feasible.
  for (std::int32_t t = 0; t < n_types_; ++t) {
    const auto ti = static_cast<std::size_t>(t);
    for (std::size_t k = ti * R; k < (ti + 1) * R; ++k) {
      const Holder h = holder_at(k);
      const auto g = static_cast<std::size_t>(h.group);
      if (alive_[g] && h.layer < s && load_[g] < s) {
        assign_[ti] = h.group;
        ++load_[g];
        break;
      }
    }
  }
  // Direct placements: a type whose cheapest alive holder has room goes there. Its potential
  // becomes -cost, which keeps every reduced cost nonnegative (its other edges cost at least
  // that much), so the flow stays min-cost for its value and SSP below stays exact. This
  // handles the bulk of the types with no zero-cost holder without a search.
  for (std::int32_t t = 0; t < n_types_; ++t) {
    const auto ti = static_cast<std::size_t>(t);
    if (assign_[ti] >= 0) continue;
    std::int64_t best_cost = kInfDistance;
    std::int32_t best_group = -1;
    bool best_has_room = false;
    for (std::size_t k = ti * R; k < (ti + 1) * R; ++k) {
      const Holder h = holder_at(k);
      const auto g = static_cast<std::size_t>(h.group);
      if (!alive_[g]) continue;
      const std::int64_t c = cost_at(h.group, h.layer);
      const bool room = load_[g] < s;
      if (c < best_cost || (c == best_cost && room && !best_has_room)) {
        best_cost = c;
        best_group = h.group;
        best_has_room = room;
      }
    }
    if (best_group >= 0 && best_has_room) {
      assign_[ti] = best_group;
      ++load_[static_cast<std::size_t>(best_group)];
      node_[ti].pot_stamp = pot_epoch_;
      node_[ti].pot = -best_cost;
      if (best_cost != 0) zero_state_ = false;
    }
  }
  for (std::int32_t t = 0; t < n_types_; ++t) {
    if (assign_[static_cast<std::size_t>(t)] < 0 && !dijkstra_.augment(*this, t)) return false;
  }
  return true;
}

bool Controller::Impl::full_solve(std::int32_t s_min) {
  reset_labels();
  if (!every_type_held()) return false;
  std::int32_t s = std::max(s_min, ceil_div(n_types_, n_alive_));
  for (; s <= height_; ++s) {
    if (assign_at_depth(s)) {
      for (std::int32_t t = 0; t < n_types_; ++t) record_change(t);
      // O(N) here, inside an O(N * height) solve, rather than in the next failure.
      prepare_room(s);
      return true;
    }
  }
  // Unreachable while every type has an alive holder: at depth = height every group computes
  // its whole stack. Kept as a guard.
  throw std::logic_error("controller: no feasible depth although every type has a holder");
}

// ---------------------------------------------------------------------------------------------
// Stack reordering and decisions
// ---------------------------------------------------------------------------------------------

void Controller::Impl::swap_layers(std::int32_t g, std::int32_t a, std::int32_t b, std::size_t kb) {
  const std::size_t base = static_cast<std::size_t>(g) * static_cast<std::size_t>(height_);
  const std::size_t ca = base + static_cast<std::size_t>(a);
  const std::size_t cb = base + static_cast<std::size_t>(b);
  const std::size_t ka = slot_of(stacks_[ca], g);
  std::swap(stacks_[ca], stacks_[cb]);
  slot_cell_[ka] = static_cast<std::int32_t>(cb);
  slot_cell_[kb] = static_cast<std::int32_t>(ca);
}

void Controller::Impl::reorder_stacks(Decision& d) {
  price_depth_ = depth_;
  // Price every changed assignment against the before-event layers first, then swap.
  std::vector<std::int32_t>& deep = deep_;  // holder slots to bring up
  deep.clear();
  for (const std::int32_t t : changed_) {
    changed_flag_[static_cast<std::size_t>(t)] = 0;
    const std::int32_t g = assign_[static_cast<std::size_t>(t)];
    if (g < 0) continue;
    const std::size_t k = slot_of(t, g);
    const std::int32_t layer = holder_at(k).layer;
    d.moves += cost_at(g, layer);
    if (layer >= depth_) {
      ++d.swaps;
      deep.push_back(static_cast<std::int32_t>(k));
    }
  }
  changed_.clear();
  const auto H = static_cast<std::size_t>(height_);
  for (const std::int32_t k : deep) {
    const auto [g, layer] = holder_at(static_cast<std::size_t>(k));
    const std::size_t base = static_cast<std::size_t>(g) * H;
    std::int32_t free_layer = 0;
    while (assign_[static_cast<std::size_t>(stacks_[base + static_cast<std::size_t>(free_layer)])] == g) {
      ++free_layer;
    }
    swap_layers(g, free_layer, layer, static_cast<std::size_t>(k));
  }
}

void Controller::Impl::finish(Decision& d, bool ok) {
  d.event = events_;
  if (!ok) {
    reset_labels();
    wiped_out_ = true;
    std::fill(assign_.begin(), assign_.end(), -1);
    std::fill(load_.begin(), load_.end(), 0);
    invalidate_room();
    for (const std::int32_t t : changed_) changed_flag_[static_cast<std::size_t>(t)] = 0;
    changed_.clear();
    depth_ = 0;
    d.status = Status::kWipeout;
    d.phase = 1;
    d.depth = 0;
    d.moves = 0;
    d.swaps = 0;
    d.patch.clear();
    return;
  }
  reorder_stacks(d);
  d.status = Status::kOk;
  d.depth = depth_;
  d.phase = d.swaps == 0 ? 0 : 2;
}

// Written here rather than as an Impl method that this one calls: a function whose only
// effects are cache hints has no observable effect, so the compiler may drop a call to it
// that it can see (GCC does, within one file); fail_each's calls come from another file.
void Controller::prefetch_failure(std::int32_t g, int stage) const {
  const Impl& st = *impl_;
  if (g < 0 || g >= st.n_groups_) return;
  // A failure reads only g's top depth layers (the types it may provide).
  const auto H = static_cast<std::size_t>(st.height_);
  const std::size_t top = std::min(H, static_cast<std::size_t>(st.depth_));
  if (top == 0) return;
  const std::int32_t* row = st.stacks_.data() + static_cast<std::size_t>(g) * H;
  if (stage == 0) {
    prefetch(row);
    prefetch(row + top - 1);
    return;
  }
  for (std::size_t l = 0; l < top; ++l) {
    // The types g provides, displaced by its failure: their holder slots are read next, and
    // the search for a new provider starts from their labels.
    const auto t = static_cast<std::size_t>(row[l]);
    prefetch(st.assign_.data() + t);
    st.prefetch_holder_slots(static_cast<std::int32_t>(t));
    if (!st.label_.empty()) prefetch(st.label_.data() + t);
  }
}

Decision Controller::fail(Span<std::int32_t> groups) {
  Decision d;
  fail_into(groups, d);
  return d;
}

void Controller::fail_into(Span<std::int32_t> groups, Decision& d) {
  const auto t0 = Clock::now();
  impl_->validate_groups(groups, /*want_alive=*/true);
  impl_->decide_failure(groups, d);
  d.seconds = seconds_since(t0);
}

void Controller::decide_failure(Span<std::int32_t> groups, Decision& d) {
  impl_->decide_failure(groups, d);
}

void Controller::Impl::decide_failure(Span<std::int32_t> groups, Decision& d) {
  ++events_;
  {
    // Every field as a fresh Decision has it; the patch keeps its capacity.
    std::vector<Index> patch = std::move(d.patch);
    patch.clear();
    d = Decision{};
    d.patch = std::move(patch);
  }
  const auto H = static_cast<std::size_t>(height_);
  const auto R = static_cast<std::size_t>(redundancy_);
  bool lost_type = false;
  std::vector<std::int32_t>& displaced = displaced_;
  displaced.clear();
  // The types f provides sit in its top depth_ layers (I1; depth_ is 0 after a wipe-out, when
  // nothing is assigned), so only those layers are read.
  const std::size_t top = std::min(H, static_cast<std::size_t>(depth_));
  for (const std::int32_t f : groups) {
    const auto fi = static_cast<std::size_t>(f);
    set_alive(f, false);
    clear_room_bit(f);
    --n_alive_;
    // A dead group leaves the failure search's graph (controller_labels.cpp).
    if (!label_.empty()) set_label(n_types_ + f, kDeadLabel);
    for (std::size_t l = 0; l < top; ++l) {
      const auto t = static_cast<std::size_t>(stacks_[fi * H + l]);
      if (assign_[t] == f) {
        assign_[t] = -1;
        displaced.push_back(static_cast<std::int32_t>(t));
      }
    }
    load_[fi] = 0;
  }
  // Every type had an alive provider before this event, so a type left with no alive holder
  // was provided by a failed group: it is among the displaced ones.
  if (!wiped_out_) {
    for (const std::int32_t t : displaced) lost_type = lost_type || !type_held(t);
  }
  if (wiped_out_ || lost_type || n_alive_ == 0) {
    finish(d, false);
    return;
  }

  // The assignment left after removing the displaced types costs 0 at every depth >= depth_
  // (I1, I2), so with zero potentials it is a min-cost flow for its value at any such depth and
  // SSP from it stays exact. If no augmenting path exists at S, raise S and augment again from
  // that zero-cost flow: the paths found at S are undone first, because raising S makes the
  // layer-S slots free and a flow that was min-cost at S need not be at S + 1.
  std::vector<std::int32_t>& pending = pending_;
  // The searches scan only the top event_depth_ layers of a group for the types it provides
  // unless it took a type in this event (provided_layers()); reset on every way out.
  struct EventScope {
    Impl& c;
    ~EventScope() { c.event_depth_ = 0; }
  } scope{*this};
  if (++deep_epoch_ == 0) {
    std::fill(deep_stamp_.begin(), deep_stamp_.end(), 0u);
    deep_epoch_ = 1;
  }
  event_depth_ = depth_;
  std::int32_t s = std::max(depth_, ceil_div(n_types_, n_alive_));
  for (;; ++s) {
    if (s > height_) {
      // Unreachable while every type has an alive holder (at depth = height every group
      // computes its whole stack). Kept as a guard.
      throw std::logic_error("controller: no feasible depth although every type has a holder");
    }
    depth_ = s;
    price_depth_ = s;
    // Above the event's starting depth every load is below s (I2; the paths of a lower depth
    // were undone, its greedy placements kept loads at or below it): the groups with room are
    // the alive ones, a copy of their bitmap rather than an O(N) pass over the loads.
    if (s > event_depth_ && room_depth_ != s) room_from_alive(s);
    reset_potentials();
    pending.clear();
    for (const std::int32_t t : displaced) {
      const auto ti = static_cast<std::size_t>(t);
      if (assign_[ti] >= 0) continue;  // placed at cost 0 at a lower depth: still cost 0
      bool placed = false;
      // A holder with t in its top layers computes t without providing it: load < depth.
      for (std::size_t k = ti * R; k < (ti + 1) * R; ++k) {
        const auto [gi, layer] = holder_at(k);
        if (layer >= s) continue;
        const auto g = static_cast<std::size_t>(gi);
        // With the room bitmap valid at s, it answers "alive, load < s" in cache.
        if (room_depth_ == s ? has_room(gi) : (alive_[g] && load_[g] < s)) {
          assign_[ti] = gi;
          if (layer >= event_depth_) deep_stamp_[g] = deep_epoch_;
          ++load_[g];
          note_load(gi);
          record_change(t);
          placed = true;
          break;
        }
      }
      if (!placed) pending.push_back(t);
    }
    undo_.clear();
    log_undo_ = true;
    // Unit costs: goal-directed searches on the distance labels kept between failures (they
    // stay valid through this event's greedy placements: see controller_labels.cpp). Other
    // costs, and unit costs with fewer than kLabelMinRoom slots of spare room
    // F = s * alive - T: the blind searches, which invalidate the labels.
    //
    // As F falls, filling a free group leaves stale (too low) the labels of every node that
    // drained into it, and the searches relearn those regions: a search settles about
    // 0.8 * alive / F nodes. So once F <= min(alive / kRelabelShare, kRelabelMaxRoom), and
    // again whenever F has fallen to a quarter of what it was at the last time, every label is
    // set afresh to min(distance to the sink, 2) (Relabel, controller_relabel.cpp; its cost grows with F:
    // about 0.7 us per slot at N = 100,000, 2 us at 1,000,000, hence the cap). On the
    // benchmark's trajectory (N = 100,000) a search with F between 16 and 1,024 then settles
    // 7.5-24 nodes on average instead of 37-823, and 39-44 below F = 16, so the goal-directed
    // search serves down to F = 4 (the two-ended search took over below 16, and below
    // sqrt(alive) / 16, before). Measured on Sidon layouts with r = 20, the whole trajectory
    // through fail_each, relabelling against none (alternated runs in one process, the median
    // of the per-pair ratios over 10 pairs; per-event minima of 2-4 runs for the maxima):
    //   * N = 100,000, four failure orders: 0.69-0.84 of the time at kRelabelShare = 64,
    //     0.68-0.79 at 32; the slowest decision 0.9 ms at 64 against 1.6-2.4 ms at 32 and
    //     1.5 ms at a fixed F <= 2,048;
    //   * N = 1,000,000: 0.84 s with the cap at 2,048 (the slowest decision 7.7 ms, a depth
    //     rise's level), 0.83 s at 4,096 (9.5 ms), 0.99 s uncapped (16.8 ms, the first relabel
    //     at F = 7,874), 1.07 s at 1,024; 1.10 s without relabelling (7.8 ms).
    constexpr std::int64_t kLabelMinRoom = 4;
    constexpr std::int64_t kRelabelShare = 64;
    constexpr std::int64_t kRelabelMaxRoom = 2048;
    const std::int64_t room = static_cast<std::int64_t>(s) * n_alive_ - n_types_;
    const bool labelled = unit_costs_ && room >= kLabelMinRoom;
    if (labelled) {
      // room < 2**31 (n_groups * height), so the products fit.
      if (!pending.empty() && room * kRelabelShare <= n_alive_ && room <= kRelabelMaxRoom &&
          (label_depth_ != s || relabel_room_ < 0 || room * 4 <= relabel_room_)) {
        relabel_.run(*this, s);
        relabel_room_ = room;
      } else {
        prepare_labels(s);
      }
    } else if (!pending.empty()) {
      reset_labels();
    }
    // With less room than types no path can exist at s: skip the searches.
    bool ok = room >= 0;
    for (std::size_t i = 0; ok && i < pending.size(); ++i) {
      const std::int32_t t = pending[i];
      const auto unassigned = static_cast<std::int64_t>(pending.size() - i);
      if (labelled) {
        ok = labelled_.augment(*this, t);
      } else if (detail::TwoEndedSearch::near_saturation(*this)) {
        ok = two_ended_.augment(*this, t, unassigned);
      } else {
        ok = dijkstra_.augment(*this, t);
      }
    }
    log_undo_ = false;
    if (ok) break;
    // Undo this depth's paths (newest first): back to the zero-cost flow. Loads fall, so the
    // labels are no longer valid.
    reset_labels();
    invalidate_room();
    for (auto it = undo_.rbegin(); it != undo_.rend(); ++it) {
      if (it->first < 0) {
        --load_[static_cast<std::size_t>(it->second)];
      } else {
        assign_[static_cast<std::size_t>(it->first)] = it->second;
      }
    }
  }
  finish(d, true);
  d.patch.reserve(2 * displaced.size());
  for (const std::int32_t t : displaced) {
    d.patch.push_back(t);
    d.patch.push_back(assign_[static_cast<std::size_t>(t)]);
  }
}

Decision Controller::rejoin(Span<std::int32_t> groups) { return impl_->rejoin(groups); }

Decision Controller::Impl::rejoin(Span<std::int32_t> groups) {
  const auto t0 = Clock::now();
  validate_groups(groups, /*want_alive=*/false);
  ++events_;
  Decision d;
  // A rejoined group brings edges and room back: the distance labels no longer hold.
  reset_labels();
  for (const std::int32_t g : groups) {
    const auto gi = static_cast<std::size_t>(g);
    set_alive(g, true);
    ++n_alive_;
    load_[gi] = 0;
    // Alive with load 0: room at any depth. The bitmap stays valid, so the next failure
    // does not rebuild it in O(N).
    note_rejoined(g);
  }
  if (wiped_out_) {
    if (!every_type_held()) {
      finish(d, false);
      d.seconds = seconds_since(t0);
      return d;
    }
    wiped_out_ = false;
    d.full_solve = true;
    full_solve(1);
  } else if (ceil_div(n_types_, n_alive_) < depth_) {
    // The depth may fall: search it from the counting bound with a fresh optimisation.
    d.full_solve = true;
    full_solve(1);
  }
  // Otherwise the depth cannot fall below the bound and the current assignment stays feasible
  // at zero cost: nothing moves.
  finish(d, true);
  d.seconds = seconds_since(t0);
  return d;
}

Decision Controller::restart() { return impl_->restart(); }

Decision Controller::Impl::restart() {
  const auto t0 = Clock::now();
  ++events_;
  reset_labels();
  set_all_alive();
  stacks_ = initial_stacks();
  index_slots();
  assign_ = initial_assign_;
  std::fill(load_.begin(), load_.end(), 0);
  for (const std::int32_t g : assign_) ++load_[static_cast<std::size_t>(g)];
  invalidate_room();
  depth_ = initial_depth_;
  prepare_room(depth_);
  wiped_out_ = false;
  // The decision restores the layout and reorders it as the initial decision did.
  Decision d;
  d.status = Status::kOk;
  d.depth = depth_;
  d.moves = initial_moves_;
  d.swaps = initial_swaps_;
  d.phase = d.swaps == 0 ? 0 : 2;
  d.full_solve = true;
  d.event = events_;
  d.seconds = seconds_since(t0);
  return d;
}

Decision Controller::solve(Span<std::int32_t> stacks, std::int64_t n_groups, std::int64_t height,
                           Span<std::uint8_t> alive, Span<std::int64_t> move_cost,
                           std::vector<std::int32_t>* assignment_out,
                           std::vector<std::int32_t>* stacks_out) {
  const auto t0 = Clock::now();
  Impl c(stacks, n_groups, height, move_cost);
  check_length("alive", alive.size, static_cast<std::size_t>(c.n_groups_));
  for (std::size_t g = 0; g < alive.size; ++g) {
    if (alive[g] > 1) {
      throw std::invalid_argument(index_name("alive", g) + " = " + std::to_string(alive[g]) +
                                  " is not a boolean");
    }
    if (!alive[g]) {
      c.set_alive(static_cast<std::int32_t>(g), false);
      --c.n_alive_;
    }
  }
  Decision d;
  d.full_solve = true;
  const bool ok = c.n_alive_ > 0 && c.every_type_held();
  if (ok) c.full_solve(1);
  c.finish(d, ok);
  if (assignment_out) *assignment_out = c.assign_;
  if (stacks_out) *stacks_out = c.stacks_;
  d.seconds = seconds_since(t0);
  return d;
}

}  // namespace spare_fast
