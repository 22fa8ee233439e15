// ReCtlr: the SPARe reordering controller.
//
// Problem. N groups each hold a stack of `height` distinct shard types; every one of the T
// types sits in the same number R of stacks (the redundancy). Each step every alive group
// computes the types in its top S layers (S is the depth). After failures, rejoins or a restart
// the controller decides
//   * the depth S*: the smallest S such that every type can be given to one alive holder with
//     at most S types per group (a group may reorder its own stack freely);
//   * the assignment: a provider for every type, of minimal total move cost at depth S*, where
//     giving type t to group g costs 0 if t already sits in g's top S* layers before the event
//     and move_cost[g, layer] otherwise (default 1: the number of swaps);
//   * the new stacks: each group's stack with its assigned types swapped into its top S* layers;
//   * the patch: the (type, new provider) pairs of the types whose provider died in the event.
// A type with no alive holder is a wipe-out: no depth helps, the job needs a global restart.
//
// Invariants kept between events (they make the incremental path exact):
//   (I1) every assigned type sits in its provider's top `depth` layers, so measured against the
//        current stacks the assignment costs 0, hence it is a min-cost flow for its value;
//   (I2) load[g] = number of types provided by g <= depth, for every alive g.
// A wipe-out needs no per-type count of alive holders: while every type has an alive provider,
// a type whose last alive holder fails was provided by that holder, so a failure checks only
// the types it displaces (one look along their holder slots).
//
// Relation to the graph kernels (graph.hpp). The controller runs its own search: an
// incremental successive-shortest-path min-cost flow on the implicit graph type -> holder ->
// sink, kept warm between events. It never calls hopcroft_karp, max_b_matching or
// min_cost_flow; those kernels solve the same phases from scratch on explicit CSR arrays and
// serve as independent references in the tests (and as general-purpose kernels).
//
// Algorithm. One failure displaces the failed group's few assigned types. A displaced type that
// sits in an alive holder's top S layers goes there at cost 0 (that holder computes it without
// providing it, so its load is below S). The rest are routed by successive shortest augmenting
// paths (Dijkstra with Johnson potentials) in the residual graph source -> type -> group -> sink;
// starting from the zero-cost flow of (I1) this yields a min-cost flow (the SSP invariant).
// With unit costs the search is goal-directed: distance labels, lower bounds on each node's
// distance to the sink, are kept between failures and serve as the heuristic of an A* search
// (csrc/src/controller_labels.cpp); near saturation they are set afresh, exact up to 2, from
// the groups with room. With fewer than 4 slots of room left, and for other costs near
// saturation, the path is searched from both ends (csrc/src/controller_bidirectional.cpp). If
// no augmenting path exists at depth S, the maximum flow at S misses a type (a vertex without
// an augmenting path never gains one), so the depth rises to S+1. The surviving assignment
// still costs 0 at S+1 (every type sits in its provider's top S layers, load <= S), so it is
// a min-cost flow there too: the paths found at S are undone and augmenting resumes from it
// (an incremental raise; no full solve). Rejoins that may lower the depth and restarts run
// the full solve: greedy zero-cost assignment, then SSP for the remaining types, from the
// lowest depth ceil(T / alive) up.
//
// Complexity. Validation and construction O(N * height). A failure that needs no depth change
// costs O(height * R) per displaced type plus the explored part of the residual graph, which is
// small unless spare capacity is nearly exhausted. A full solve is O(E log E) per augmentation
// in the worst case, with E = N * height, and in practice close to O(E).
//
// Limits. n_groups * height < 2**31; move costs in [0, 2**40] with n_groups * height *
// max(move_cost) <= 2**56 (types.hpp), checked before any work, so no total overflows.
//
// Thread safety. A Controller is a plain value: not internally synchronised, so drive one
// controller from one thread at a time (distinct controllers are independent; `solve` is
// reentrant). The Python binding serialises the calls on one controller with a mutex.
// snapshot() is const but resets the search's distance labels (a cache, see "Snapshots"), so
// it too must not run concurrently with another call on the same controller.
//
// Snapshots. snapshot() writes a binary image (magic, version, the layout, the state, an
// opaque caller `meta` string, an FNV-1a checksum against accidental corruption). restore()
// trusts none of it: it rebuilds the controller from the layout and costs (re-deriving the
// initial decision and the unit-cost flag and comparing them with the stored ones), checks
// that each current stack is a permutation of its layout row, re-derives the loads (I2),
// checks every assignment (I1), that the wiped-out flag is set
// exactly when some type has no alive holder, and that the depth equals a fresh solve's
// minimal depth. The distance labels of the failure search are not stored: they steer only
// which of several min-cost answers is taken, and snapshot() resets them, so the controller
// that wrote an image and one restored from it take identical decisions afterwards. The
// checksum is no defence against a deliberate edit that passes those
// checks (say, events or meta): the Python layer adds an HMAC-SHA256 for that.
//
// References. J. E. Hopcroft, R. M. Karp, "An n^{5/2} algorithm for maximum matchings in
// bipartite graphs", SIAM J. Comput. 2(4), 1973. J. Edmonds, R. M. Karp, "Theoretical
// improvements in algorithmic efficiency for network flow problems", J. ACM 19(2), 1972.
// Lee et al., "SPARe: Stacked Parallelism with Adaptive Reordering for Fault-Tolerant LLM
// Pretraining Systems with 100k+ GPUs", ICML 2026.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "spare_fast/types.hpp"
#include "spare_fast/validate.hpp"

namespace spare_fast {

// Outcome of a decision. A wipe-out is an expected outcome, reported as a value.
enum class Status : std::int32_t { kOk = 0, kWipeout = 1 };

// The result of one controller event (or of a stateless solve). The assignment and stacks are
// not copied here: read them from the controller (or from the solve's outputs).
struct Decision {
  Status status = Status::kOk;
  // 0: the stacks before the event already held every assigned type in the top `depth` layers
  //    (nothing moves); 1: the depth search found a wipe-out; 2: a reorder was computed.
  std::int32_t phase = 0;
  // Minimal depth S*; 0 on wipe-out.
  std::int32_t depth = 0;
  // Minimal total move cost at depth S*; 0 on wipe-out.
  Cost moves = 0;
  // Number of (type, group) pairs swapped into a top layer (equals moves for unit costs).
  std::int64_t swaps = 0;
  // Flattened rows (type, group): types whose provider died in this event, with the survivor
  // that now provides them.
  std::vector<Index> patch;
  // Wall-clock seconds spent deciding (validation included).
  double seconds = 0.0;
  // True when the decision ran the full solve (a rejoin that may lower the depth, a restart);
  // a failure, depth raise included, never does.
  bool full_solve = false;
  // The controller's event count after this event (0 for a stateless solve): a caller that
  // reads the assignment later can tell whether another event has changed it since.
  std::uint64_t event = 0;
};

struct FailEachResult;
class Controller;
FailEachResult fail_each(Controller& controller, Span<Index> groups, bool stop_at_wipeout);

class Controller {
 public:
  // stacks: n_groups x height row-major; every type in [0, T) appears equally often and at most
  // once per stack. move_cost: empty (all ones) or n_groups x height nonnegative costs.
  // Throws std::invalid_argument / std::out_of_range naming the first bad cell.
  Controller(Span<Index> stacks, std::int64_t n_groups, std::int64_t height,
             Span<Cost> move_cost);

  // Events. Each validates its whole input first; a rejected call changes nothing.
  Decision fail(Span<Index> groups);
  // fail() writing into `d` (every field overwritten), reusing the capacity of its patch: a
  // caller deciding many events in a row (batch.hpp) allocates nothing per event. On a rejected
  // call `d` is unchanged.
  void fail_into(Span<Index> groups, Decision& d);
  Decision rejoin(Span<Index> groups);
  Decision restart();

  // Stateless from-scratch decision on `stacks` (the current orders) and `alive`. Writes the
  // assignment (T entries, -1 on wipe-out) and the reordered stacks if the pointers are given.
  static Decision solve(Span<Index> stacks, std::int64_t n_groups, std::int64_t height,
                        Span<std::uint8_t> alive, Span<Cost> move_cost,
                        std::vector<Index>* assignment_out,
                        std::vector<Index>* stacks_out);

  // Serialisation (see "Snapshots" above). `meta` is stored verbatim and handed back by
  // restore through `meta_out` (the Python layer keeps the layout's kind and seed there).
  // restore throws std::invalid_argument ("snapshot: ...") for any inconsistency.
  std::string snapshot(const std::string& meta = std::string()) const;
  static Controller restore(const std::string& data, std::string* meta_out = nullptr);

  std::int32_t n_groups() const { return n_groups_; }
  std::int32_t n_types() const { return n_types_; }
  std::int32_t height() const { return height_; }
  std::int32_t redundancy() const { return redundancy_; }
  std::int32_t depth() const { return depth_; }
  std::int32_t n_alive() const { return n_alive_; }
  bool wiped_out() const { return wiped_out_; }
  std::uint64_t events() const { return events_; }
  const std::int32_t* stacks() const { return stacks_.data(); }
  const std::int32_t* initial_stacks() const { return initial_stacks_.data(); }
  // The stacks as the caller gave them (before the initial decision reordered them).
  const std::int32_t* layout_stacks() const { return layout_stacks_.data(); }
  const std::uint8_t* alive() const { return alive_.data(); }
  const std::int32_t* assignment() const { return assign_.data(); }
  const std::int32_t* load() const { return load_.data(); }
  const std::int64_t* move_cost() const { return move_cost_.data(); }
  bool unit_costs() const { return unit_costs_; }

  // A hint for callers that know their next failures (fail_each): starts loading what
  // fail({g}) reads first. Stage 0 fetches g's stack row; stage 1, once that row is in cache,
  // what the failure of its top types reads first (their providers, labels and holder slots).
  // Changes nothing and decides nothing; any valid g is fine, a stale one only wastes the
  // fetch.
  void prefetch_failure(std::int32_t g, int stage) const;

  // Throws std::invalid_argument (std::out_of_range for an id outside [0, N)) unless every id
  // is in range, distinct, and alive (want_alive) or dead (!want_alive) now. fail() and
  // rejoin() call it first; batch callers (fail_each) check a whole sequence with it.
  void validate_groups(Span<Index> groups, bool want_alive) const;

 private:
  // fail_into without the validation and the clock: fail_each validates the whole sequence
  // once and times each event from one clock reading to the next.
  void decide_failure(Span<Index> groups, Decision& d);
  friend FailEachResult fail_each(Controller& controller, Span<Index> groups,
                                  bool stop_at_wipeout);
  struct NoInitTag {};
  Controller(Span<Index> stacks, std::int64_t n_groups, std::int64_t height,
             Span<Cost> move_cost, NoInitTag);
  // Rebuilds the holder slot -> cell map (slot_cell_) for the current stacks_.
  void index_slots();

  // Holder slot k = t * R + i is the i-th group (in id order) holding type t; slot_cell_[k] is
  // the cell (group * height + layer) where that group keeps t now. The group of a slot never
  // changes, its layer does when the stacks are reordered.
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
  // Cost of giving a type to the holder of slot k (= t * R + i) from its layer in that
  // group's stack: 0 inside the top price_depth_ layers.
  std::int64_t cost_of_slot(std::int64_t slot) const {
    const Holder h = holder_at(static_cast<std::size_t>(slot));
    return cost_at(h.group, h.layer);
  }
  // The slot of type t held by group g (g holds t).
  std::size_t slot_of(std::int32_t t, std::int32_t g) const {
    std::size_t k = static_cast<std::size_t>(t) * static_cast<std::size_t>(redundancy_);
    while (slot_group(k) != g) ++k;
    return k;
  }
  // True when type t has an alive holder; every_type_held() for all types (no wipe-out),
  // O(T * R).
  bool type_held(std::int32_t t) const;
  bool every_type_held() const;
  std::int64_t cost_at(std::int32_t g, std::int32_t layer) const {
    if (layer < price_depth_) return 0;
    if (unit_costs_) return 1;
    return move_cost_[static_cast<std::size_t>(g) * static_cast<std::size_t>(height_) +
                      static_cast<std::size_t>(layer)];
  }
  void set_all_alive();
  // Runs the depth search from `s_min` and the min-cost assignment; keeps stacks as the
  // "before" reference. Returns false on wipe-out (some type has no alive holder).
  bool full_solve(std::int32_t s_min);
  // Greedy zero-cost assignment of every type, then SSP for the rest. False if infeasible at S.
  bool assign_at_depth(std::int32_t s);
  // One shortest augmenting path from unassigned type t; false if none exists.
  bool augment_from(std::int32_t t);
  // The same path searched from both ends (csrc/src/controller_bidirectional.cpp), for a
  // failure while spare capacity is nearly exhausted (near_saturation()).
  // `unassigned`: how many types (t included) have no provider now.
  bool augment_bidirectional(std::int32_t t, std::int64_t unassigned);
  bool near_saturation() const;
  // The same path for unit costs, searched towards the sink with distance labels kept between
  // failures (csrc/src/controller_labels.cpp). prepare_labels(s) starts them at 0 unless they
  // are already valid at depth s.
  bool augment_labelled(std::int32_t t);
  void prepare_labels(std::int32_t s);
  // Every type's and alive group's label to `value`, every dead group's to kDeadLabel.
  void fill_labels(std::int32_t value);
  // Sets every label to min(distance to the sink, 2), valid at depth s, in time O(N + T) plus
  // the nodes within distance 1 of the groups with room (controller_labels.cpp). Only before
  // a failure's first search at s (every assigned type then costs 0).
  void relabel_near_sink(std::int32_t s);
  void reset_labels() const { label_depth_ = 0; }
  // The alive groups with load < price_depth_ (cached between calls, checked by total room).
  const std::vector<std::int32_t>& free_groups(std::int64_t unassigned);
  // Sets that cache to the groups of the room bitmap (prepared at price_depth_ first).
  void seed_free_groups();
  void reserve_backward_search();
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
    const std::int32_t* row = stacks_.data() + static_cast<std::size_t>(g) *
                                                   static_cast<std::size_t>(height_);
    const std::int32_t top = provided_layers(g);
    for (std::int32_t l = 0; l < top; ++l) {
      if (assign_[static_cast<std::size_t>(row[l])] == g) f(row[l], l);
    }
  }
  // Augments along a shortest path that a forward search found: `last` (a group with room)
  // takes one more type, and walking back, parent(group node) is the type that moves into it
  // and parent(type) the group it leaves, up to `source`. Logged for undo while log_undo_.
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
  // Starts loading type t's holder slots (its slot_cell_ row), which every search
  // and the greedy placement read first when they reach t.
  void prefetch_holder_slots(std::int32_t t) const;
  // A type moved into g is swapped into g's top layers at the end of the event
  // (reorder_stacks): start loading g's stack row now.
  void prefetch_reorder(std::int32_t g) const;
  // Records that type t is now provided by g. During a failure it also marks g for
  // provided_layers() whatever t's layer (a conservative mark: g's whole stack is scanned).
  void assign_type(std::int32_t t, std::int32_t g);
  void record_change(std::int32_t t);
  // Moves every assigned type into its provider's top `depth_` layers; sums moves and swaps.
  void reorder_stacks(Decision& d);
  // Swaps layers a and b of g's stack; kb is the holder slot of the type at layer b.
  void swap_layers(std::int32_t g, std::int32_t a, std::int32_t b, std::size_t kb);
  // Completes a decision: wipe-out bookkeeping, or reorder + status/depth/phase.
  void finish(Decision& d, bool ok);

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
  std::vector<Index> initial_stacks_;  // the layout after the initial decision, for restart()
  std::vector<Index> stacks_;          // current order, n_groups x height
  std::vector<std::int64_t> move_cost_;       // per (group, layer); empty when unit_costs_
  // Holder slot k = t * R + i -> its cell, group * height + layer (one array rather than a
  // group array and a layer array: a search reads a type's holders in half the cache lines).
  std::vector<Index> slot_cell_;
  Divider height_div_;                 // cell -> group
  std::vector<std::uint8_t> alive_;
  std::vector<Index> assign_;          // type -> provider group, -1 if none
  std::vector<Index> load_;            // (I2)

  // Restart state: the initial decision, computed once.
  std::vector<Index> initial_assign_;
  std::int32_t initial_depth_ = 1;
  std::int64_t initial_moves_ = 0;  // the initial decision's cost against the layout's order
  std::int64_t initial_swaps_ = 0;

  // Scratch for the shortest-path searches. Node ids: types [0, T), groups [T, T+N), sink.
  // What a search reads of one node sits in one 32-byte record (within one cache line): the
  // searches touch random nodes, and those cache misses are most of their cost.
  struct SearchNode {
    std::int64_t dist = 0;          // valid iff dist_stamp == search_stamp_
    std::int64_t pot = 0;           // Johnson potential, valid iff pot_stamp == pot_epoch_
    std::uint32_t dist_stamp = 0;
    std::uint32_t pot_stamp = 0;
    std::int32_t parent = -1;       // previous node on the shortest path
    std::uint8_t settled = 0;       // valid iff dist_stamp == search_stamp_
  };
  static_assert(sizeof(SearchNode) == 32, "a search node is half a cache line");
  std::vector<SearchNode> node_;
  std::vector<Index> settled_list_;
  std::uint32_t search_stamp_ = 0;
  std::vector<std::pair<std::int64_t, std::int32_t>> heap_;  // Dijkstra queue (binary heap)
  std::deque<std::pair<std::int64_t, std::int32_t>> deque_;  // 0-1 BFS queue
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
  // Per-event scratch of fail() and reorder_stacks(), kept to avoid allocations.
  std::vector<Index> displaced_;
  std::vector<Index> pending_;
  std::vector<Index> deep_;
  // Undo log of a failure's augmenting paths at one depth: (type, previous provider), or
  // (-1, group) for a load increment. Replayed backwards when the depth must rise.
  std::vector<std::pair<std::int32_t, std::int32_t>> undo_;
  bool log_undo_ = false;
  // Backward search scratch (sized at construction) and the path it assembles.
  struct BackNode {
    std::int64_t dist = 0;  // valid while the node's bit is set in bbits_
    std::int32_t next = -1;  // next node towards the sink
  };
  std::vector<BackNode> bnode_;
  std::vector<std::uint8_t> bsettled_;
  // The nodes each side of the two-ended search has labelled (controller_bidirectional.cpp).
  std::vector<std::uint64_t> fbits_;
  std::vector<std::uint64_t> bbits_;
  std::vector<std::int32_t> bsettled_list_;
  std::vector<std::pair<std::int64_t, std::int32_t>> bheap_;
  std::deque<std::pair<std::int64_t, std::int32_t>> bdeque_;
  std::vector<std::int32_t> path_fwd_;
  std::vector<std::int32_t> path_bwd_;
  std::vector<std::int32_t> free_cache_;
  // Distance labels (controller_labels.cpp): per type and group, a lower bound on the residual
  // distance to the sink, valid at depth label_depth_ (0: not valid, to be reset); a dead
  // group's label is kDeadLabel, so the search reads one compact array per holder rather than
  // the group's liveness and a search record. A cache: it steers only which of several
  // min-cost answers a failure takes, and snapshot() resets it (hence mutable) so that a
  // restored controller decides as the original does. A live label never reaches kDeadLabel:
  // it is at most a shortest path's length, and a path moves each type at most once, so it is
  // below T <= n_groups * height / R < 2**30 once R >= 2 (with R = 1 no type can move and
  // every label stays 0).
  static constexpr std::int32_t kDeadLabel = std::int32_t{1} << 30;
  std::vector<std::int32_t> label_;
  // The search's scratch. A node settled in this search has its bit set in settled_bits_
  // (25 KB at N = 100,000: it stays in cache, where a record per node would not) and is listed
  // with its distance in label_settled_, which clears the bits afterwards; its parent on the
  // shortest path goes to label_parent_, which is written at settling and read only along the
  // path found.
  struct LabelSettled {
    std::int32_t node;
    std::int32_t dist;
  };
  std::vector<std::uint64_t> settled_bits_;
  std::vector<LabelSettled> label_settled_;
  std::vector<std::int32_t> label_parent_;
  // Valid at depth room_depth_ (0: not valid): bit g is set iff group g is alive with
  // load < room_depth_ (it has room). 12.5 KB at N = 100,000, so the failure searches and
  // placements test a group's room in cache rather than reading its liveness and load. A
  // failure clears the failed group's bit; a placement or path that fills a group clears its
  // bit (note_load, after every load increment); loads that fall (undoing paths for a depth
  // rise, wipe-outs, rejoins, restarts, full solves) invalidate it, and prepare_room rebuilds
  // it in O(N) when a failure needs it at another depth.
  std::vector<std::uint64_t> room_bits_;
  std::int32_t room_depth_ = 0;
  void prepare_room(std::int32_t s);
  void invalidate_room() { room_depth_ = 0; }
  // A load that reached `room_depth_` leaves no room: called after every load increment of a
  // failure's placements and paths.
  void note_load(std::int32_t g) {
    if (room_depth_ != 0 && load_[static_cast<std::size_t>(g)] >= room_depth_) clear_room_bit(g);
  }
  // Liveness as a bitmap (alive_ is the public byte array; this one stays in cache).
  std::vector<std::uint64_t> alive_bits_;
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
  bool has_room(std::int32_t g) const {
    const auto gi = static_cast<std::size_t>(g);
    return (room_bits_[gi >> 6] >> (gi & 63)) & 1U;
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
  void clear_room_bit(std::int32_t g) {
    const auto gi = static_cast<std::size_t>(g);
    room_bits_[gi >> 6] &= ~(std::uint64_t{1} << (gi & 63));
  }
  mutable std::int32_t label_depth_ = 0;
  // The spare room at the last relabel_near_sink while the labels stayed valid since (-1:
  // none), and its scratch: the nodes found at distance 0 and at distance 1.
  std::int64_t relabel_room_ = -1;
  std::vector<std::int32_t> relabel_zero_;
  std::vector<std::int32_t> relabel_one_;
  // Bucket d of the search queue: (node, parent, label) entries at reduced distance d. A node
  // is queued once per improving edge and settled by its first entry popped.
  struct LabelEntry {
    std::int32_t node;
    std::int32_t parent;
    std::int32_t label;  // the node's label (labels do not change during a search)
  };
  std::vector<std::vector<LabelEntry>> bucket_;
  std::vector<LabelEntry> label_later_;
  // Types whose provider changed during the event, for the move count.
  std::vector<Index> changed_;
  std::vector<std::uint8_t> changed_flag_;
  // Depth used to price edges (0 inside the top price_depth_ layers). Stacks are reordered only
  // at the end of an event, so slot_cell_ holds the before-event layers while it is decided.
  std::int32_t price_depth_ = 1;
};

}  // namespace spare_fast
