// Minimum-cost flow by the primal network simplex method, and the method dispatcher.
//
// Problem
// -------
// The problem of spare_fast::min_cost_flow (graph.hpp): arcs tail[a] -> head[a] with
// capacity[a] >= 0 and cost[a] >= 0, node supplies that sum to zero; find a flow meeting every
// supply at minimum total cost. Same result struct, statuses and validation.
//
// Method
// ------
// A spanning-tree basis over the n nodes plus an artificial root. Every supply and demand node
// starts as a child of the root through an artificial arc (capacity unbounded, cost M =
// (n + 1) max cost + 1) that carries its supply; every transshipment node (supply 0) that
// reaches a demand node over arcs between transshipment nodes hangs on its shortest such path
// (a crash basis: one Dijkstra from all demand nodes, zero flow on those arcs), the others
// from the root. Every other real arc starts at its lower bound. A pivot picks an entering
// arc that violates its optimality condition (block search: the arcs are scanned cyclically in
// blocks of about 1.5 sqrt(m), sqrt(m) from 2^17 nodes on, and the most violating arc of the
// first block that has one enters; the pricing reads a copy of each real arc turned so that
// its reduced cost, read forwards, is negative exactly when it violates: reversed, cost
// negated, at its upper bound), pushes flow around the cycle it closes with the tree, lets the
// blocking arc that comes last in the cycle's direction from the apex leave (this keeps the
// tree strongly feasible, which rules out cycling), and updates the tree and the node
// potentials of the smaller side of the cut (only differences of potentials matter). The tree
// is stored as parent / parent arc / direction, a preorder thread with its inverse, subtree
// sizes and the last node of every subtree in thread order; a tree arc's flow and capacity sit
// in the record of the node below it. The walk to the apex follows separate 8-byte parent /
// subtree-size records, so that its chain of dependent reads stays in cache on larger
// networks.
//
// Memory order: the walks that dominate a pivot follow the thread, a chain of dependent reads.
// The nodes are numbered in the preorder of the starting tree, and renumbered in thread order
// every (n + m) / 64 pivots, so that a subtree stays a run of nearby ids; the potential
// updates walk such runs by incrementing the id (a well-predicted check against the thread
// instead of a dependent load per node). The arcs are interleaved with a stride of the mean
// degree so that a pricing block samples the whole network.
//
// Invariants
// ----------
// * Tree arcs have zero reduced cost cost[a] + pi[tail] - pi[head]. pi[root] drifts from 0
//   when the other side of a cut moves; once it leaves [-M, M] all potentials shift back by it.
// * Every flow stays within [0, capacity] (capacities are clamped to the total supply, which a
//   minimum-cost flow with nonnegative costs never needs to exceed on one arc).
// * Strong feasibility: from every node a positive amount of flow can be sent to the root along
//   the tree path.
// * If the supplies can be met, the optimum of the big-M problem carries no artificial flow
//   (2 M exceeds the cost of any simple path); otherwise the problem is INFEASIBLE and the
//   primal-dual method computes the minimum-cost maximum flow that this status promises.
//
// Complexity
// ----------
// Exponential in the worst case like every primal simplex, in practice close to O(m sqrt(m))
// per hundred pivots on random networks; O(n + m) memory. A pivot costs O(block) to price and
// O(cycle + moved subtree) to update.
//
// Overflow
// --------
// On top of the checks of min_cost_flow, potentials stay below 8 (n + 2) (max cost + 1) and
// the flow on an artificial arc below total supply + sum_a min(capacity[a], total supply);
// both must fit int64, else the status is kOverflow (method kAuto falls back to the primal-dual
// method, which needs less headroom).
//
// References
// ----------
// * A. V. Goldberg, "An efficient implementation of a scaling minimum-cost flow algorithm",
//   J. Algorithms 22(1), 1-29, 1997. doi:10.1006/jagm.1995.0805 (cost scaling, price update)
// * A. V. Goldberg and R. E. Tarjan, "Finding minimum-cost circulations by successive
//   approximation", Math. Oper. Res. 15(3), 430-466, 1990. doi:10.1287/moor.15.3.430
// * Z. Kiraly and P. Kovacs, "Efficient implementations of minimum-cost flow algorithms",
//   Acta Univ. Sapientiae, Informatica 4(1), 67-118, 2012. arXiv:1207.6381 (block search)
// * W. H. Cunningham, "A network simplex method", Math. Programming 11, 105-116, 1976.
//   doi:10.1007/BF01580379 (strongly feasible trees)
// * R. K. Ahuja, T. L. Magnanti and J. B. Orlin, "Network Flows", Prentice Hall, 1993, ch. 11.
// * G. H. Bradley, G. G. Brown and G. W. Graves, "Design and implementation of large scale
//   primal transshipment algorithms", Management Science 24(1), 1-34, 1977.
//   doi:10.1287/mnsc.24.1.1 (thread and subtree bookkeeping)
#pragma once

#include <cstdint>

#include "spare_fast/graph.hpp"
#include "spare_fast/validate.hpp"

namespace spare_fast {

// Which algorithm min_cost_flow runs (values shared with spare_fast.graph's method names).
enum class MinCostFlowMethod : std::int32_t {
  kAuto = 0,                     // chosen from measured features of the instance (size,
                                 // nodes with supply, 0/1 costs, hop radius from the supply);
                                 // the rule is written once, in the `method` parameter of
                                 // spare_fast.graph.min_cost_flow (spare_fast/graph.py), and
                                 // implemented by the dispatcher (network_simplex.cpp)
  kSuccessiveShortestPaths = 1,  // primal-dual successive shortest paths (graph.hpp)
  kNetworkSimplex = 2,           // primal network simplex with block search (this header)
  kCostScaling = 3,              // cost scaling, push-relabel with refinement (this header)
};

// Minimum-cost flow by the network simplex method; the arguments, validation, statuses and
// result are those of min_cost_flow in graph.hpp.
MinCostFlowResult network_simplex(std::int64_t n_nodes, Span<std::int32_t> tail,
                                  Span<std::int32_t> head, Span<std::int64_t> capacity,
                                  Span<std::int64_t> cost, Span<std::int64_t> supply);

// Minimum-cost flow by cost scaling (csrc/src/cost_scaling.cpp): costs are multiplied by
// n + 1 and the flow is refined from eps = max scaled cost / 16 down to eps = 1, each refine
// dividing eps by 16 (a 1-optimal flow for the scaled costs is optimal). A refine saturates the
// arcs of negative reduced cost and routes the excesses by partial augment-relabel (paths of
// up to 32 admissible arcs), with a global price update (a bucket Dijkstra from the deficits)
// at its start and every 4 n relabels. Once eps is below one unit of the input costs, a price
// refinement after each refine ends the solve when prices alone make the flow 1-optimal.
// O(n^2 m log(n C)) in the worst case. Besides the checks of min_cost_flow,
// 16 (n + 2)^2 (max cost + 1) and total supply + sum_a min(capacity[a], total supply) must fit
// int64, else the status is kOverflow. Infeasible supplies are detected by a price update (an
// excess that reaches no deficit) or by a price below the bound that a feasible problem keeps;
// the primal-dual method then computes the kInfeasible answer.
// The arguments, validation, statuses and result are those of min_cost_flow in graph.hpp.
MinCostFlowResult cost_scaling(std::int64_t n_nodes, Span<std::int32_t> tail,
                               Span<std::int32_t> head, Span<std::int64_t> capacity,
                               Span<std::int64_t> cost, Span<std::int64_t> supply);

// Minimum-cost flow by the chosen method (kAuto: see MinCostFlowMethod).
MinCostFlowResult min_cost_flow(std::int64_t n_nodes, Span<std::int32_t> tail,
                                Span<std::int32_t> head, Span<std::int64_t> capacity,
                                Span<std::int64_t> cost, Span<std::int64_t> supply,
                                MinCostFlowMethod method);

namespace detail {
// The primal-dual method of min_cost_flow (graph.hpp) with at most max_phases Dijkstra phases
// after its warm start. Returns false, result unspecified, when the network needs more; else
// true with result as min_cost_flow would return it.
bool min_cost_flow_within(std::int64_t n_nodes, Span<std::int32_t> tail,
                          Span<std::int32_t> head, Span<std::int64_t> capacity,
                          Span<std::int64_t> cost, Span<std::int64_t> supply,
                          std::int64_t max_phases, MinCostFlowResult& result);

// A flow of cost 0 over the cost-0 arcs alone (a maximum flow). Returns true with result set
// when it meets every supply (then optimal: costs are nonnegative), or when the opening checks
// end the solve (kUnbalanced, kOverflow); false, result unspecified, otherwise. Throws on
// invalid input like min_cost_flow.
bool zero_cost_flow(std::int64_t n_nodes, Span<std::int32_t> tail, Span<std::int32_t> head,
                    Span<std::int64_t> capacity, Span<std::int64_t> cost,
                    Span<std::int64_t> supply, MinCostFlowResult& result);

// The input checks of min_cost_flow (throws, naming the culprit); shared by both methods.
void validate_min_cost_flow(std::int64_t n_nodes, Span<std::int32_t> tail,
                            Span<std::int32_t> head, Span<std::int64_t> capacity,
                            Span<std::int64_t> cost, Span<std::int64_t> supply);
}  // namespace detail

}  // namespace spare_fast
