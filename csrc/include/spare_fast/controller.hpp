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
// distance to the sink, are kept between failures and serve as the heuristic of an A* search;
// near saturation they are set afresh, exact up to 2, from the groups with room. With fewer
// than 4 slots of room left, and for other costs near saturation, the path is searched from
// both ends. If
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
// Sources. This header is the contract; the state and the searches live behind it in
// csrc/src/ (not installed): controller_state.hpp holds the state every search reads
// directly, controller.cpp the events, and each search is a class with its own scratch in its
// own file: controller_dijkstra.cpp (Dijkstra / 0-1 BFS, the full solve and general costs),
// controller_labels.cpp (the labelled search for unit costs), controller_relabel.cpp (the
// relabelling near saturation) and controller_bidirectional.cpp (the two-ended search), the
// first and the last sharing one queue and one edge relaxation (search_queue.hpp).
//
// Thread safety. A Controller is a plain value (a copy is independent, deep): not internally
// synchronised, so drive one controller from one thread at a time (distinct controllers are
// independent; `solve` is reentrant). The Python binding serialises the calls on one
// controller with a mutex. snapshot() is const but resets the search's distance labels (a
// cache, see "Snapshots"), so it too must not run concurrently with another call on the same
// controller.
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
#include <memory>
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
  // The same, taking ownership of `stacks` (no copy: at N = 1,000,000 and height 20 a copy
  // is 80 MB). On a rejected input `stacks` is left as it was.
  Controller(std::vector<Index>&& stacks, std::int64_t n_groups, std::int64_t height,
             Span<Cost> move_cost);
  // A copy is an independent controller in the same state (it decides as the original does);
  // a move is cheap. A moved-from controller may only be assigned to or destroyed.
  Controller(const Controller& other);
  Controller& operator=(const Controller& other);
  Controller(Controller&& other) noexcept;
  Controller& operator=(Controller&& other) noexcept;
  ~Controller();

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

  // The state between events. The arrays are the controller's own (n_groups x height stacks,
  // n_groups alive and load, T assignment entries, move_cost empty for unit costs), valid until
  // the next event, restore into this controller, or its destruction.
  std::int32_t n_groups() const;
  std::int32_t n_types() const;
  std::int32_t height() const;
  std::int32_t redundancy() const;
  std::int32_t depth() const;
  std::int32_t n_alive() const;
  bool wiped_out() const;
  std::uint64_t events() const;
  const std::int32_t* stacks() const;
  const std::int32_t* initial_stacks() const;
  // The stacks as the caller gave them (before the initial decision reordered them).
  const std::int32_t* layout_stacks() const;
  const std::uint8_t* alive() const;
  const std::int32_t* assignment() const;
  const std::int32_t* load() const;
  const std::int64_t* move_cost() const;
  bool unit_costs() const;

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
  // The state, the searches and the event logic (csrc/src/controller_impl.hpp). One pointer
  // per event: every search works on the state directly.
  struct Impl;
  // fail_into without the validation and the clock: fail_each validates the whole sequence
  // once and times each event from one clock reading to the next.
  void decide_failure(Span<Index> groups, Decision& d);
  friend FailEachResult fail_each(Controller& controller, Span<Index> groups,
                                  bool stop_at_wipeout);

  std::unique_ptr<Impl> impl_;
};

}  // namespace spare_fast
