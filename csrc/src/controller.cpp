#include "spare_fast/controller.hpp"
#include "prefetch.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <deque>
#include <functional>
#include <tuple>
#include <stdexcept>
#include <utility>

namespace spare_fast {

namespace {

// Costs are summed along paths and over all types; check_move_cost bounds every such sum by a
// small multiple of kMaxTotalCost = 2**56 (types.hpp), far below this infinity.
constexpr std::int64_t kInf = std::numeric_limits<std::int64_t>::max() / 4;
static_assert(kMaxTotalCost <= kInf / 16, "search distances must stay below kInf");

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

Controller::Controller(Span<std::int32_t> stacks, std::int64_t n_groups, std::int64_t height,
                       Span<std::int64_t> move_cost, NoInitTag) {
  // Everything is checked before anything is sized by the input (validate.hpp).
  const StacksInfo info = check_stacks(stacks, n_groups, height, /*n_types=*/-1,
                                       /*equal_counts=*/true);
  const std::int32_t n = info.n_groups;
  const std::int32_t h = info.height;
  const std::int32_t n_types = info.n_types;
  const std::int32_t r = info.redundancy;
  const std::size_t cells = static_cast<std::size_t>(n) * static_cast<std::size_t>(h);
  unit_costs_ = check_move_cost(move_cost, cells, h);

  n_groups_ = n;
  n_types_ = n_types;
  height_ = h;
  redundancy_ = r;
  layout_stacks_.assign(stacks.begin(), stacks.end());
  initial_stacks_ = layout_stacks_;
  stacks_ = initial_stacks_;
  if (!unit_costs_) move_cost_.assign(move_cost.begin(), move_cost.end());

  const std::size_t slots = static_cast<std::size_t>(n_types) * static_cast<std::size_t>(r);
  slot_cell_.assign(slots, -1);
  height_div_ = Divider(static_cast<std::uint32_t>(h));
  std::vector<std::int32_t> fill(static_cast<std::size_t>(n_types), 0);
  for (std::int32_t g = 0; g < n; ++g) {
    for (std::int32_t l = 0; l < h; ++l) {
      const std::size_t cell = static_cast<std::size_t>(g) * static_cast<std::size_t>(h) + static_cast<std::size_t>(l);
      const auto t = static_cast<std::size_t>(stacks_[cell]);
      const std::size_t k = t * static_cast<std::size_t>(r) + static_cast<std::size_t>(fill[t]++);
      slot_cell_[k] = static_cast<std::int32_t>(cell);
    }
  }

  alive_.assign(static_cast<std::size_t>(n), 1);
  alive_bits_.assign((static_cast<std::size_t>(n) + 63) / 64, ~std::uint64_t{0});
  room_bits_.assign((static_cast<std::size_t>(n) + 63) / 64, 0);
  assign_.assign(static_cast<std::size_t>(n_types), -1);
  load_.assign(static_cast<std::size_t>(n), 0);
  n_alive_ = n;

  const std::size_t nodes = static_cast<std::size_t>(n_types) + static_cast<std::size_t>(n) + 1;
  node_.assign(nodes, SearchNode{});
  deep_stamp_.assign(static_cast<std::size_t>(n), 0);
  changed_flag_.assign(static_cast<std::size_t>(n_types), 0);
  reserve_backward_search();
  if (unit_costs_) {
    // The failure search's labels (controller_labels.cpp), sized here so that no decision pays
    // for touching their pages first.
    label_.assign(nodes - 1, 0);
    label_parent_.assign(nodes - 1, -1);
    settled_bits_.assign((nodes - 1 + 63) / 64, 0);
  }
}

Controller::Controller(Span<std::int32_t> stacks, std::int64_t n_groups, std::int64_t height,
                       Span<std::int64_t> move_cost)
    : Controller(stacks, n_groups, height, move_cost, NoInitTag{}) {
  Decision d;
  full_solve(1);
  reorder_stacks(d);
  initial_moves_ = d.moves;
  initial_swaps_ = d.swaps;
  initial_stacks_ = stacks_;
  initial_assign_ = assign_;
  initial_depth_ = depth_;
}

void Controller::index_slots() {
  // O(N * height * R): each cell looks up its holder slot among the R holders of its type (a
  // slot's group is fixed, only its layer moves). Callers guarantee that every row of stacks_ is
  // a permutation of its layout row.
  const auto H = static_cast<std::size_t>(height_);
  for (std::size_t g = 0; g < static_cast<std::size_t>(n_groups_); ++g) {
    for (std::size_t l = 0; l < H; ++l) {
      const std::size_t cell = g * H + l;
      const std::size_t k = slot_of(stacks_[cell], static_cast<std::int32_t>(g));
      slot_cell_[k] = static_cast<std::int32_t>(cell);
    }
  }
}

void Controller::set_all_alive() {
  std::fill(alive_.begin(), alive_.end(), std::uint8_t{1});
  std::fill(alive_bits_.begin(), alive_bits_.end(), ~std::uint64_t{0});
  n_alive_ = n_groups_;
}

bool Controller::type_held(std::int32_t t) const {
  const auto R = static_cast<std::size_t>(redundancy_);
  const std::size_t k0 = static_cast<std::size_t>(t) * R;
  for (std::size_t k = k0; k < k0 + R; ++k) {
    if (is_alive(slot_group(k))) return true;
  }
  return false;
}

bool Controller::every_type_held() const {
  for (std::int32_t t = 0; t < n_types_; ++t) {
    if (!type_held(t)) return false;
  }
  return true;
}

void Controller::validate_groups(Span<std::int32_t> groups, bool want_alive) const {
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
// Costs and potentials
// ---------------------------------------------------------------------------------------------

void Controller::reset_potentials() {
  if (++pot_epoch_ == 0) {  // wrapped: clear the stamps once every 2^32 events
    for (SearchNode& n : node_) n.pot_stamp = 0;
    pot_epoch_ = 1;
  }
  pot_shift_ = 0;
  zero_state_ = true;
}

void Controller::assign_type(std::int32_t t, std::int32_t g) {
  assign_[static_cast<std::size_t>(t)] = g;
  if (event_depth_ > 0) deep_stamp_[static_cast<std::size_t>(g)] = deep_epoch_;
}

void Controller::record_change(std::int32_t t) {
  auto& f = changed_flag_[static_cast<std::size_t>(t)];
  if (!f) {
    f = 1;
    changed_.push_back(t);
  }
}

// ---------------------------------------------------------------------------------------------
// Successive shortest paths
// ---------------------------------------------------------------------------------------------

bool Controller::augment_from(std::int32_t source) {
  if (++search_stamp_ == 0) {
    for (SearchNode& n : node_) n.dist_stamp = 0;
    search_stamp_ = 1;
  }
  const std::uint32_t stamp = search_stamp_;
  const std::int32_t T = n_types_;
  const auto R = static_cast<std::size_t>(redundancy_);
  const std::int32_t sink = T + n_groups_;
  SearchNode* const node = node_.data();
  // While every reduced cost is 0 or 1 (unit costs, zero potentials, every assignment at cost
  // 0: the state at the start of an event) a deque gives a 0-1 BFS, far cheaper than a heap.
  const bool bfs01 = unit_costs_ && zero_state_;
  heap_.clear();
  deque_.clear();
  std::int64_t cur = 0;  // distance of the node being expanded (0-1 BFS pushes relative to it)
  auto push = [&](std::int64_t nd, std::int32_t v) {
    if (bfs01) {
      if (nd == cur) {
        deque_.emplace_front(nd, v);
      } else {
        deque_.emplace_back(nd, v);
      }
    } else {
      heap_.emplace_back(nd, v);
      std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
    }
  };

  settled_list_.clear();
  {
    SearchNode& n = node[source];
    n.dist_stamp = stamp;
    n.settled = 0;
    n.dist = 0;
    n.parent = -1;
  }
  push(0, source);
  std::int64_t best = kInf;
  std::int32_t best_group = -1;
  const std::int64_t p_sink = potential(sink);

  while (bfs01 ? !deque_.empty() : !heap_.empty()) {
    std::int64_t d;
    std::int32_t v;
    if (bfs01) {
      std::tie(d, v) = deque_.front();
      deque_.pop_front();
    } else {
      std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
      std::tie(d, v) = heap_.back();
      heap_.pop_back();
    }
    SearchNode& nv = node[v];
    if (nv.settled || d != nv.dist) continue;
    if (d >= best) break;
    cur = d;
    nv.settled = 1;
    settled_list_.push_back(v);
    const std::int64_t pv = potential(v);
    if (v < T) {
      // Type node: forward edges to alive holders other than its current provider.
      const auto vi = static_cast<std::size_t>(v);
      const std::int32_t provider = assign_[vi];
      for (std::size_t k = vi * R; k < (vi + 1) * R; ++k) {
        // In the 0-1 state the edge's reduced cost is its cost, known without touching the
        // group: an edge that cannot beat the best path found is skipped before the (random,
        // cache-missing) reads of the group's state. Once `best` is known this prunes most of
        // the last level's edges, which are most of a search near saturation.
        const auto [g, layer] = holder_at(k);
        if (bfs01 && d + cost_at(g, layer) >= best) continue;
        if (g == provider || !alive_[static_cast<std::size_t>(g)]) continue;
        SearchNode& ng = node[T + g];
        const bool labelled = ng.dist_stamp == stamp;
        if (labelled && ng.settled) continue;
        const std::int64_t pg = potential(T + g);
        const std::int64_t rc = cost_at(g, layer) + pv - pg;
        if (rc < 0) throw std::logic_error("controller: negative reduced cost (type edge)");
        const std::int64_t nd = d + rc;
        if (!labelled || nd < ng.dist) {
          if (!labelled) ng.settled = 0;
          ng.dist_stamp = stamp;
          ng.dist = nd;
          ng.parent = v;
          push(nd, T + g);
        }
        // Look at the sink edge when a group is reached, not when it is settled: the search
        // can stop as soon as the queue's minimum reaches `best`, which skips the (often large)
        // set of nodes tied at the final distance.
        if (load_[static_cast<std::size_t>(g)] < price_depth_) {
          const std::int64_t rcs = pg - p_sink;
          if (rcs < 0) throw std::logic_error("controller: negative reduced cost (sink edge)");
          const std::int64_t cand = ng.dist + rcs;
          if (cand < best) {
            best = cand;
            best_group = g;
          }
        }
      }
    } else {
      // Backward edges to the types g provides: reassigning them frees capacity in g.
      const std::int32_t g = v - T;
      for_each_provided(g, [&](std::int32_t t, std::int32_t l) {
        SearchNode& nt = node[t];
        const bool labelled = nt.dist_stamp == stamp;
        if (labelled && nt.settled) return;
        const std::int64_t rc = -cost_at(g, l) + pv - potential(t);
        if (rc < 0) throw std::logic_error("controller: negative reduced cost (group edge)");
        const std::int64_t nd = d + rc;
        if (!labelled || nd < nt.dist) {
          if (!labelled) nt.settled = 0;
          nt.dist_stamp = stamp;
          nt.dist = nd;
          nt.parent = v;
          push(nd, t);
        }
      });
    }
  }
  if (best_group < 0) return false;

  // Johnson update: p(v) += min(dist(v), best), lazily: the shift adds `best` to every node and
  // the settled nodes closer than `best` take back the difference.
  pot_shift_ += best;
  for (const std::int32_t v : settled_list_) {
    const std::int64_t dv = node[v].dist;
    if (dv < best) add_potential(v, dv - best);
  }

  if (best != 0) zero_state_ = false;

  // Augment: walk back from the group that reached the sink.
  augment_path(source, best_group, [node](std::int32_t v) { return node[v].parent; });
  return true;
}

bool Controller::assign_at_depth(std::int32_t s) {
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
    std::int64_t best_cost = kInf;
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
    if (assign_[static_cast<std::size_t>(t)] < 0 && !augment_from(t)) return false;
  }
  return true;
}

bool Controller::full_solve(std::int32_t s_min) {
  reset_labels();
  if (!every_type_held()) return false;
  std::int32_t s = std::max(s_min, ceil_div(n_types_, n_alive_));
  for (; s <= height_; ++s) {
    if (assign_at_depth(s)) {
      for (std::int32_t t = 0; t < n_types_; ++t) record_change(t);
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

void Controller::swap_layers(std::int32_t g, std::int32_t a, std::int32_t b, std::size_t kb) {
  const std::size_t base = static_cast<std::size_t>(g) * static_cast<std::size_t>(height_);
  const std::size_t ca = base + static_cast<std::size_t>(a);
  const std::size_t cb = base + static_cast<std::size_t>(b);
  const std::size_t ka = slot_of(stacks_[ca], g);
  std::swap(stacks_[ca], stacks_[cb]);
  slot_cell_[ka] = static_cast<std::int32_t>(cb);
  slot_cell_[kb] = static_cast<std::int32_t>(ca);
}

void Controller::prefetch_holder_slots(std::int32_t t) const {
  const std::size_t k = static_cast<std::size_t>(t) * static_cast<std::size_t>(redundancy_);
  const std::size_t last = k + static_cast<std::size_t>(redundancy_) - 1;
  prefetch(slot_cell_.data() + k);
  prefetch(slot_cell_.data() + last);
}

void Controller::prefetch_reorder(std::int32_t g) const {
  const std::size_t base = static_cast<std::size_t>(g) * static_cast<std::size_t>(height_);
  prefetch(stacks_.data() + base);
}

void Controller::reorder_stacks(Decision& d) {
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

void Controller::finish(Decision& d, bool ok) {
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

void Controller::prefetch_failure(std::int32_t g, int stage) const {
  if (g < 0 || g >= n_groups_) return;
  // A failure reads only g's top depth_ layers (the types it may provide).
  const auto H = static_cast<std::size_t>(height_);
  const std::size_t top = std::min(H, static_cast<std::size_t>(depth_));
  if (top == 0) return;
  const std::int32_t* row = stacks_.data() + static_cast<std::size_t>(g) * H;
  if (stage == 0) {
    prefetch(row);
    prefetch(row + top - 1);
    return;
  }
  for (std::size_t l = 0; l < top; ++l) {
    // The types g provides, displaced by its failure: their holder slots are read next, and
    // the search for a new provider starts from their labels.
    const auto t = static_cast<std::size_t>(row[l]);
    prefetch(assign_.data() + t);
    prefetch_holder_slots(static_cast<std::int32_t>(t));
    if (!label_.empty()) prefetch(label_.data() + t);
  }
}

Decision Controller::fail(Span<std::int32_t> groups) {
  Decision d;
  fail_into(groups, d);
  return d;
}

void Controller::fail_into(Span<std::int32_t> groups, Decision& d) {
  const auto t0 = Clock::now();
  validate_groups(groups, /*want_alive=*/true);
  decide_failure(groups, d);
  d.seconds = seconds_since(t0);
}

void Controller::decide_failure(Span<std::int32_t> groups, Decision& d) {
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
    if (!label_.empty()) {
      label_[static_cast<std::size_t>(n_types_) + fi] = kDeadLabel;
    }
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
    Controller& c;
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
    // set afresh to min(distance to the sink, 2) (relabel_near_sink; its cost grows with F:
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
        relabel_near_sink(s);
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
        ok = augment_labelled(t);
      } else {
        ok = near_saturation() ? augment_bidirectional(t, unassigned) : augment_from(t);
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

Decision Controller::rejoin(Span<std::int32_t> groups) {
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
    invalidate_room();
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

Decision Controller::restart() {
  const auto t0 = Clock::now();
  ++events_;
  reset_labels();
  set_all_alive();
  stacks_ = initial_stacks_;
  index_slots();
  assign_ = initial_assign_;
  std::fill(load_.begin(), load_.end(), 0);
  for (const std::int32_t g : assign_) ++load_[static_cast<std::size_t>(g)];
  invalidate_room();
  depth_ = initial_depth_;
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
  Controller c(stacks, n_groups, height, move_cost, NoInitTag{});
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
