// Graph kernels of the SPARe decision core: bipartite matching, b-matching, min-cost flow.
//
// Problems
// --------
// * hopcroft_karp: maximum cardinality matching of a bipartite graph given as a CSR adjacency
//   (rows are the left vertices, column ids the right vertices).
// * max_b_matching: the same graph, but right vertex j may take up to capacity[j] left
//   vertices (a "b-matching" with b = 1 on the left). This is SPARe's phase 1: types (left)
//   to alive groups (right) with capacity S, the stack depth.
// * min_cost_flow: a minimum-cost flow on a directed graph with arc capacities, nonnegative
//   arc costs and node supplies (positive: source, negative: sink), in the spirit of OR-Tools'
//   SimpleMinCostFlow on the same arrays. This is SPARe's phase 2 (fewest moves at depth S*).
//
// Conventions and invariants
// --------------------------
// * Ids are int32; costs, capacities, supplies and flows are int64.
// * Every entry point validates its whole input before using it and throws
//   std::invalid_argument (bad value, shape or length) or std::out_of_range (id out of range)
//   with a message naming the position and the value, e.g. "indices[17] = 42 is not in
//   [0, 40)". The matchings check the CSR entries inside their first pass over them, a block
//   of rows at a time before the block is read (one pass over the largest input, not two);
//   a rejected call has changed nothing. Duplicate CSR entries and parallel arcs are valid input: no kernel assumes a
//   simple graph and no work array is sized by a vertex degree (scipy gh-26160 is the warning).
// * Results: a matching is an int32 array over the left vertices, -1 for unmatched. Expected
//   outcomes of min_cost_flow (infeasible, unbalanced, overflow) are statuses, not exceptions.
// * The kernels are deterministic (same input, same output) and reentrant: they keep no
//   global state, so callers may run them concurrently on different inputs.
//
// Complexity
// ----------
// * hopcroft_karp: O(E sqrt(V)) time, O(V + E) extra memory besides the output. Greedy first
//   fit, or Karp-Sipser (degree-1 rule on both sides over the transposed adjacency) when first
//   fit leaves many left vertices free; after Karp-Sipser, one BFS backwards from the free
//   right vertices drops the left vertices no augmenting path can reach, and Hopcroft-Karp
//   phases skip them. After first fit, single searches (depth-first with lookahead; a failed
//   one marks what it reached dead for good) on a work budget of O(V + E), and Hopcroft-Karp
//   phases for what is left past it.
// * max_b_matching: O((V + E) sqrt(n_left)) time, O(V + E) memory: right vertex j is never
//   expanded into capacity[j] copies. Greedy first fit (each row from a start that moves one
//   entry further per row, over a compact array of remaining room), or a pressure-greedy start (left
//   vertices by increasing degree to the neighbour with the most room per pending left
//   vertex) when first fit leaves many left vertices free. Then one augmenting search per
//   free left vertex (BFS over alternating paths, stopping at the first vertex with an entry
//   at a right vertex with room); a failed search marks what it reached dead for good (it is
//   closed and has no room, so no later augmenting path enters it). After that pass the
//   b-matching is maximum. The pass runs on a work budget of O(V + E) scanned entries and
//   slots; past it, capacity-aware Hopcroft-Karp phases (shortest augmenting paths through
//   full right vertices, disjoint on the left within a phase, each O(V + E), mirroring the
//   phases on the slot-expanded graph) finish, which keeps the bound.
// * min_cost_flow: primal-dual successive shortest paths. Each phase runs one Dijkstra
//   (reduced costs with Johnson potentials, O(E log V)) and then a Dinic maximum flow on the
//   admissible subgraph (residual arcs of zero reduced cost), so every shortest path of the
//   current length is augmented in the same phase. The number of phases is at most the number
//   of distinct shortest-path lengths (<= 2 + n_nodes * max cost), a handful for 0/1 costs.
//   The first phase needs no Dijkstra (zero potentials are feasible for nonnegative costs): it
//   is the greedy cost-0 warm start.
//
// References
// ----------
// * J. E. Hopcroft and R. M. Karp, "An n^{5/2} algorithm for maximum matchings in bipartite
//   graphs", SIAM J. Comput. 2(4), 225-231, 1973. doi:10.1137/0202019
// * R. M. Karp and M. Sipser, "Maximum matchings in sparse random graphs", Proc. 22nd FOCS,
//   364-375, 1981. doi:10.1109/SFCS.1981.21 (the degree-1 start)
// * I. S. Duff, K. Kaya and B. Ucar, "Design, implementation, and analysis of maximum
//   transversal algorithms", ACM Trans. Math. Softw. 38(2), 13:1-13:31, 2011.
//   doi:10.1145/2049673.2049677 (single-source augmenting searches, lookahead)
// * R. K. Ahuja, T. L. Magnanti and J. B. Orlin, "Network Flows", Prentice Hall, 1993:
//   ch. 9.7 (primal-dual algorithm), ch. 7.4 (Dinic's blocking flows).
// * J. Edmonds and R. M. Karp, "Theoretical improvements in algorithmic efficiency for network
//   flow problems", J. ACM 19(2), 248-264, 1972. doi:10.1145/321694.321699 (potentials)
// * E. A. Dinic, "Algorithm for solution of a problem of maximum flow in a network with power
//   estimation", Soviet Math. Doklady 11, 1277-1280, 1970.
#pragma once

#include <cstdint>
#include <vector>

#include "spare_fast/validate.hpp"

namespace spare_fast {

// Maximum cardinality bipartite matching.
//
// indptr (length n_left + 1) and indices (length indptr[n_left]) are the CSR adjacency of the
// left vertices; every index must lie in [0, n_right). Returns, for every left vertex, its
// matched right vertex or -1. Greedy first fit, then single augmenting searches on a work
// budget; or a Karp-Sipser start that drops the free vertices no augmenting path reaches.
// Then Hopcroft-Karp phases.
std::vector<Index> hopcroft_karp(Span<Index> indptr, Span<Index> indices,
                                        std::int64_t n_right);

// The same, with the Karp-Sipser start forced (karp_sipser_start; otherwise it runs when first
// fit leaves a large gap) and the work budget of the single searches after first fit given
// (entries scanned; negative: the default 2 (V + E)). For tests, which drive every stage
// through it on small graphs; callers use the overload above.
std::vector<Index> hopcroft_karp(Span<Index> indptr, Span<Index> indices,
                                        std::int64_t n_right, bool karp_sipser_start,
                                        std::int64_t search_budget);

// Maximum bipartite b-matching: right vertex j takes at most capacity[j] >= 0 left vertices,
// a left vertex takes at most one right vertex. n_right = capacity.size. Returns, for every
// left vertex, its right vertex or -1; the number of assigned left vertices is maximum.
std::vector<Index> max_b_matching(Span<Index> indptr, Span<Index> indices,
                                         Span<Cost> capacity);

// The same, with the work budget of the augmenting-search pass given (entries and slots
// scanned; negative: the default 4 (E + n_left + n_slots)); past it Hopcroft-Karp phases
// finish. For tests, which drive both stages through it; callers use the overload above.
std::vector<Index> max_b_matching(Span<Index> indptr, Span<Index> indices,
                                         Span<Cost> capacity, std::int64_t search_budget);

// Outcome of min_cost_flow (values shared with the Python enum spare_fast.graph).
enum class MinCostFlowStatus : std::int32_t {
  kOptimal = 0,     // every supply routed; the flow has minimum cost
  kInfeasible = 1,  // supplies sum to zero but no flow meets them; the flow returned is a
                    // minimum-cost flow of maximum value
  kUnbalanced = 2,  // the supplies do not sum to zero; nothing solved, flow all zero
  kOverflow = 3,    // costs, capacities or supplies so large that a cost, a potential or a
                    // total could overflow int64; nothing solved, flow all zero
};

// Result of min_cost_flow.
struct MinCostFlowResult {
  MinCostFlowStatus status = MinCostFlowStatus::kOptimal;
  std::int64_t total_cost = 0;     // sum over arcs of flow * cost
  std::int64_t flow_value = 0;     // supply routed from sources to sinks
  std::vector<std::int64_t> flow;  // flow per arc, in input order; 0 <= flow <= capacity
};

// Minimum-cost flow. Arc a goes from tail[a] to head[a] in [0, n_nodes), with capacity[a] >= 0
// and cost[a] >= 0 (a negative cost throws, naming the arc); supply has length n_nodes.
// Self-loops and parallel arcs are allowed. Overflow is checked up front (status kOverflow):
// the sum of positive supplies, n_nodes * max cost (potentials) and
// sum_a min(capacity[a], total supply) * cost[a] (the total cost) must fit int64 with margin.
MinCostFlowResult min_cost_flow(std::int64_t n_nodes, Span<Index> tail,
                                Span<Index> head, Span<Cost> capacity,
                                Span<Cost> cost, Span<Cost> supply);

}  // namespace spare_fast
