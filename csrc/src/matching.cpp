// Hopcroft-Karp matching and its capacity-aware generalisation to b-matching.
//
// Both kernels share one shape: a greedy first-fit pass, then phases that each run a BFS from
// the free left vertices to layer the graph by shortest augmenting-path length, and an
// iterative DFS (explicit stack, current-arc pointers) that augments a maximal set of
// left-disjoint shortest paths. The DFS stack holds at most one entry per BFS layer, so its
// size is bounded by the number of left vertices whatever the degrees or duplicate entries.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "spare_fast/graph.hpp"
#include "spare_fast/validate.hpp"

namespace spare_fast {
namespace {

constexpr std::int32_t kUnreached = std::numeric_limits<std::int32_t>::max();

using Index = std::int32_t;

void check_csr(Span<std::int32_t> indptr, Span<std::int32_t> indices, std::int64_t n_right) {
  check_nonnegative("n_right", n_right);
  check_fits_int32("n_right", n_right);
  if (indices.size > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    throw std::invalid_argument("indices has length " + std::to_string(indices.size) +
                                ", more than int32 entries");
  }
  check_indptr(indptr, indices.size);
  check_indices(indices, n_right);
}

std::size_t as_size(std::int32_t v) { return static_cast<std::size_t>(v); }

// Karp-Sipser-style initial b-matching, for graphs on which first fit leaves many left
// vertices free (random sparse graphs; SPARe graphs never need it). A free left vertex with a
// single usable right vertex takes it first: some maximum b-matching does the same, so the
// rule never costs a later augmentation. Otherwise left vertices go in increasing degree
// order to the neighbour with the most room left. "Usable" counts CSR entries whose right
// vertex still has room; a right vertex that fills up lowers the count of its free
// neighbours through the transposed adjacency. O(V + E).
void karp_sipser_init(Span<std::int32_t> indptr, Span<std::int32_t> indices,
                      const std::vector<Index>& cap, const std::vector<Index>& slot_start,
                      std::vector<Index>& load, std::vector<Index>& slots,
                      std::vector<Index>& mate) {
  const std::size_t n_left = mate.size();
  const std::size_t n_right = cap.size();
  // The loop below is bound by random memory accesses, so each side keeps one small hot
  // array: room[j] = capacity left at j; usable[u] = usable entries of free u, one byte so
  // that it stays in cache (0: none or already assigned; kMany: too many to track, such a
  // vertex is never forced, which only costs the heuristic).
  constexpr std::uint8_t kMany = 255;
  std::vector<Index> room(cap);
  std::vector<Index> rstart(n_right + 1, 0);
  std::vector<std::uint8_t> usable(n_left, 0);
  for (std::size_t u = 0; u < n_left; ++u) {
    Index count = 0;
    for (Index k = indptr[u]; k < indptr[u + 1]; ++k) {
      const std::size_t j = as_size(indices[as_size(k)]);
      if (room[j] > 0) {
        ++rstart[j + 1];
        ++count;
      }
    }
    usable[u] = static_cast<std::uint8_t>(std::min<Index>(count, kMany));
  }
  for (std::size_t j = 0; j < n_right; ++j) rstart[j + 1] += rstart[j];
  std::vector<Index> radj(as_size(rstart[n_right]));
  {
    std::vector<Index> fill(rstart.begin(), rstart.end() - 1);
    for (std::size_t u = 0; u < n_left; ++u) {
      for (Index k = indptr[u]; k < indptr[u + 1]; ++k) {
        const std::size_t j = as_size(indices[as_size(k)]);
        if (room[j] > 0) radj[as_size(fill[j]++)] = static_cast<Index>(u);
      }
    }
  }
  std::vector<Index> forced;  // free left vertices with one usable entry
  for (std::size_t u = 0; u < n_left; ++u) {
    if (usable[u] == 1) forced.push_back(static_cast<Index>(u));
  }
  std::fill(mate.begin(), mate.end(), -1);
  auto assign = [&](Index u, Index j) {
    const std::size_t sj = as_size(j);
    slots[as_size(slot_start[sj] + cap[sj] - room[sj])] = u;
    mate[as_size(u)] = j;
    usable[as_size(u)] = 0;
    if (--room[sj] > 0) return;
    for (Index r = rstart[sj]; r < rstart[sj + 1]; ++r) {
      std::uint8_t& d = usable[as_size(radj[as_size(r)])];
      if (d > 0 && d < kMany && --d == 1) forced.push_back(radj[as_size(r)]);
    }
  };
  // Left vertices by increasing usable degree (counting sort: stable, deterministic); forced
  // ones jump the queue.
  std::vector<Index> order(n_left);
  {
    std::vector<Index> bucket(std::size_t{kMany} + 2, 0);
    for (std::size_t u = 0; u < n_left; ++u) ++bucket[as_size(usable[u]) + 1];
    for (std::size_t d = 1; d < bucket.size(); ++d) bucket[d] += bucket[d - 1];
    for (std::size_t u = 0; u < n_left; ++u) {
      order[as_size(bucket[as_size(usable[u])]++)] = static_cast<Index>(u);
    }
  }
  for (std::size_t i = 0; i <= n_left; ++i) {
    while (!forced.empty()) {
      const Index u = forced.back();
      forced.pop_back();
      if (usable[as_size(u)] == 0) continue;
      for (Index k = indptr[as_size(u)]; k < indptr[as_size(u) + 1]; ++k) {
        const Index j = indices[as_size(k)];
        if (room[as_size(j)] > 0) {
          assign(u, j);
          break;
        }
      }
    }
    if (i == n_left) break;
    const Index next = order[i];
    if (usable[as_size(next)] == 0) continue;
    Index best = -1;
    Index most = 0;
    for (Index k = indptr[as_size(next)]; k < indptr[as_size(next) + 1]; ++k) {
      const Index j = indices[as_size(k)];
      if (room[as_size(j)] > most) {
        most = room[as_size(j)];
        best = j;
      }
    }
    if (best >= 0) assign(next, best);
  }
  for (std::size_t j = 0; j < n_right; ++j) load[j] = cap[j] - room[j];
}

}  // namespace

std::vector<std::int32_t> hopcroft_karp(Span<std::int32_t> indptr, Span<std::int32_t> indices,
                                        std::int64_t n_right) {
  check_csr(indptr, indices, n_right);
  const std::size_t n_left = indptr.size - 1;
  std::vector<Index> mate_l(n_left, -1);
  std::vector<Index> mate_r(static_cast<std::size_t>(n_right), -1);

  // Greedy first fit: on SPARe graphs it matches almost everything in one O(E) pass.
  for (std::size_t u = 0; u < n_left; ++u) {
    for (Index k = indptr[u]; k < indptr[u + 1]; ++k) {
      const Index j = indices[as_size(k)];
      if (mate_r[as_size(j)] < 0) {
        mate_r[as_size(j)] = static_cast<Index>(u);
        mate_l[u] = j;
        break;
      }
    }
  }

  std::vector<Index> free_left;
  for (std::size_t u = 0; u < n_left; ++u) {
    if (mate_l[u] < 0 && indptr[u + 1] > indptr[u]) free_left.push_back(static_cast<Index>(u));
  }
  std::vector<std::int32_t> dist(n_left, kUnreached);
  std::vector<Index> queue;
  queue.reserve(n_left);
  std::vector<Index> it(n_left);
  std::vector<Index> stack;
  stack.reserve(n_left);

  while (!free_left.empty()) {
    // BFS layering from the free left vertices; `found` is the shortest augmenting length.
    std::fill(dist.begin(), dist.end(), kUnreached);
    queue.clear();
    for (Index u : free_left) {
      dist[as_size(u)] = 0;
      queue.push_back(u);
    }
    std::int32_t found = kUnreached;
    for (std::size_t qi = 0; qi < queue.size(); ++qi) {
      const Index u = queue[qi];
      const std::int32_t du = dist[as_size(u)];
      if (du >= found) break;
      for (Index k = indptr[as_size(u)]; k < indptr[as_size(u) + 1]; ++k) {
        const Index w = mate_r[as_size(indices[as_size(k)])];
        if (w < 0) {
          found = du;
        } else if (dist[as_size(w)] == kUnreached) {
          dist[as_size(w)] = du + 1;
          queue.push_back(w);
        }
      }
    }
    if (found == kUnreached) break;

    for (Index u : queue) it[as_size(u)] = indptr[as_size(u)];
    bool any = false;
    for (Index root : free_left) {
      if (dist[as_size(root)] != 0) continue;
      stack.clear();
      stack.push_back(root);
      while (!stack.empty()) {
        const Index u = stack.back();
        const std::int32_t du = dist[as_size(u)];
        const Index end = indptr[as_size(u) + 1];
        bool pushed = false;
        bool augmented = false;
        Index& k = it[as_size(u)];
        for (; k < end; ++k) {
          const Index w = mate_r[as_size(indices[as_size(k)])];
          if (w < 0) {
            if (du != found) continue;
            // Augment along the stack: each u_i takes the right vertex its arc points at.
            for (Index v : stack) {
              const Index j = indices[as_size(it[as_size(v)])];
              mate_r[as_size(j)] = v;
              mate_l[as_size(v)] = j;
              dist[as_size(v)] = kUnreached;  // left-disjoint paths within a phase
            }
            augmented = true;
            break;
          }
          if (du < found && dist[as_size(w)] == du + 1) {
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
          dist[as_size(u)] = kUnreached;  // dead end for the rest of the phase
          stack.pop_back();
          if (!stack.empty()) ++it[as_size(stack.back())];
        }
      }
    }
    if (!any) break;
    std::size_t kept = 0;
    for (Index u : free_left) {
      if (mate_l[as_size(u)] < 0) free_left[kept++] = u;
    }
    free_left.resize(kept);
  }
  return mate_l;
}

std::vector<std::int32_t> max_b_matching(Span<std::int32_t> indptr, Span<std::int32_t> indices,
                                         Span<std::int64_t> capacity) {
  for (std::size_t j = 0; j < capacity.size; ++j) {
    // Build the name only for the culprit: a string per entry would dominate the solve.
    if (capacity[j] < 0) check_nonnegative(index_name("capacity", j), capacity[j]);
  }
  check_csr(indptr, indices, static_cast<std::int64_t>(capacity.size));
  const std::size_t n_left = indptr.size - 1;
  const std::size_t n_right = capacity.size;

  // A right vertex never holds more left vertices than n_left, nor more than it has entries,
  // so clamping its capacity to either changes nothing. Clamping to n_left is free; when the
  // slots would still outnumber E + n_left, count entries too so that storage stays O(V + E).
  std::vector<Index> cap(n_right, 0);
  std::int64_t total = 0;
  for (std::size_t j = 0; j < n_right; ++j) {
    const std::int64_t c = std::min<std::int64_t>(capacity[j], static_cast<std::int64_t>(n_left));
    cap[j] = static_cast<Index>(c);
    total += c;
  }
  const auto slot_limit = std::min<std::int64_t>(static_cast<std::int64_t>(indices.size + n_left),
                                                 std::numeric_limits<Index>::max());
  if (total > slot_limit) {
    std::vector<Index> degree(n_right, 0);
    for (std::size_t k = 0; k < indices.size; ++k) ++degree[as_size(indices[k])];
    for (std::size_t j = 0; j < n_right; ++j) cap[j] = std::min(cap[j], degree[j]);
  }
  std::vector<Index> slot_start(n_right + 1, 0);
  for (std::size_t j = 0; j < n_right; ++j) slot_start[j + 1] = slot_start[j] + cap[j];
  // slots[slot_start[j] .. slot_start[j] + load[j]) lists the left vertices assigned to j.
  std::vector<Index> slots(as_size(slot_start[n_right]));
  std::vector<Index> load(n_right, 0);
  std::vector<Index> mate(n_left, -1);

  for (std::size_t u = 0; u < n_left; ++u) {
    for (Index k = indptr[u]; k < indptr[u + 1]; ++k) {
      const std::size_t j = as_size(indices[as_size(k)]);
      if (load[j] < cap[j]) {
        slots[as_size(slot_start[j] + load[j]++)] = static_cast<Index>(u);
        mate[u] = static_cast<Index>(j);
        break;
      }
    }
  }

  std::vector<Index> free_left;
  for (std::size_t u = 0; u < n_left; ++u) {
    if (mate[u] < 0 && indptr[u + 1] > indptr[u]) free_left.push_back(static_cast<Index>(u));
  }
  if (free_left.size() > 64 && free_left.size() > n_left / 32) {
    // First fit left too much for the phases: start over from a better initial b-matching.
    karp_sipser_init(indptr, indices, cap, slot_start, load, slots, mate);
    free_left.clear();
    for (std::size_t u = 0; u < n_left; ++u) {
      if (mate[u] < 0 && indptr[u + 1] > indptr[u]) free_left.push_back(static_cast<Index>(u));
    }
  }
  std::vector<std::int32_t> level(n_left, kUnreached);
  // rlevel[j]: the left layer that scanned full right vertex j in this phase (kUnreached if
  // none); only that layer may pass through j, which keeps paths shortest. cursor[j] walks j's
  // slots in the DFS; a right vertex whose slots are exhausted is dead for the phase.
  std::vector<std::int32_t> rlevel(n_right, kUnreached);
  std::vector<Index> cursor(n_right, 0);
  std::vector<Index> queue;
  queue.reserve(n_left);
  std::vector<Index> scanned;
  std::vector<Index> it(n_left);
  std::vector<Index> stack;
  stack.reserve(n_left);

  while (!free_left.empty()) {
    std::fill(level.begin(), level.end(), kUnreached);
    for (Index j : scanned) rlevel[as_size(j)] = kUnreached;
    scanned.clear();
    queue.clear();
    for (Index u : free_left) {
      level[as_size(u)] = 0;
      queue.push_back(u);
    }
    std::int32_t found = kUnreached;
    for (std::size_t qi = 0; qi < queue.size(); ++qi) {
      const Index u = queue[qi];
      const std::int32_t lu = level[as_size(u)];
      if (lu >= found) break;
      for (Index k = indptr[as_size(u)]; k < indptr[as_size(u) + 1]; ++k) {
        const Index j = indices[as_size(k)];
        if (j == mate[as_size(u)]) continue;
        if (load[as_size(j)] < cap[as_size(j)]) {
          found = lu;
          continue;
        }
        if (rlevel[as_size(j)] != kUnreached) continue;
        rlevel[as_size(j)] = lu;
        cursor[as_size(j)] = slot_start[as_size(j)];
        scanned.push_back(j);
        for (Index s = slot_start[as_size(j)]; s < slot_start[as_size(j)] + load[as_size(j)];
             ++s) {
          const Index w = slots[as_size(s)];
          if (level[as_size(w)] == kUnreached) {
            level[as_size(w)] = lu + 1;
            queue.push_back(w);
          }
        }
      }
    }
    if (found == kUnreached) break;

    for (Index u : queue) it[as_size(u)] = indptr[as_size(u)];
    bool any = false;
    for (Index root : free_left) {
      if (level[as_size(root)] != 0) continue;
      stack.clear();
      stack.push_back(root);
      while (!stack.empty()) {
        const Index u = stack.back();
        const std::int32_t lu = level[as_size(u)];
        const Index end = indptr[as_size(u) + 1];
        bool pushed = false;
        bool augmented = false;
        Index& k = it[as_size(u)];
        for (; k < end; ++k) {
          const Index j = indices[as_size(k)];
          if (j == mate[as_size(u)]) continue;
          if (load[as_size(j)] < cap[as_size(j)]) {
            if (lu != found) continue;
            // u takes a free slot of j; every earlier u_i takes over the slot of u_{i+1} at
            // the right vertex its arc points at (cursor of that vertex), so no slot moves.
            const std::size_t top = stack.size() - 1;
            Index slot = slot_start[as_size(j)] + load[as_size(j)]++;
            Index right = j;
            for (std::size_t i = top + 1; i-- > 0;) {
              const Index v = stack[i];
              slots[as_size(slot)] = v;
              mate[as_size(v)] = right;
              level[as_size(v)] = kUnreached;
              if (i > 0) {
                right = indices[as_size(it[as_size(stack[i - 1])])];
                slot = cursor[as_size(right)];
              }
            }
            augmented = true;
            break;
          }
          if (lu >= found || rlevel[as_size(j)] != lu) continue;
          Index& c = cursor[as_size(j)];
          const Index slot_end = slot_start[as_size(j)] + load[as_size(j)];
          for (; c < slot_end; ++c) {
            if (level[as_size(slots[as_size(c)])] == lu + 1) break;
          }
          if (c < slot_end) {
            stack.push_back(slots[as_size(c)]);
            pushed = true;
            break;
          }
        }
        if (augmented) {
          any = true;
          break;
        }
        if (!pushed) {
          level[as_size(u)] = kUnreached;
          stack.pop_back();
          // The parent's right vertex: its current slot led nowhere, try its next slot.
          if (!stack.empty()) {
            ++cursor[as_size(indices[as_size(it[as_size(stack.back())])])];
          }
        }
      }
    }
    if (!any) break;
    std::size_t kept = 0;
    for (Index u : free_left) {
      if (mate[as_size(u)] < 0) free_left[kept++] = u;
    }
    free_left.resize(kept);
  }
  return mate;
}

}  // namespace spare_fast
