// Hopcroft-Karp matching and its capacity-aware generalisation to b-matching.
//
// Both kernels share one shape: a greedy start (first_fit, which also checks the CSR entries
// block by block), single augmenting searches on a work budget,
// then Hopcroft-Karp phases (hopcroft_karp_phases, one implementation for both, over the
// right side's capacities: UnitRight or SlotRight) that each run a BFS from the free left
// vertices to layer the graph by shortest augmenting-path length, and an iterative DFS
// (explicit stack, current-arc pointers) that augments a maximal set of left-disjoint
// shortest paths. The DFS stack holds at most one
// entry per BFS layer, so its size is bounded by the number of left vertices whatever the
// degrees or duplicate entries. On random sparse graphs matching starts with Karp-Sipser
// instead, drops the free vertices that no augmenting path can reach (live_left) and goes
// to the phases at once. The starts and searches are among those compared by I. S. Duff,
// K. Kaya and B. Ucar, "Design, implementation, and analysis of maximum transversal
// algorithms", ACM Trans. Math. Software 38(2), 2011.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "spare_fast/graph.hpp"
#include "spare_fast/validate.hpp"

namespace spare_fast {
namespace {

constexpr std::int32_t kUnreached = std::numeric_limits<std::int32_t>::max();

// Checks n_right and the row pointer. The entries are checked by first_fit, the first pass of
// both kernels over them, a block of rows at a time just before it reads the block (one pass
// over the largest input instead of two); anything that reads entries before first fit
// checks them itself.
void check_csr_shape(Span<std::int32_t> indptr, Span<std::int32_t> indices,
                     std::int64_t n_right) {
  check_nonnegative("n_right", n_right);
  check_fits_int32("n_right", n_right);
  if (indices.size > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    throw std::invalid_argument("indices has length " + std::to_string(indices.size) +
                                ", more than int32 entries");
  }
  check_indptr(indptr, indices.size);
}

std::size_t as_size(std::int32_t v) { return static_cast<std::size_t>(v); }

// Whether any of p[0, n) lies outside [0, limit): as unsigned, a negative id is huge, so one
// comparison per entry finds both, in a branch-free loop that vectorises. first_fit runs it
// over every entry; on a SPARe graph (1.4M entries, most rows settled by their first entry)
// the baseline's 4-lane SSE2 loop is about a fifth of a b-matching solve. On x86-64 CPUs with
// AVX2 (asked once, at run time) the same loop, compiled for AVX2, runs 8 lanes wide.
#if defined(__GNUC__)
#define SPARE_FAST_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define SPARE_FAST_ALWAYS_INLINE inline
#endif
SPARE_FAST_ALWAYS_INLINE bool any_outside_loop(const std::int32_t* p, std::size_t n,
                                               std::uint32_t limit) {
  std::uint32_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    bad |= static_cast<std::uint32_t>(static_cast<std::uint32_t>(p[i]) >= limit);
  }
  return bad != 0;
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) bool any_outside_avx2(const std::int32_t* p, std::size_t n,
                                                      std::uint32_t limit) {
  return any_outside_loop(p, n, limit);
}
#undef SPARE_FAST_ALWAYS_INLINE
#endif

bool any_outside(const std::int32_t* p, std::size_t n, std::uint32_t limit) {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) return any_outside_avx2(p, n, limit);
#endif
  return any_outside_loop(p, n, limit);
}

// Whether first fit left enough work that a better start (Karp-Sipser for matching, the
// pressure greedy for b-matching) pays off: the gap between the matched count and the
// trivial bound min(left vertices with edges, slots) exceeds max(64, n_left / 32). On SPARe
// graphs first fit reaches the bound and the gap is 0.
bool worth_better_start(std::size_t n_free, std::size_t n_with_edges, std::size_t n_slots,
                       std::size_t n_left) {
  const std::size_t bound = std::min(n_with_edges, n_slots);
  const std::size_t matched = n_with_edges - n_free;
  return bound > matched && bound - matched > std::max<std::size_t>(64, n_left / 32);
}

// The transposed adjacency: for each right vertex j, the left vertices with an entry at j
// (once per entry), radj[rstart[j], rstart[j + 1]).
struct Transpose {
  std::vector<Index> rstart;
  std::vector<Index> radj;
};

Transpose transpose(Span<std::int32_t> indptr, Span<std::int32_t> indices, std::size_t n_right) {
  const std::size_t n_left = indptr.size - 1;
  Transpose t;
  t.rstart.assign(n_right + 1, 0);
  for (std::size_t k = 0; k < indices.size; ++k) ++t.rstart[as_size(indices[k]) + 1];
  for (std::size_t j = 0; j < n_right; ++j) t.rstart[j + 1] += t.rstart[j];
  t.radj.resize(indices.size);
  std::vector<Index> fill(t.rstart.begin(), t.rstart.end() - 1);
  for (std::size_t u = 0; u < n_left; ++u) {
    for (Index k = indptr[u]; k < indptr[u + 1]; ++k) {
      t.radj[as_size(fill[as_size(indices[as_size(k)])]++)] = static_cast<Index>(u);
    }
  }
  return t;
}

// Karp-Sipser initial matching (R. M. Karp and M. Sipser, 1981), for graphs on which first fit
// leaves many left vertices free (random sparse graphs; SPARe graphs never need it). A vertex
// of either side with a single unmatched neighbour takes it: some maximum matching does the
// same, so the rule never costs a later augmentation. When no such vertex is left, the next
// unmatched left vertex in index order takes its unmatched neighbour of least remaining degree
// (the choice that takes an option from the fewest others), and the degree-1 rule resumes.
// Degrees count the entries at unmatched vertices of the other side and live in one byte each,
// so that both arrays stay in the cache (kMany: too many to track; such a vertex is never
// forced, which only costs the heuristic). O(V + E).
void karp_sipser(Span<std::int32_t> indptr, Span<std::int32_t> indices, const Transpose& t,
                 std::vector<Index>& mate_l, std::vector<Index>& mate_r) {
  const std::size_t n_left = mate_l.size();
  const std::size_t n_right = mate_r.size();
  constexpr std::uint8_t kMany = 255;
  std::vector<std::uint8_t> deg_l(n_left);
  std::vector<std::uint8_t> deg_r(n_right);
  std::vector<Index> forced;  // degree-1 vertices: left u as u, right j as -1 - j
  for (std::size_t u = 0; u < n_left; ++u) {
    deg_l[u] = static_cast<std::uint8_t>(std::min<Index>(indptr[u + 1] - indptr[u], kMany));
    if (deg_l[u] == 1) forced.push_back(static_cast<Index>(u));
  }
  for (std::size_t j = 0; j < n_right; ++j) {
    deg_r[j] = static_cast<std::uint8_t>(std::min<Index>(t.rstart[j + 1] - t.rstart[j], kMany));
    if (deg_r[j] == 1) forced.push_back(-1 - static_cast<Index>(j));
  }
  std::fill(mate_l.begin(), mate_l.end(), -1);
  std::fill(mate_r.begin(), mate_r.end(), -1);
  // A matched vertex gets degree 0, and so does an unmatched one whose neighbours are all
  // matched; neither is counted down again. Hence the unmatched neighbours of an unmatched
  // vertex are exactly its neighbours of nonzero degree, and the loops below read only the two
  // degree arrays.
  auto match = [&](Index u, Index j) {
    mate_l[as_size(u)] = j;
    mate_r[as_size(j)] = u;
    deg_l[as_size(u)] = 0;
    deg_r[as_size(j)] = 0;
    for (Index k = indptr[as_size(u)]; k < indptr[as_size(u) + 1]; ++k) {
      const Index x = indices[as_size(k)];
      std::uint8_t& d = deg_r[as_size(x)];
      if (d > 0 && d < kMany && --d == 1) forced.push_back(-1 - x);
    }
    for (Index r = t.rstart[as_size(j)]; r < t.rstart[as_size(j) + 1]; ++r) {
      const Index x = t.radj[as_size(r)];
      std::uint8_t& d = deg_l[as_size(x)];
      if (d > 0 && d < kMany && --d == 1) forced.push_back(x);
    }
  };
  auto drain = [&]() {
    while (!forced.empty()) {
      const Index v = forced.back();
      forced.pop_back();
      if (v >= 0) {
        if (deg_l[as_size(v)] != 1) continue;
        for (Index k = indptr[as_size(v)]; k < indptr[as_size(v) + 1]; ++k) {
          const Index j = indices[as_size(k)];
          if (deg_r[as_size(j)] > 0) {
            match(v, j);
            break;
          }
        }
      } else {
        const Index j = -1 - v;
        if (deg_r[as_size(j)] != 1) continue;
        for (Index r = t.rstart[as_size(j)]; r < t.rstart[as_size(j) + 1]; ++r) {
          const Index u = t.radj[as_size(r)];
          if (deg_l[as_size(u)] > 0) {
            match(u, j);
            break;
          }
        }
      }
    }
  };
  drain();
  for (std::size_t u = 0; u < n_left; ++u) {
    if (deg_l[u] == 0) continue;
    Index best = -1;
    std::uint8_t least = kMany;
    for (Index k = indptr[u]; k < indptr[u + 1]; ++k) {
      const Index j = indices[as_size(k)];
      const std::uint8_t d = deg_r[as_size(j)];
      if (d > 0 && (best < 0 || d < least)) {
        best = j;
        least = d;
      }
    }
    if (best < 0) continue;  // only a saturated degree (kMany) hides that none is left
    match(static_cast<Index>(u), best);
    drain();
  }
}

// A right vertex of the b-matching: slots[start, fill) hold its assigned left vertices,
// slots[fill, end) are free. `mark` is scratch: the number of left vertices still to be
// placed that have an entry here (pressure greedy), or the search that last scanned it
// (augmenting searches). One 16-byte record, so each visit to a right vertex is one cache
// miss: on large random graphs every loop below is bound by such misses.
struct Right {
  Index start;
  Index fill;
  Index end;
  Index mark;
};

// The right side of a matching, as the first-fit start and the Hopcroft-Karp phase see it.
// UnitRight: capacity one per right vertex (mate_r); SlotRight: capacity[j] slots per right
// vertex (Right records); the b-matching's first fit runs on RoomRight (below) and lays the
// slots out after it. Each provides
//   has_room(j)            j can take one more left vertex;
//   take(j, u)             u takes room at j (first fit; UnitRight and RoomRight);
//   begin_phase()          a new phase starts;
//   scan(j, lu, f)         BFS: layer lu reached j, which has no room: f(w) for every left
//                          vertex w that j holds (for SlotRight only the first layer to
//                          reach j passes through it, which keeps paths shortest);
//   next(j, lu, level)     DFS: a left vertex that j holds on layer lu + 1 through which the
//                          path may go on, or -1;
//   retreat(parent, it)    DFS: the vertex pushed from `parent` led nowhere;
//   augment(stack, it, j)  DFS: the path on `stack` ends at j, which has room: shift along
//                          it (each vertex's arc it[v] points at the right vertex it takes).
struct UnitRight {
  Span<std::int32_t> indices;
  std::vector<Index>& mate_l;
  std::vector<Index>& mate_r;

  bool has_room(Index j) const { return mate_r[as_size(j)] < 0; }
  void take(Index j, Index u) {
    mate_r[as_size(j)] = u;
    mate_l[as_size(u)] = j;
  }
  void begin_phase() {}
  template <class F>
  void scan(Index j, std::int32_t /*lu*/, F&& f) const {
    f(mate_r[as_size(j)]);
  }
  Index next(Index j, std::int32_t lu, const std::vector<std::int32_t>& level) const {
    const Index w = mate_r[as_size(j)];
    return level[as_size(w)] == lu + 1 ? w : -1;
  }
  void retreat(Index parent, std::vector<Index>& it) const { ++it[as_size(parent)]; }
  void augment(const std::vector<Index>& stack, const std::vector<Index>& it, Index /*j*/) {
    for (const Index v : stack) {
      const Index j = indices[as_size(it[as_size(v)])];
      mate_r[as_size(j)] = v;
      mate_l[as_size(v)] = j;
    }
  }
};

struct SlotRight {
  Span<std::int32_t> indices;
  std::vector<Right>& right;
  std::vector<Index>& slots;
  std::vector<Index>& mate;
  // cursor[j] walks j's slots in the DFS (a right vertex whose slots are exhausted is dead for
  // the phase); right[j].mark is the left layer that scanned j in this phase (kUnreached if
  // none), reset through `scanned`.
  std::vector<Index> cursor;
  std::vector<Index> scanned;

  bool has_room(Index j) const {
    const Right& r = right[as_size(j)];
    return r.fill < r.end;
  }
  void begin_phase() {
    if (cursor.size() != right.size()) {
      cursor.assign(right.size(), 0);
      for (Right& r : right) r.mark = kUnreached;
    }
    for (const Index j : scanned) right[as_size(j)].mark = kUnreached;
    scanned.clear();
  }
  template <class F>
  void scan(Index j, std::int32_t lu, F&& f) {
    Right& r = right[as_size(j)];
    if (r.mark != kUnreached) return;
    r.mark = lu;
    cursor[as_size(j)] = r.start;
    scanned.push_back(j);
    for (Index s = r.start; s < r.fill; ++s) f(slots[as_size(s)]);
  }
  Index next(Index j, std::int32_t lu, const std::vector<std::int32_t>& level) {
    const Right& r = right[as_size(j)];
    if (r.mark != lu) return -1;
    Index& c = cursor[as_size(j)];
    for (; c < r.fill; ++c) {
      if (level[as_size(slots[as_size(c)])] == lu + 1) return slots[as_size(c)];
    }
    return -1;
  }
  // The parent's right vertex: its current slot led nowhere, try its next slot.
  void retreat(Index parent, std::vector<Index>& it) {
    ++cursor[as_size(indices[as_size(it[as_size(parent)])])];
  }
  void augment(const std::vector<Index>& stack, const std::vector<Index>& it, Index j) {
    // The last vertex takes a free slot of j; every earlier u_i takes over the slot of
    // u_{i+1} at the right vertex its arc points at (cursor of that vertex), so no slot moves.
    Index slot = right[as_size(j)].fill++;
    Index to = j;
    for (std::size_t i = stack.size(); i-- > 0;) {
      const Index v = stack[i];
      slots[as_size(slot)] = v;
      mate[as_size(v)] = to;
      if (i > 0) {
        to = indices[as_size(it[as_size(stack[i - 1])])];
        slot = cursor[as_size(to)];
      }
    }
  }
};

// The b-matching's right side as first fit alone sees it: room[j] free places at j and the
// left vertex that took a place there last, no full record of who holds them (max_b_matching
// lays the slots out afterwards, from mate, if swap_in leaves a vertex free).
template <class Count>
struct RoomRight {
  std::vector<Count>& room;
  std::vector<Index>& mate;
  std::vector<Index>& last;  // last[j]: the left vertex that took room at j last, or -1

  bool has_room(Index j) const { return room[as_size(j)] > 0; }
  void take(Index j, Index u) {
    --room[as_size(j)];
    mate[as_size(u)] = j;
    last[as_size(j)] = u;
  }
};

// Augmenting paths of length 3, the ones RoomRight's records can show: free left vertex u
// takes the place at one of its right vertices j of x = last[j], which moves to another of
// its right vertices with room. Keeps in free_left the vertices it could not place. Scans at
// most E + (free vertices) entries in all, then stops, leaving the rest to the searches.
//
// After rotated first fit on a SPARe graph the few free vertices nearly always have such a
// path (the random layout at 100,000 groups, r = 20, 30% failed: 5 free, all placed here),
// and then the slot layout and the searches are never built: 0.96 ms instead of 1.40 ms a
// solve, measured side by side.
template <class Count>
void swap_in(Span<std::int32_t> indptr, Span<std::int32_t> indices, RoomRight<Count>& side,
             std::vector<Index>& free_left) {
  auto budget = static_cast<std::int64_t>(indices.size + free_left.size());
  keep_if(free_left, [&](Index u) {
    for (Index k = indptr[as_size(u)]; k < indptr[as_size(u) + 1] && budget > 0; ++k) {
      --budget;
      const Index j = indices[as_size(k)];
      const Index x = side.last[as_size(j)];
      if (x < 0) continue;
      const Index x_end = indptr[as_size(x) + 1];
      budget -= x_end - indptr[as_size(x)];
      for (Index q = indptr[as_size(x)]; q < x_end; ++q) {
        const Index j2 = indices[as_size(q)];
        if (j2 == j || !side.has_room(j2)) continue;
        side.take(j2, x);
        side.mate[as_size(u)] = j;
        side.last[as_size(j)] = u;
        return false;
      }
    }
    return true;
  });
}

// Greedy first fit: each left vertex takes its first entry with room. On SPARe graphs it
// matches almost everything in one O(E) pass. With `rotate`, each left vertex reads its
// entries from a start one entry further than the previous vertex's (reduced modulo its
// degree), wrapping around: SPARe rows list their alive holders in increasing group order, so
// in list order every row reaches first for the same low-numbered groups, fills them early,
// and the later rows each test several full groups before one with room (five on the random
// layout, 100,000 groups, r = 20, S = 2) -- each test a branch that predicts badly. Rotated
// starts spread the rows over their holders: the first test has room for 79% of the rows on
// that instance (16% in list order) and 92% on the cyclic layout (82%).
//
// Returns the left vertices with entries that stay unmatched, in index order, and counts the
// left vertices with entries into *n_with_edges (what unmatched_left would find, without a
// second pass).
template <bool rotate = false, class Side>
std::vector<Index> first_fit(Span<std::int32_t> indptr, Span<std::int32_t> indices,
                             std::size_t n_right, Side& side, std::size_t* n_with_edges) {
  const std::size_t n_left = indptr.size - 1;
  // Rows go in blocks of kBlockRows: the block's entries are checked against n_right (a
  // branch-free loop that vectorises) and then, still in the cache, read by first fit.
  constexpr std::size_t kBlockRows = 256;
  const auto limit = static_cast<std::uint32_t>(n_right);
  std::vector<Index> free_left;
  std::size_t with_edges = 0;
  Index turn = 0;  // rotate: the start, one entry further per row (no division per row)
  for (std::size_t u0 = 0; u0 < n_left; u0 += kBlockRows) {
    const std::size_t u1 = std::min(n_left, u0 + kBlockRows);
    if (any_outside(indices.data + indptr[u0], as_size(indptr[u1] - indptr[u0]), limit)) {
      check_indices(indices, static_cast<std::int64_t>(n_right));  // throws, naming it
    }
    for (std::size_t u = u0; u < u1; ++u) {
      const Index begin = indptr[u];
      const Index end = indptr[u + 1];
      if (begin == end) continue;
      ++with_edges;
      Index from = begin;
      if (rotate) {
        if (++turn >= end - begin) turn %= end - begin;
        from += turn;
      }
      auto try_range = [&](Index lo, Index hi) {
        for (Index k = lo; k < hi; ++k) {
          const Index j = indices[as_size(k)];
          if (side.has_room(j)) {
            side.take(j, static_cast<Index>(u));
            return true;
          }
        }
        return false;
      };
      if (!try_range(from, end) && !try_range(begin, from)) {
        free_left.push_back(static_cast<Index>(u));
      }
    }
  }
  *n_with_edges = with_edges;
  return free_left;
}

// The left vertices with an entry that `mate` leaves unmatched, in index order.
std::vector<Index> unmatched_left(Span<std::int32_t> indptr, const std::vector<Index>& mate) {
  std::vector<Index> free_left;
  for (std::size_t u = 0; u < mate.size(); ++u) {
    if (indptr[u + 1] > indptr[u] && mate[u] < 0) free_left.push_back(static_cast<Index>(u));
  }
  return free_left;
}

// Keeps the vertices of `v` for which keep(u) holds, in order.
template <class Keep>
void keep_if(std::vector<Index>& v, Keep keep) {
  std::size_t kept = 0;
  for (const Index u : v) {
    if (keep(u)) v[kept++] = u;
  }
  v.resize(kept);
}

// Hopcroft-Karp phases from the free left vertices until none is left or no augmenting path
// exists. Each phase layers the graph by a BFS from the free left vertices (level[u]: the
// layer of left vertex u, kUnreached if none) up to the shortest augmenting length `found`,
// then augments a maximal set of left-disjoint shortest paths by an iterative DFS (explicit
// stack, current-arc pointers it[u]); the stack holds at most one entry per layer. `level`
// comes in kUnreached, or negative for left vertices no path may use (never overwritten);
// `mate` is the left side's matching, which the side updates as it augments.
template <class Side>
void hopcroft_karp_phases(Span<std::int32_t> indptr, Span<std::int32_t> indices, Side& side,
                          const std::vector<Index>& mate, std::vector<Index>& free_left,
                          std::vector<std::int32_t>& level) {
  const std::size_t n_left = indptr.size - 1;
  std::vector<Index> queue;
  queue.reserve(n_left);
  std::vector<Index> it(n_left);
  std::vector<Index> stack;
  stack.reserve(n_left);

  while (!free_left.empty()) {
    // BFS layering. The previous phase labelled exactly the vertices of its queue.
    for (const Index u : queue) level[as_size(u)] = kUnreached;
    queue.clear();
    side.begin_phase();
    for (const Index u : free_left) {
      level[as_size(u)] = 0;
      queue.push_back(u);
    }
    std::int32_t found = kUnreached;
    for (std::size_t qi = 0; qi < queue.size(); ++qi) {
      const Index u = queue[qi];
      const std::int32_t lu = level[as_size(u)];
      if (lu >= found) break;
      const Index own = mate[as_size(u)];
      for (Index k = indptr[as_size(u)]; k < indptr[as_size(u) + 1]; ++k) {
        const Index j = indices[as_size(k)];
        if (j == own) continue;
        if (side.has_room(j)) {
          found = lu;
          continue;
        }
        side.scan(j, lu, [&](Index w) {
          if (level[as_size(w)] == kUnreached) {
            level[as_size(w)] = lu + 1;
            queue.push_back(w);
          }
        });
      }
    }
    if (found == kUnreached) break;

    // DFS along the layers from each free left vertex still on layer 0.
    for (const Index u : queue) it[as_size(u)] = indptr[as_size(u)];
    bool any = false;
    for (const Index root : free_left) {
      if (level[as_size(root)] != 0) continue;
      stack.clear();
      stack.push_back(root);
      while (!stack.empty()) {
        const Index u = stack.back();
        const std::int32_t lu = level[as_size(u)];
        const Index own = mate[as_size(u)];
        const Index end = indptr[as_size(u) + 1];
        bool pushed = false;
        bool augmented = false;
        Index& k = it[as_size(u)];
        for (; k < end; ++k) {
          const Index j = indices[as_size(k)];
          if (j == own) continue;
          if (side.has_room(j)) {
            if (lu != found) continue;
            side.augment(stack, it, j);
            // Left-disjoint paths within a phase.
            for (const Index v : stack) level[as_size(v)] = kUnreached;
            augmented = true;
            break;
          }
          if (lu >= found) continue;
          const Index w = side.next(j, lu, level);
          if (w >= 0) {
            stack.push_back(w);
            pushed = true;
            break;
          }
        }
        if (augmented) {
          any = true;
          break;
        }
        if (!pushed) {
          level[as_size(u)] = kUnreached;  // dead end for the rest of the phase
          stack.pop_back();
          if (!stack.empty()) side.retreat(stack.back(), it);
        }
      }
    }
    if (!any) break;
    keep_if(free_left, [&](Index u) { return mate[as_size(u)] < 0; });
  }
}

// Pressure greedy: an initial b-matching for graphs on which first fit leaves many left
// vertices free (random sparse graphs; SPARe graphs never need it). Left vertices go in
// increasing degree order (those with few choices first, as in Karp-Sipser) to the
// neighbour with the most room per left vertex still to come, room / (pending + 1), where
// pending counts the unplaced left vertices with an entry there. It is a single pass over
// the CSR in near-sequential order with independent random reads, unlike Karp-Sipser's
// degree updates, whose chains of dependent reads cost several times more on graphs larger
// than the cache. O(V + E).
void pressure_greedy(Span<std::int32_t> indptr, Span<std::int32_t> indices,
                     std::vector<Right>& right, std::vector<Index>& slots,
                     std::vector<Index>& mate) {
  const std::size_t n_left = mate.size();
  constexpr std::size_t kBuckets = 256;  // degrees >= 255 share the last bucket
  auto bucket_of = [&](std::size_t u) {
    return std::min<std::size_t>(as_size(indptr[u + 1] - indptr[u]), kBuckets - 1);
  };
  for (Right& r : right) {
    r.fill = r.start;
    r.mark = 0;
  }
  std::vector<Index> first(kBuckets + 1, 0);
  for (std::size_t u = 0; u < n_left; ++u) {
    for (Index k = indptr[u]; k < indptr[u + 1]; ++k) ++right[as_size(indices[as_size(k)])].mark;
    ++first[bucket_of(u) + 1];
  }
  for (std::size_t d = 1; d <= kBuckets; ++d) first[d] += first[d - 1];
  std::vector<Index> order(n_left);
  for (std::size_t u = 0; u < n_left; ++u) {
    order[as_size(first[bucket_of(u)]++)] = static_cast<Index>(u);
  }
  for (const Index u : order) {
    Index best = -1;
    std::int64_t best_room = 0;     // room / (pending + 1) of best, as a fraction
    std::int64_t best_pending = 0;  // (ties keep the first entry: deterministic)
    for (Index k = indptr[as_size(u)]; k < indptr[as_size(u) + 1]; ++k) {
      const Index j = indices[as_size(k)];
      Right& r = right[as_size(j)];
      const std::int64_t pending = --r.mark;  // u no longer waits for a place at j
      const std::int64_t room = r.end - r.fill;
      if (room > 0 && (best < 0 || room * (best_pending + 1) > best_room * (pending + 1))) {
        best = j;
        best_room = room;
        best_pending = pending;
      }
    }
    mate[as_size(u)] = best;
    if (best >= 0) slots[as_size(right[as_size(best)].fill++)] = u;
  }
  for (Right& r : right) r.mark = kUnreached;
}

// The first entry of left vertex w at a right vertex with a free slot other than w's own
// right vertex, or -1.
Index free_entry(Span<std::int32_t> indptr, Span<std::int32_t> indices,
                 const std::vector<Right>& right, Index w, Index own) {
  for (Index k = indptr[as_size(w)]; k < indptr[as_size(w) + 1]; ++k) {
    const Index j = indices[as_size(k)];
    const Right& r = right[as_size(j)];
    if (r.fill < r.end && j != own) return j;
  }
  return -1;
}

// Left vertices that have an alternating path to a free right vertex ("live"), by one BFS
// backwards from the free right vertices over the transposed adjacency. O(V + E). Any other
// left vertex w is dead for good: the right vertices its alternating paths reach are all
// matched to left vertices whose entries lead back into that set, augmenting paths never
// enter such a closed set, so augmenting elsewhere leaves it closed. A free dead vertex is
// never matched, and no search needs to descend through a dead vertex.
std::vector<std::uint8_t> live_left(const Transpose& t, const std::vector<Index>& mate_l,
                                    const std::vector<Index>& mate_r) {
  const std::size_t n_right = mate_r.size();
  std::vector<std::uint8_t> live(mate_l.size(), 0);
  std::vector<std::uint8_t> reached(n_right, 0);
  std::vector<Index> queue;
  for (std::size_t j = 0; j < n_right; ++j) {
    if (mate_r[j] < 0 && t.rstart[j + 1] > t.rstart[j]) {
      reached[j] = 1;
      queue.push_back(static_cast<Index>(j));
    }
  }
  for (std::size_t qi = 0; qi < queue.size(); ++qi) {
    const std::size_t j = as_size(queue[qi]);
    for (Index r = t.rstart[j]; r < t.rstart[j + 1]; ++r) {
      const std::size_t u = as_size(t.radj[as_size(r)]);
      if (live[u]) continue;
      live[u] = 1;
      const Index m = mate_l[u];
      if (m >= 0 && !reached[as_size(m)]) {
        reached[as_size(m)] = 1;
        queue.push_back(m);
      }
    }
  }
  return live;
}

// Augments from one free left vertex at a time by a depth-first search with lookahead (Duff's
// MC21 with the lookahead of Pothen and Fan): before descending from a left vertex, its
// entries are scanned for a free right vertex, through a pointer that only moves forward
// (a matched right vertex never becomes free again). When few vertices are left free (a
// greedy start on long-path graphs) this finds each augmenting path in one pass over it, where
// a Hopcroft-Karp phase needs two (layering BFS and DFS) over the whole graph.
//
// A search that fails marks every right vertex it reached dead for good (closed, as in
// live_left). Free left vertices whose search failed can never be matched and leave
// free_left; the others stay there, for the Hopcroft-Karp phases, if the searches stop at
// their work budget (entry scans; negative: 2 (V + E)).
void augment_one_by_one(Span<std::int32_t> indptr, Span<std::int32_t> indices,
                        std::int64_t budget,
                        std::vector<Index>& mate_l, std::vector<Index>& mate_r,
                        std::vector<Index>& free_left) {
  constexpr Index kDead = -2;
  const std::size_t n_left = mate_l.size();
  if (budget < 0) {
    budget = 2 * (static_cast<std::int64_t>(n_left + mate_r.size()) +
                  static_cast<std::int64_t>(indices.size));
  }
  std::vector<Index> seen(mate_r.size(), -1);  // search id that reached j, or kDead
  std::vector<Index> look(indptr.begin(), indptr.end() - 1);  // lookahead position
  std::vector<Index> it(n_left);                                // descent position
  std::vector<Index> stack;   // left vertices of the current path, root first
  std::vector<Index> via;     // via[i]: right vertex from stack[i] to stack[i + 1]
  std::vector<Index> reached; // right vertices the current search reached
  std::size_t kept = 0;
  std::size_t next = 0;
  for (; next < free_left.size() && budget > 0; ++next) {
    const Index root = free_left[next];
    const Index sid = static_cast<Index>(next);
    stack.assign(1, root);
    via.clear();
    reached.clear();
    it[as_size(root)] = indptr[as_size(root)];
    bool done = false;
    while (!stack.empty() && !done) {
      const Index u = stack.back();
      const Index end = indptr[as_size(u) + 1];
      Index& la = look[as_size(u)];
      budget -= end - la;
      for (; la < end; ++la) {
        const Index j = indices[as_size(la)];
        if (mate_r[as_size(j)] < 0) {
          // Augment: the last vertex takes j, every earlier one the vertex it descended by.
          mate_r[as_size(j)] = u;
          mate_l[as_size(u)] = j;
          for (std::size_t i = 0; i < via.size(); ++i) {
            mate_r[as_size(via[i])] = stack[i];
            mate_l[as_size(stack[i])] = via[i];
          }
          done = true;
          break;
        }
      }
      if (done) break;
      Index& k = it[as_size(u)];
      bool pushed = false;
      for (; k < end; ++k) {
        --budget;
        const Index j = indices[as_size(k)];
        const Index mark = seen[as_size(j)];
        if (mark == sid || mark == kDead) continue;
        seen[as_size(j)] = sid;
        reached.push_back(j);
        const Index w = mate_r[as_size(j)];  // matched: the lookahead passed j
        ++k;
        via.push_back(j);
        stack.push_back(w);
        it[as_size(w)] = indptr[as_size(w)];
        pushed = true;
        break;
      }
      if (!pushed) {
        stack.pop_back();
        if (!via.empty()) via.pop_back();
      }
      if (budget <= 0 && !done) break;
    }
    if (done) continue;
    if (stack.empty()) {
      for (const Index j : reached) seen[as_size(j)] = kDead;  // root stays free for good
      continue;
    }
    free_left[kept++] = root;  // out of budget mid-search: Hopcroft-Karp takes over
  }
  for (; next < free_left.size(); ++next) free_left[kept++] = free_left[next];
  free_left.resize(kept);
}

// The matching kernel; karp_sipser_start forces the Karp-Sipser start (otherwise it runs when
// first fit leaves a large gap) and search_budget is augment_one_by_one's, which runs after
// first fit only.
std::vector<Index> hopcroft_karp_impl(Span<std::int32_t> indptr, Span<std::int32_t> indices,
                                      std::int64_t n_right, bool karp_sipser_start,
                                      std::int64_t search_budget) {
  check_csr_shape(indptr, indices, n_right);
  const std::size_t n_left = indptr.size - 1;
  std::vector<Index> mate_l(n_left, -1);
  std::vector<Index> mate_r(static_cast<std::size_t>(n_right), -1);
  UnitRight side{indices, mate_l, mate_r};

  // Greedy first fit; where it leaves a large gap (random sparse graphs), the Karp-Sipser
  // start replaces it.
  std::size_t n_with_edges = 0;
  std::vector<Index> free_left = first_fit(indptr, indices, mate_r.size(), side, &n_with_edges);
  // A matching as large as min(left vertices with edges, right vertices) is maximum: nothing
  // to search (SPARe graphs with more types than alive groups end here).
  if (!karp_sipser_start &&
      n_with_edges - free_left.size() ==
          std::min<std::size_t>(n_with_edges, static_cast<std::size_t>(n_right))) {
    return mate_l;
  }
  // After a Karp-Sipser start on a random sparse graph few left vertices stay free, but most
  // are dead (live_left): their searches would each reach a large closed part of the graph,
  // and Hopcroft-Karp phases would scan it again in every phase. Dropping them leaves a
  // handful of augmenting paths, often long, and one closed part to prove so: Hopcroft-Karp
  // phases do both with one scan per entry and per phase, where a depth-first search scans
  // each entry twice (lookahead, descent) and may wander down a path of 10^5 vertices (mean
  // degree 4 at 1M vertices: 1.2-1.7x faster solves without single searches).
  const bool karp_sipser_ran =
      karp_sipser_start || worth_better_start(free_left.size(), n_with_edges,
                                              static_cast<std::size_t>(n_right), n_left);
  std::vector<std::uint8_t> live;  // after Karp-Sipser only; empty: not computed
  if (karp_sipser_ran) {
    const Transpose t = transpose(indptr, indices, mate_r.size());
    karp_sipser(indptr, indices, t, mate_l, mate_r);
    free_left = unmatched_left(indptr, mate_l);
    if (free_left.empty()) return mate_l;
    live = live_left(t, mate_l, mate_r);
    keep_if(free_left, [&](Index u) { return live[as_size(u)] != 0; });
  }
  if (free_left.empty()) return mate_l;
  if (!karp_sipser_ran) {
    augment_one_by_one(indptr, indices, search_budget, mate_l, mate_r, free_left);
    if (free_left.empty()) return mate_l;
  }

  // Hopcroft-Karp phases. Dead left vertices keep the label kDeadLeft, which no BFS step
  // overwrites and no DFS step descends to.
  constexpr std::int32_t kDeadLeft = -2;
  std::vector<std::int32_t> dist(n_left, kUnreached);
  for (std::size_t u = 0; u < live.size(); ++u) {
    if (!live[u]) dist[u] = kDeadLeft;
  }
  hopcroft_karp_phases(indptr, indices, side, mate_l, free_left, dist);
  return mate_l;
}
}  // namespace

std::vector<std::int32_t> hopcroft_karp(Span<std::int32_t> indptr, Span<std::int32_t> indices,
                                        std::int64_t n_right) {
  return hopcroft_karp_impl(indptr, indices, n_right, false, -1);
}

std::vector<std::int32_t> hopcroft_karp(Span<std::int32_t> indptr, Span<std::int32_t> indices,
                                        std::int64_t n_right, bool karp_sipser_start,
                                        std::int64_t search_budget) {
  return hopcroft_karp_impl(indptr, indices, n_right, karp_sipser_start, search_budget);
}

namespace {
bool n_right_all_ones(Span<std::int64_t> capacity) {
  if (capacity.empty()) return false;
  for (std::size_t j = 0; j < capacity.size; ++j) {
    if (capacity[j] != 1) return false;
  }
  return true;
}
}  // namespace

std::vector<std::int32_t> max_b_matching(Span<std::int32_t> indptr, Span<std::int32_t> indices,
                                         Span<std::int64_t> capacity) {
  return max_b_matching(indptr, indices, capacity, -1);
}

std::vector<std::int32_t> max_b_matching(Span<std::int32_t> indptr, Span<std::int32_t> indices,
                                         Span<std::int64_t> capacity,
                                         std::int64_t search_budget) {
  for (std::size_t j = 0; j < capacity.size; ++j) {
    // Build the name only for the culprit: a string per entry would dominate the solve.
    if (capacity[j] < 0) check_nonnegative(index_name("capacity", j), capacity[j]);
  }
  check_csr_shape(indptr, indices, static_cast<std::int64_t>(capacity.size));
  // Every capacity 1 is a plain matching: nothing to save by avoiding the expansion, and the
  // matching kernel's phases suit the long augmenting paths of near-perfect matchings better
  // than the search pass below (measured: 2x scipy there against about 1x). The forced-budget
  // overload (search_budget >= 0, used by the tests) keeps exercising the b-matching code.
  if (search_budget < 0 && n_right_all_ones(capacity)) {
    return hopcroft_karp(indptr, indices, static_cast<std::int64_t>(capacity.size));
  }
  const std::size_t n_left = indptr.size - 1;
  const std::size_t n_right = capacity.size;

  // A right vertex never holds more left vertices than n_left, nor more than it has entries,
  // so clamping its capacity to either changes nothing. Clamping to n_left is free; when the
  // slots would still outnumber E + n_left, count entries too so that storage stays O(V + E).
  const auto n_left_64 = static_cast<std::int64_t>(n_left);
  std::vector<Index> room(n_right);
  std::int64_t total = 0;
  for (std::size_t j = 0; j < n_right; ++j) {
    const std::int64_t c = std::min<std::int64_t>(capacity[j], n_left_64);
    room[j] = static_cast<Index>(c);
    total += c;
  }
  const auto slot_limit = std::min<std::int64_t>(static_cast<std::int64_t>(indices.size + n_left),
                                                 std::numeric_limits<Index>::max());
  std::vector<Index> degree;  // entries per right vertex, only where the clamp needs it
  if (total > slot_limit) {
    check_indices(indices, static_cast<std::int64_t>(n_right));  // read before first fit
    degree.assign(n_right, 0);
    for (std::size_t k = 0; k < indices.size; ++k) ++degree[as_size(indices[k])];
    for (std::size_t j = 0; j < n_right; ++j) room[j] = std::min(room[j], degree[j]);
  }
  std::vector<Index> mate(n_left, -1);

  // First fit on the remaining room alone, then the length-3 paths swap_in finds: the room
  // counts (one byte each where every clamped capacity fits, as SPARe's depths do) and the
  // last takers stay in the cache where the slot records would not, and when these match
  // every left vertex (the common SPARe case) the slot layout is never built.
  std::int64_t n_room = 0;  // the slots, as the slot layout below will count them
  Index most_room = 0;
  for (const Index c : room) {
    n_room += c;
    most_room = std::max(most_room, c);
  }
  std::size_t n_with_edges = 0;
  std::vector<Index> free_left;
  auto greedy = [&](auto& counts) {
    std::vector<Index> last(n_right, -1);
    RoomRight<typename std::decay_t<decltype(counts)>::value_type> start{counts, mate, last};
    free_left = first_fit<true>(indptr, indices, n_right, start, &n_with_edges);
    // Where first fit left too much for short repairs, the pressure greedy starts over below.
    // A forced budget (the tests) skips the repairs, so that the searches and phases below
    // see the free vertices first fit leaves.
    if (!free_left.empty() && search_budget < 0 &&
        !worth_better_start(free_left.size(), n_with_edges, static_cast<std::size_t>(n_room),
                            n_left)) {
      swap_in(indptr, indices, start, free_left);
    }
  };
  if (most_room <= std::numeric_limits<std::uint8_t>::max()) {
    std::vector<std::uint8_t> small(room.begin(), room.end());
    greedy(small);
  } else {
    greedy(room);
  }
  if (free_left.empty()) return mate;

  // Slot layout: right vertex j's range holds the left vertices first fit gave it, in
  // increasing order, then its free slots: a counting sort of mate by right vertex into
  // ranges of the clamped capacities, room[j] serving as j's write cursor.
  auto clamped = [&](std::size_t j) {
    const auto c = static_cast<Index>(std::min<std::int64_t>(capacity[j], n_left_64));
    return degree.empty() ? c : std::min(c, degree[j]);
  };
  Index n_slots = 0;
  for (std::size_t j = 0; j < n_right; ++j) {
    const Index c = clamped(j);
    room[j] = n_slots;
    n_slots += c;
  }
  std::vector<Index> slots(as_size(n_slots));
  for (std::size_t u = 0; u < n_left; ++u) {
    if (mate[u] >= 0) slots[as_size(room[as_size(mate[u])]++)] = static_cast<Index>(u);
  }
  std::vector<Right> right(n_right);
  for (Index j = 0, start = 0; as_size(j) < n_right; ++j) {
    const Index c = clamped(as_size(j));
    right[as_size(j)] = Right{start, room[as_size(j)], start + c, kUnreached};
    start += c;
  }
  std::vector<Index>().swap(room);
  SlotRight side{indices, right, slots, mate, {}, {}};
  if (worth_better_start(free_left.size(), n_with_edges, as_size(n_slots), n_left)) {
    // First fit left too much for the searches: start over from a better initial b-matching.
    pressure_greedy(indptr, indices, right, slots, mate);
    free_left = unmatched_left(indptr, mate);
  }
  if (free_left.empty()) return mate;

  // Augmenting searches, one free left vertex at a time: a BFS over alternating paths that
  // stops at the first left vertex it reaches with an entry at a right vertex with room
  // (checked on discovery, so a path is found without expanding its whole last layer).
  // A search that fails marks everything it reached dead for good: that set has no free
  // slot and is closed under alternating steps, so no later augmenting path enters it and
  // later searches skip it. Hence failed searches cost O(V + E) in all, and after one pass a
  // free vertex is either matched or has no augmenting path: the b-matching is maximum.
  // A successful search may cost O(V + E) itself, so the pass runs on a work budget (entries
  // and slots scanned); past it, capacity-aware Hopcroft-Karp phases finish the job, which
  // keeps the O((V + E) sqrt(n_left)) bound. On large random graphs the pass finishes well
  // inside the budget, at a fraction of the cost of the phases.
  //
  // The searches keep no per-vertex arrays: a matched left vertex sits in exactly one slot,
  // of the right vertex it is assigned to, and a search scans each right vertex at most once
  // (its mark), so it meets each left vertex at most once; a failed search's right vertices
  // are dead, which keeps their left vertices out of every later search. The queue records
  // how each vertex was reached, so a search costs memory in proportion to what it reached,
  // not to n_left (the few free vertices of a SPARe graph cost a few searches, nothing more).
  constexpr Index kDead = -2;
  struct Reached {
    Index left;    // a left vertex the search reached
    Index slot;    // the slot it holds (the root: -1)
    Index parent;  // queue position of the left vertex whose step reached it (the root: -1)
  };
  std::vector<Reached> queue;
  std::vector<Index> reached_right;
  const std::int64_t default_budget =
      4 * (static_cast<std::int64_t>(indices.size) + static_cast<std::int64_t>(n_left) +
           static_cast<std::int64_t>(n_slots));
  const std::int64_t budget = search_budget >= 0 ? search_budget : default_budget;
  std::int64_t work = 0;
  std::size_t next_root = 0;
  for (Index search = 0; next_root < free_left.size() && work <= budget; ++next_root) {
    const Index root = free_left[next_root];
    queue.clear();
    reached_right.clear();
    Index end = -1;  // queue position of the path's last left vertex
    Index end_right = free_entry(indptr, indices, right, root, -1);
    if (end_right >= 0) end = 0;
    queue.push_back(Reached{root, -1, -1});
    for (std::size_t qi = 0; qi < queue.size() && end < 0; ++qi) {
      const Index w = queue[qi].left;
      const Index own = mate[as_size(w)];
      work += indptr[as_size(w) + 1] - indptr[as_size(w)];
      for (Index k = indptr[as_size(w)]; k < indptr[as_size(w) + 1] && end < 0; ++k) {
        const Index j = indices[as_size(k)];
        Right& r = right[as_size(j)];
        if (j == own || r.mark == search || r.mark == kDead) continue;
        r.mark = search;
        reached_right.push_back(j);
        work += r.fill - r.start;
        for (Index p = r.start; p < r.fill; ++p) {
          const Index x = slots[as_size(p)];
          queue.push_back(Reached{x, p, static_cast<Index>(qi)});
          work += indptr[as_size(x) + 1] - indptr[as_size(x)];
          const Index f = free_entry(indptr, indices, right, x, mate[as_size(x)]);
          if (f >= 0) {
            end = static_cast<Index>(queue.size() - 1);
            end_right = f;
            break;
          }
        }
      }
    }
    if (end < 0) {
      for (const Index j : reached_right) right[as_size(j)].mark = kDead;
      continue;
    }
    // The last vertex takes a free slot at end_right; going back, each vertex on the path
    // takes the slot (and right vertex) that its successor left.
    slots[as_size(right[as_size(end_right)].fill++)] = queue[as_size(end)].left;
    Index new_right = end_right;
    for (Index q = end;;) {
      const Reached& v = queue[as_size(q)];
      const Index old_right = mate[as_size(v.left)];
      mate[as_size(v.left)] = new_right;
      if (v.parent < 0) break;
      slots[as_size(v.slot)] = queue[as_size(v.parent)].left;
      new_right = old_right;
      q = v.parent;
    }
    ++search;
  }
  if (next_root == free_left.size()) return mate;

  // Over budget: phases from the free vertices not yet searched.
  free_left.erase(free_left.begin(), free_left.begin() + static_cast<std::ptrdiff_t>(next_root));
  std::vector<std::int32_t> level(n_left, kUnreached);
  hopcroft_karp_phases(indptr, indices, side, mate, free_left, level);
  return mate;
}

}  // namespace spare_fast
