// The controller's state, shared by the event logic (controller.cpp) and the searches
// (controller_dijkstra.cpp, controller_labels.cpp, controller_relabel.cpp,
// controller_bidirectional.cpp). Not installed: an implementation detail behind
// spare_fast::Controller.
//
// Why one struct. The searches' cost is their cache misses on this data, so each search reads
// it directly, through a reference held for the search, never through the Controller's
// pointer to its implementation. What one search alone uses between its start and its end
// (its queue, its settled lists, its bitmaps) lives in that search's own class instead.
//
// Graph. Every search works on the implicit residual graph of the flow source -> type ->
// group -> sink: node ids are the types [0, T), the groups [T, T + N) and the sink T + N. A
// residual edge type -> group runs to each alive holder other than the provider (cost:
// cost_at of the holder's layer), group -> type back to each type the group provides (the
// negated cost), group -> sink while the group has room (load < price_depth_).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "prefetch.hpp"
#include "spare_fast/types.hpp"

namespace spare_fast::detail {

// What a forward search reads of one node, with the node's Johnson potential, in one 32-byte
// record (within one cache line): the searches touch random nodes, and those cache misses are
// most of their cost. Which search's labels are valid is that search's business (a stamp or a
// bitmap); the potential is valid iff pot_stamp == State::pot_epoch_.
struct SearchNode {
  std::int64_t dist = 0;
  std::int64_t pot = 0;
  std::uint32_t dist_stamp = 0;
  std::uint32_t pot_stamp = 0;
  std::int32_t parent = -1;  // previous node on the shortest path
  std::uint8_t settled = 0;
};
static_assert(sizeof(SearchNode) == 32, "a search node is half a cache line");

struct State {
  std::int32_t n_groups_ = 0;
  std::int32_t n_types_ = 0;
  std::int32_t height_ = 0;
  std::int32_t redundancy_ = 0;
  std::int32_t depth_ = 1;
  std::int32_t n_alive_ = 0;
  bool wiped_out_ = false;
  bool unit_costs_ = true;
  std::uint64_t events_ = 0;

  std::vector<Index> layout_stacks_;   // the layout as given
  // The layout after the initial decision, for restart(); empty when that is the layout itself
  // (the usual case: layer 0 a permutation gives depth 1 with nothing moved), so the layout's
  // stacks are held once. Read it through initial_stacks().
  std::vector<Index> initial_stacks_;
  std::vector<Index> stacks_;          // current order, n_groups x height
  std::vector<std::int64_t> move_cost_;  // per (group, layer); empty when unit_costs_
  // Holder slot k = t * R + i is the i-th group (in id order) holding type t; slot_cell_[k] is
  // the cell (group * height + layer) where that group keeps t now. The group of a slot never
  // changes, its layer does when the stacks are reordered. (One array rather than a group
  // array and a layer array: a search reads a type's holders in half the cache lines.)
  std::vector<Index> slot_cell_;
  Divider height_div_;  // cell -> group
  std::vector<std::uint8_t> alive_;
  std::vector<Index> assign_;  // type -> provider group, -1 if none
  std::vector<Index> load_;    // (I2)

  // Restart state: the initial decision, computed once.
  std::vector<Index> initial_assign_;
  std::int32_t initial_depth_ = 1;
  std::int64_t initial_moves_ = 0;  // the initial decision's cost against the layout's order
  std::int64_t initial_swaps_ = 0;

  // Potentials and the forward searches' records, node ids as above.
  std::vector<SearchNode> node_;
  // True while every potential is 0 and every assignment costs 0 (reduced costs are then the
  // plain 0/1 costs and a 0-1 BFS is exact).
  bool zero_state_ = true;
  // Johnson potentials, lazily reset per event: p(v) = node_[v].pot + pot_shift_ if
  // node_[v].pot_stamp == pot_epoch_, else pot_shift_.
  std::uint32_t pot_epoch_ = 0;
  std::int64_t pot_shift_ = 0;
  // During a failure: the depth at its start (0 otherwise), and per group a stamp equal to
  // deep_epoch_ once it took a type below those layers in this failure; see provided_layers().
  std::int32_t event_depth_ = 0;
  std::vector<std::uint32_t> deep_stamp_;
  std::uint32_t deep_epoch_ = 0;
  // Undo log of a failure's augmenting paths at one depth: (type, previous provider), or
  // (-1, group) for a load increment. Replayed backwards when the depth must rise.
  std::vector<std::pair<std::int32_t, std::int32_t>> undo_;
  bool log_undo_ = false;
  // Types whose provider changed during the event, for the move count.
  std::vector<Index> changed_;
  std::vector<std::uint8_t> changed_flag_;
  // Depth used to price edges (0 inside the top price_depth_ layers). Stacks are reordered only
  // at the end of an event, so slot_cell_ holds the before-event layers while it is decided.
  std::int32_t price_depth_ = 1;

  // Distance labels of the unit-cost failure search (controller_labels.cpp): per type and
  // group, a lower bound on the residual distance to the sink, valid at depth label_depth_
  // (0: not valid, to be reset); a dead group's label is kDeadLabel, so the search reads one
  // compact array per holder rather than the group's liveness and a search record. A cache: it
  // steers only which of several min-cost answers a failure takes, and snapshot() resets it so
  // that a restored controller decides as the original does. A live label never reaches
  // kDeadLabel: it is at most a shortest path's length, and a path moves each type at most
  // once, so it is below T <= n_groups * height / R < 2**30 once R >= 2 (with R = 1 no type
  // can move and every label stays 0). Sized at construction for unit costs only.
  //
  // Epoch-stamped, so that no decision pays O(N + T) to start or restart them: a label is
  // stored with the epoch that wrote it, and one with an older stamp reads as label_default_
  // (kDeadLabel for a dead group). reset_labels() and a relabelling start a new epoch in
  // O(1) instead of filling the array (at N = 1,000,000 that fill, 8 MB after every rejoin,
  // was the slowest part of the decision after it).
  static constexpr std::int32_t kDeadLabel = std::int32_t{1} << 30;
  struct LabelCell {
    std::int32_t value = 0;
    std::uint32_t stamp = 0;
  };
  std::vector<LabelCell> label_;
  std::uint32_t label_epoch_ = 1;
  std::int32_t label_default_ = 0;
  std::int32_t label_depth_ = 0;
  // The spare room at the last relabelling while the labels stayed valid since (-1: none).
  std::int64_t relabel_room_ = -1;

  // Valid at depth room_depth_ (0: not valid): bit g is set iff group g is alive with
  // load < room_depth_ (it has room). 12.5 KB at N = 100,000, so the failure searches and
  // placements test a group's room in cache rather than reading its liveness and load. A
  // failure clears the failed group's bit; a placement or path that fills a group clears its
  // bit (note_load, after every load increment); a rejoined group sets its bit
  // (note_rejoined). Loads that fall otherwise (undoing paths for a depth rise, wipe-outs)
  // invalidate it; a depth rise then takes the alive bitmap (room_from_alive: every load is
  // below the new depth), and a full solve or a restart rebuilds it in O(N) at its end, so no
  // failure pays an O(N) pass over the loads for it.
  std::vector<std::uint64_t> room_bits_;
  std::int32_t room_depth_ = 0;
  // Liveness as a bitmap (alive_ is the public byte array; this one stays in cache).
  std::vector<std::uint64_t> alive_bits_;

  // ---- Layout ---------------------------------------------------------------------------
  // Sizes every array for a validated layout (n x h, T types, redundancy r) and indexes the
  // holder slots of `stacks`; every group alive, nothing assigned.
  void init(std::vector<Index>&& stacks, std::int32_t n, std::int32_t h, std::int32_t n_types,
            std::int32_t r, bool unit_costs, Span<std::int64_t> move_cost);
  const std::vector<Index>& initial_stacks() const {
    return initial_stacks_.empty() ? layout_stacks_ : initial_stacks_;
  }
  // Rebuilds the holder slot -> cell map (slot_cell_) for the current stacks_.
  void index_slots();

  std::int32_t cell_group(std::int32_t cell) const { return height_div_.quotient(cell); }
  std::int32_t slot_group(std::size_t k) const { return cell_group(slot_cell_[k]); }
  struct Holder {
    std::int32_t group;
    std::int32_t layer;
  };
  Holder holder_at(std::size_t k) const {
    const std::int32_t g = slot_group(k);
    return Holder{g, slot_cell_[k] - g * height_};
  }
  // The slot of type t held by group g (g holds t).
  std::size_t slot_of(std::int32_t t, std::int32_t g) const {
    std::size_t k = static_cast<std::size_t>(t) * static_cast<std::size_t>(redundancy_);
    while (slot_group(k) != g) ++k;
    return k;
  }
  // Cost of giving a type to group g from `layer` of its stack: 0 inside the top price_depth_
  // layers.
  std::int64_t cost_at(std::int32_t g, std::int32_t layer) const {
    if (layer < price_depth_) return 0;
    if (unit_costs_) return 1;
    return move_cost_[static_cast<std::size_t>(g) * static_cast<std::size_t>(height_) +
                      static_cast<std::size_t>(layer)];
  }
  // Cost of giving a type to the holder of slot k (= t * R + i).
  std::int64_t cost_of_slot(std::int64_t slot) const {
    const Holder h = holder_at(static_cast<std::size_t>(slot));
    return cost_at(h.group, h.layer);
  }

  // ---- Liveness and room ------------------------------------------------------------------
  // True when type t has an alive holder; every_type_held() for all types (no wipe-out),
  // O(T * R).
  bool type_held(std::int32_t t) const {
    const auto R = static_cast<std::size_t>(redundancy_);
    const std::size_t k0 = static_cast<std::size_t>(t) * R;
    for (std::size_t k = k0; k < k0 + R; ++k) {
      if (is_alive(slot_group(k))) return true;
    }
    return false;
  }
  bool every_type_held() const;
  void set_all_alive();
  bool is_alive(std::int32_t g) const {
    const auto gi = static_cast<std::size_t>(g);
    return (alive_bits_[gi >> 6] >> (gi & 63)) & 1U;
  }
  void set_alive(std::int32_t g, bool alive) {
    const auto gi = static_cast<std::size_t>(g);
    alive_[gi] = alive ? 1 : 0;
    const std::uint64_t bit = std::uint64_t{1} << (gi & 63);
    if (alive) {
      alive_bits_[gi >> 6] |= bit;
    } else {
      alive_bits_[gi >> 6] &= ~bit;
    }
  }
  void prepare_room(std::int32_t s);
  // The room at depth s when every load is below s: the alive groups (O(N / 64)).
  void room_from_alive(std::int32_t s) {
    room_bits_ = alive_bits_;
    // alive_bits_ sets the bits past the last group too; the room bitmap must not.
    const auto tail = static_cast<unsigned>(n_groups_ & 63);
    if (tail != 0) room_bits_.back() &= (std::uint64_t{1} << tail) - 1;
    room_depth_ = s;
  }
  // A group that became alive with load 0 keeps the room bitmap valid.
  void note_rejoined(std::int32_t g) {
    if (room_depth_ != 0) {
      const auto gi = static_cast<std::size_t>(g);
      room_bits_[gi >> 6] |= std::uint64_t{1} << (gi & 63);
    }
  }
  void invalidate_room() { room_depth_ = 0; }
  bool has_room(std::int32_t g) const {
    const auto gi = static_cast<std::size_t>(g);
    return (room_bits_[gi >> 6] >> (gi & 63)) & 1U;
  }
  void clear_room_bit(std::int32_t g) {
    const auto gi = static_cast<std::size_t>(g);
    room_bits_[gi >> 6] &= ~(std::uint64_t{1} << (gi & 63));
  }
  // A load that reached `room_depth_` leaves no room: called after every load increment of a
  // failure's placements and paths.
  void note_load(std::int32_t g) {
    if (room_depth_ != 0 && load_[static_cast<std::size_t>(g)] >= room_depth_) clear_room_bit(g);
  }
  // Calls f(g) for every group with room, in id order (the room bitmap, valid).
  template <class F>
  void for_each_room_group(F&& f) const {
    for (std::size_t w = 0; w < room_bits_.size(); ++w) {
      for (std::uint64_t m = room_bits_[w]; m != 0; m &= m - 1) {
        f(static_cast<std::int32_t>(w * 64 + static_cast<std::size_t>(lowest_bit(m))));
      }
    }
  }

  // ---- Distance labels --------------------------------------------------------------------
  void reset_labels() { label_depth_ = 0; }
  // Every type's and alive group's label to `value`, every dead group's to kDeadLabel: a new
  // epoch, O(1) (O(N + T) once every 2**32 epochs, when the stamps wrap).
  void fill_labels(std::int32_t value);
  // Node v's label (v < T: type v; else group v - T).
  std::int32_t label_of(std::int32_t v) const {
    const LabelCell& c = label_[static_cast<std::size_t>(v)];
    if (c.stamp == label_epoch_) return c.value;
    return (v >= n_types_ && !is_alive(v - n_types_)) ? kDeadLabel : label_default_;
  }
  void set_label(std::int32_t v, std::int32_t value) {
    label_[static_cast<std::size_t>(v)] = LabelCell{value, label_epoch_};
  }
  // Starts the labels at 0 unless they are already valid at depth s (and the room at s).
  void prepare_labels(std::int32_t s);

  // ---- Potentials ---------------------------------------------------------------------------
  void reset_potentials();
  std::int64_t potential(std::int32_t v) const {
    const SearchNode& n = node_[static_cast<std::size_t>(v)];
    return pot_shift_ + (n.pot_stamp == pot_epoch_ ? n.pot : 0);
  }
  void add_potential(std::int32_t v, std::int64_t delta) {
    SearchNode& n = node_[static_cast<std::size_t>(v)];
    if (n.pot_stamp != pot_epoch_) {
      n.pot_stamp = pot_epoch_;
      n.pot = 0;
    }
    n.pot += delta;
  }

  // ---- The flow ----------------------------------------------------------------------------
  // The types g provides, in layer order, are scanned from its top `provided_layers(g)`
  // layers: during a failure every type assigned before it sits in its provider's top
  // event_depth_ layers (I1), so a group that took no type below those layers in this event
  // (deep_stamp) provides none below them; otherwise, and outside failures, the whole stack.
  std::int32_t provided_layers(std::int32_t g) const {
    return (event_depth_ > 0 && deep_stamp_[static_cast<std::size_t>(g)] != deep_epoch_)
               ? event_depth_
               : height_;
  }
  // Calls f(t, layer) for every type t that g provides, in layer order, from g's top
  // provided_layers(g) layers: the residual edges g -> t of every search.
  template <class F>
  void for_each_provided(std::int32_t g, F&& f) const {
    const std::int32_t* row =
        stacks_.data() + static_cast<std::size_t>(g) * static_cast<std::size_t>(height_);
    const std::int32_t top = provided_layers(g);
    for (std::int32_t l = 0; l < top; ++l) {
      if (assign_[static_cast<std::size_t>(row[l])] == g) f(row[l], l);
    }
  }
  // Records that type t is now provided by g. During a failure it also marks g for
  // provided_layers() whatever t's layer (a conservative mark: g's whole stack is scanned).
  void assign_type(std::int32_t t, std::int32_t g) {
    assign_[static_cast<std::size_t>(t)] = g;
    if (event_depth_ > 0) deep_stamp_[static_cast<std::size_t>(g)] = deep_epoch_;
  }
  void record_change(std::int32_t t) {
    auto& f = changed_flag_[static_cast<std::size_t>(t)];
    if (!f) {
      f = 1;
      changed_.push_back(t);
    }
  }
  // Augments along a shortest path that a search found: `last` (a group with room) takes one
  // more type, and walking back, parent(group node) is the type that moves into it and
  // parent(type) the group it leaves, up to `source`. Logged for undo while log_undo_.
  template <class Parent>
  void augment_path(std::int32_t source, std::int32_t last, Parent parent) {
    load_[static_cast<std::size_t>(last)] += 1;
    note_load(last);
    if (log_undo_) undo_.emplace_back(-1, last);
    std::int32_t gnode = n_types_ + last;
    while (true) {
      const std::int32_t t = parent(gnode);
      if (log_undo_) undo_.emplace_back(t, assign_[static_cast<std::size_t>(t)]);
      assign_type(t, gnode - n_types_);
      record_change(t);
      prefetch_reorder(gnode - n_types_);
      if (t == source) break;
      gnode = parent(t);
    }
  }

  // ---- Cache hints ------------------------------------------------------------------------
  // Starts loading type t's holder slots (its slot_cell_ row), which every search and the
  // greedy placement read first when they reach t.
  void prefetch_holder_slots(std::int32_t t) const {
    const std::size_t k = static_cast<std::size_t>(t) * static_cast<std::size_t>(redundancy_);
    const std::size_t last = k + static_cast<std::size_t>(redundancy_) - 1;
    prefetch(slot_cell_.data() + k);
    prefetch(slot_cell_.data() + last);
  }
  // A type moved into g is swapped into g's top layers at the end of the event
  // (reorder_stacks): start loading g's stack row now.
  void prefetch_reorder(std::int32_t g) const {
    prefetch(stacks_.data() + static_cast<std::size_t>(g) * static_cast<std::size_t>(height_));
  }
};

}  // namespace spare_fast::detail
