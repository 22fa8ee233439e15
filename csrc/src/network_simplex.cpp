// Minimum-cost flow by the primal network simplex method with block-search pricing; see
// network_simplex.hpp for the method, the invariants and the references.
#include "spare_fast/network_simplex.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>
#ifdef SPARE_FAST_NS_DEBUG
#include <cstdio>
#include <cstdlib>
#endif

#include "spare_fast/graph.hpp"
#include "spare_fast/validate.hpp"
#include "flow_totals.hpp"

namespace spare_fast {
namespace {

using Index = std::int32_t;
using detail::Wide;

constexpr Index kNone = -1;
constexpr std::int64_t kUnbounded = std::numeric_limits<std::int64_t>::max();
// Pricing block: kBlockFactor sqrt(real arcs), kLargeBlockFactor sqrt(real arcs) from
// kLargeNodes nodes on, kFewTerminalsBlockFactor sqrt(real arcs) when supply and demand sit on
// at most kFewTerminals nodes (see the constructor).
constexpr double kBlockFactor = 1.5;
constexpr double kLargeBlockFactor = 1.0;
constexpr double kFewTerminalsBlockFactor = 0.7;
constexpr std::int64_t kLargeNodes = std::int64_t{1} << 17;
constexpr std::int64_t kFewTerminals = 4;
// Dijkstra phases the primal-dual method gets under MinCostFlowMethod::kAuto before the
// simplex takes over (SPARe's move networks need at most a handful).
constexpr std::int64_t kAutoPhases = 16;
// Under kAuto, cost scaling takes networks of at least kAutoScalingNodes nodes whose supply and
// demand sit on at most kFewTerminals nodes when every node lies within sqrt(n) / 2 arcs of a
// supply node (see min_cost_flow's dispatcher).
constexpr std::int64_t kAutoScalingNodes = std::int64_t{1} << 16;
// Under kAuto, cost scaling also takes networks of at least kAutoScalingSpreadNodes nodes with
// supply on many nodes when every node they reach lies within 2 log2(n) arcs of a supply node
// (see supply_hop_radius and the dispatcher).
constexpr std::int64_t kAutoScalingSpreadNodes = std::int64_t{1} << 17;

// Arc states. The pricing reads a copy of each real arc oriented by its state (see priced_),
// so that a negative reduced cost marks a violating arc; tree arcs have reduced cost 0.
constexpr std::int8_t kAtLower = 1;
constexpr std::int8_t kInTree = 0;
constexpr std::int8_t kAtUpper = -1;

std::size_t sz(Index v) { return static_cast<std::size_t>(v); }

class NetworkSimplex {
 public:
  // Builds the starting basis (see crash_forest) and numbers the nodes in its preorder.
  NetworkSimplex(std::size_t n_nodes, Span<std::int32_t> tail, Span<std::int32_t> head,
                 Span<std::int64_t> capacity, Span<std::int64_t> cost,
                 Span<std::int64_t> supply, std::int64_t total_supply, std::int64_t big_m)
      : n_(static_cast<Index>(n_nodes)), root_(static_cast<Index>(n_nodes)), big_m_(big_m) {
    // Arcs that can never carry flow (no capacity, or a self-loop with a nonnegative cost)
    // are left out of the basis and the pricing.
    arc_of_input_.assign(tail.size, kNone);
    Index m = 0;
    for (std::size_t a = 0; a < tail.size; ++a) {
      if (capacity[a] > 0 && tail[a] != head[a]) arc_of_input_[a] = m++;
    }
    n_real_ = m;
    // Interleave the arcs with a stride of about the mean degree, so that a pricing block
    // samples arcs from all over the network instead of the out-arcs of a few nodes (input
    // is often sorted by tail); Kiraly and Kovacs report far fewer pivots with such a mix.
    if (n_nodes > 1 && m > 0) {
      const Index stride = std::max<Index>(m / static_cast<Index>(n_nodes), 3);
      Index slot = 0;
      Index column = 0;
      for (std::size_t a = 0; a < tail.size; ++a) {
        if (arc_of_input_[a] == kNone) continue;
        arc_of_input_[a] = slot;
        slot += stride;
        if (slot >= m) slot = ++column;
      }
    }
    const std::size_t n_arcs = sz(m) + n_nodes;
    arc_.resize(n_arcs);
    res_.assign(n_arcs, FlowCap{0, 0});
    state_.assign(n_arcs, kAtLower);
    for (std::size_t a = 0; a < tail.size; ++a) {
      const Index e = arc_of_input_[a];
      if (e == kNone) continue;
      arc_[sz(e)].source = tail[a];
      arc_[sz(e)].target = head[a];
      arc_[sz(e)].cost = cost[a];
      // An acyclic minimum-cost flow exists (costs are nonnegative), so no arc needs more
      // than the total supply; the clamp bounds every flow the pivots can produce.
      res_[sz(e)].cap = capacity[a] < total_supply ? capacity[a] : total_supply;
    }

    // The starting forest, in the input's node ids, then the new ids: the preorder of the
    // tree (root first), so that the thread starts as 0, 1, .., n - 1 and the subtrees the
    // pivots walk start out contiguous in memory.
    std::vector<Index> via;
    std::vector<std::int64_t> dist;
    crash_forest(supply, via, dist);
    const std::size_t n = n_nodes;
    std::vector<Index> first_child(n + 2, 0);
    auto parent_of = [&](std::size_t v) {
      return via[v] == kNone ? root_ : arc_[sz(via[v])].target;
    };
    for (std::size_t v = 0; v < n; ++v) ++first_child[sz(parent_of(v)) + 1];
    for (std::size_t v = 0; v <= n; ++v) first_child[v + 1] += first_child[v];
    std::vector<Index> children(n);
    {
      std::vector<Index> fill(first_child.begin(), first_child.end() - 1);
      for (std::size_t v = 0; v < n; ++v) {
        children[sz(fill[sz(parent_of(v))]++)] = static_cast<Index>(v);
      }
    }
    std::vector<Index> order;  // old ids in preorder, without the root
    order.reserve(n);
    std::vector<Index> new_id(n + 1);
    new_id[n] = root_;
    {
      std::vector<Index> stack(children.rbegin() + static_cast<std::ptrdiff_t>(n) -
                                   first_child[n + 1],
                               children.rend() - first_child[n]);
      while (!stack.empty()) {
        const Index u = stack.back();
        stack.pop_back();
        new_id[sz(u)] = static_cast<Index>(order.size());
        order.push_back(u);
        for (Index k = first_child[sz(u) + 1]; k > first_child[sz(u)]; --k) {
          stack.push_back(children[sz(k) - 1]);
        }
      }
    }
    for (Index e = 0; e < n_real_; ++e) {
      arc_[sz(e)].source = new_id[sz(arc_[sz(e)].source)];
      arc_[sz(e)].target = new_id[sz(arc_[sz(e)].target)];
    }
    priced_.assign(arc_.begin(), arc_.begin() + n_real_);  // every real arc starts at lower

    const std::size_t n_tree = n_nodes + 1;
    node_.resize(n_tree);
    link_.resize(n_tree);
    thread_.resize(n_tree);
    rev_thread_.resize(n_tree);
    last_succ_.resize(n_tree);
    pi_.assign(n_tree, 0);
    for (Index u = 0; u < n_; ++u) {
      const Index old = order[sz(u)];
      const Index e = n_real_ + u;  // u's artificial arc
      thread_[sz(u)] = u + 1;
      rev_thread_[sz(u) + 1] = u;
      link_[sz(u)].succ_num = 1;
      arc_[sz(e)].cost = big_m;
      res_[sz(e)].cap = kUnbounded;
      const std::int64_t b = supply[sz(old)];
      arc_[sz(e)].source = b >= 0 ? u : root_;
      arc_[sz(e)].target = b >= 0 ? root_ : u;
      const Index f = via[sz(old)];
      if (f != kNone) {
        // A transshipment node on its shortest path: the real arc carries no flow (no
        // subtree below it has supply) and points to the parent, so the tree stays strongly
        // feasible; pi = M - distance gives it zero reduced cost.
        link_[sz(u)].parent = arc_[sz(f)].target;
        node_[sz(u)].pred = f;
        node_[sz(u)].up = 1;
        state_[sz(f)] = kInTree;
        pi_[sz(u)] = big_m - dist[sz(old)];
      } else {
        link_[sz(u)].parent = root_;
        node_[sz(u)].pred = e;
        node_[sz(u)].up = b >= 0 ? 1 : 0;
        state_[sz(e)] = kInTree;
        res_[sz(e)].flow = b >= 0 ? b : -b;
        pi_[sz(u)] = b >= 0 ? -big_m : big_m;
      }
      load_pred(u);
    }
    link_[sz(root_)].parent = kNone;
    node_[sz(root_)].pred = kNone;
    node_[sz(root_)].up = 0;
    link_[sz(root_)].succ_num = n_ + 1;
    thread_[sz(root_)] = n_ > 0 ? 0 : root_;
    rev_thread_[0] = root_;
    rev_thread_[sz(root_)] = n_ > 0 ? n_ - 1 : root_;
    if (n_ > 0) thread_[sz(n_) - 1] = root_;
    // Preorder ids: a child's id exceeds its parent's, so one backward sweep sums the
    // subtree sizes, and a subtree is the id range [u, u + size).
    for (Index u = n_ - 1; u >= 0; --u) {
      const Index p = link_[sz(u)].parent;
      if (p != root_) link_[sz(p)].succ_num += link_[sz(u)].succ_num;
    }
    for (Index u = 0; u < n_; ++u) last_succ_[sz(u)] = u + link_[sz(u)].succ_num - 1;
    last_succ_[sz(root_)] = n_ > 0 ? n_ - 1 : root_;
    // Blocks of kBlockFactor sqrt(m) arcs: larger blocks mean fewer but dearer pivots
    // (Kiraly and Kovacs use sqrt(m)). With the oriented pricing copy, 1.5 sqrt(m) measured
    // 5-15% faster than sqrt(m) on NETGEN-8 at 2^15-2^16 nodes, NETGEN-SR and GRIDGEN, within
    // noise on GOTO and road grids, and about 10% slower on NETGEN-LO-8 (capacities 1..10,
    // where more pivots move flow and a pivot outweighs its pricing). From kLargeNodes nodes
    // the potentials the pricing reads at random (8 bytes a node) no longer fit a 1 MiB L2
    // cache and a priced arc costs more against a pivot: sqrt(m) blocks then measured 7-10%
    // faster on NETGEN-8 at 2^17 and 2^18 nodes (the pivots grow only 7% at 2^18: 696,000
    // against 665,000, while the arcs priced fall by 30%).
    //
    // With supply and demand on a few nodes every cycle crosses the network: a pivot walks and
    // shifts thousands of nodes (4,900 potentials a pivot on the column-fed GRIDGEN grid at
    // 65,538 nodes, against 320 on NETGEN-8 at 2^16), so a cheaper pricing per pivot pays:
    // 0.7 sqrt(m) blocks were 22% faster there (12.6 s to 9.8 s: the pivots stayed at 500,000,
    // the potentials shifted fell by 19% and the walks by 31%), 15% faster at 16,386 nodes,
    // 5% faster on GOTO-style tori at 2^16 nodes, 7% slower at 2^14, and 10-20% faster on the
    // staircase.
    std::int64_t terminals = 0;
    for (std::size_t v = 0; v < n_nodes; ++v) terminals += supply[v] != 0;
    const double factor = terminals <= kFewTerminals ? kFewTerminalsBlockFactor
                          : n_ >= kLargeNodes        ? kLargeBlockFactor
                                                     : kBlockFactor;
    const double block = factor * std::sqrt(static_cast<double>(n_real_));
    block_size_ = static_cast<Index>(block) < 10 ? 10 : static_cast<Index>(block);
  }

  // Pivots until no arc violates its optimality condition. Returns true if the optimum
  // carries no artificial flow (every supply met).
  bool solve() {
    Index in = kNone;
    const std::int64_t period = renumber_period();
    std::int64_t until_renumber = period;
    while ((in = find_entering()) != kNone) {
      pivot(in);
      if (--until_renumber == 0) {
        renumber();
        until_renumber = period;
      }
#ifdef SPARE_FAST_NS_DEBUG
      check_tree();
#endif
    }
    for (Index u = 0; u < n_; ++u) store_pred(u);
    for (Index u = 0; u < n_; ++u) {
      if (res_[sz(n_real_ + u)].flow != 0) return false;
    }
    return true;
  }

  // Flow on input arc a (0 for arcs left out).
  std::int64_t flow(std::size_t a) const {
    const Index e = arc_of_input_[a];
    return e == kNone ? 0 : res_[sz(e)].flow;
  }

 private:
#ifdef SPARE_FAST_NS_DEBUG
  void check_tree() const {
    const std::size_t nt = sz(n_) + 1;
    std::vector<Index> cnt(nt, 0);
    Index x = root_;
    std::vector<Index> order;
    for (std::size_t c = 0; c < nt; ++c) { order.push_back(x); x = thread_[sz(x)]; }
    if (x != root_) std::abort();
    std::vector<Index> pos(nt, -1);
    for (std::size_t i = 0; i < nt; ++i) { if (pos[sz(order[i])] != -1) std::abort(); pos[sz(order[i])] = static_cast<Index>(i); }
    for (std::size_t i = 0; i < nt; ++i) if (rev_thread_[sz(thread_[i])] != static_cast<Index>(i)) std::abort();
    for (Index u = 0; u < n_; ++u) {
      const Index e = node_[sz(u)].pred; const Index p = link_[sz(u)].parent;
      if (node_[sz(u)].up ? (arc_[sz(e)].source != u || arc_[sz(e)].target != p) : (arc_[sz(e)].source != p || arc_[sz(e)].target != u)) std::abort();
      if (state_[sz(e)] != kInTree) std::abort();
      if (arc_[sz(e)].cost + pi_[sz(arc_[sz(e)].source)] - pi_[sz(arc_[sz(e)].target)] != 0) std::abort();
      if (node_[sz(u)].flow < 0 || node_[sz(u)].flow > node_[sz(u)].cap || node_[sz(u)].cap != res_[sz(e)].cap) std::abort();
    }
    // subtree sizes and last succ
    for (Index u = 0; u <= n_; ++u) {
      Index cntu = 0; Index y = u; Index last = u;
      do { last = y; y = thread_[sz(y)]; ++cntu; } while (y != root_ && [&]{ Index z = y; while (z != kNone && z != u) z = link_[sz(z)].parent; return z == u; }());
      if (cntu != link_[sz(u)].succ_num) { std::fprintf(stderr, "succ %d: %d vs %d\n", u, cntu, link_[sz(u)].succ_num); std::abort(); }
      if (last != last_succ_[sz(u)]) { std::fprintf(stderr, "last %d\n", u); std::abort(); }
    }
  }
#endif
  // The starting forest: every transshipment node (supply 0) that reaches a demand node over
  // real arcs between transshipment nodes hangs on its shortest such path (Dijkstra on the
  // reversed arcs from every demand node at once); the others, and every supply and demand
  // node, hang from the root by their artificial arcs. via[v] is v's tree arc (kNone:
  // artificial), dist[v] its path length. Without it the first pivots build the same forest
  // one degenerate pivot at a time, several per node. Reads the arcs in input node ids.
  void crash_forest(Span<std::int64_t> supply, std::vector<Index>& via,
                    std::vector<std::int64_t>& dist) const {
    const std::size_t n = sz(n_);
    // In-arcs by head, keeping only those from transshipment tails (sources and sinks stay on
    // their root arcs), each with its tail and cost, so that the search reads them in order.
    struct InArc {
      Index source;
      std::int64_t cost;
    };
    std::vector<Index> first_in(n + 1, 0);
    for (Index e = 0; e < n_real_; ++e) {
      const Arc& a = arc_[sz(e)];
      if (supply[sz(a.source)] == 0) ++first_in[sz(a.target) + 1];
    }
    for (std::size_t v = 0; v < n; ++v) first_in[v + 1] += first_in[v];
    std::vector<InArc> in_arcs(sz(first_in[n]));
    std::vector<Index> in_id(sz(first_in[n]));
    {
      std::vector<Index> fill(first_in.begin(), first_in.end() - 1);
      for (Index e = 0; e < n_real_; ++e) {
        const Arc& a = arc_[sz(e)];
        if (supply[sz(a.source)] != 0) continue;
        const Index k = fill[sz(a.target)]++;
        in_arcs[sz(k)] = InArc{a.source, a.cost};
        in_id[sz(k)] = e;
      }
    }
    constexpr std::int64_t kFar = std::numeric_limits<std::int64_t>::max();
    dist.assign(n, kFar);
    via.assign(n, kNone);
    // An indexed 4-ary heap with decrease-key: every node enters and leaves it at most once.
    // With the in-arc copies above it took the starting basis from about 100 to 75 ms on
    // NETGEN-8 at 2^16 nodes (a lazy binary heap of (distance, node) pairs before).
    struct Item {
      std::int64_t key;
      Index node;
    };
    std::vector<Item> heap;
    std::vector<Index> pos(n, kNone);  // place in heap; kNone: not in it
    auto place = [&](std::size_t i, const Item& x) {
      heap[i] = x;
      pos[sz(x.node)] = static_cast<Index>(i);
    };
    auto sift_up = [&](std::size_t i, const Item x) {
      while (i > 0) {
        const std::size_t p = (i - 1) / 4;
        if (heap[p].key <= x.key) break;
        place(i, heap[p]);
        i = p;
      }
      place(i, x);
    };
    for (std::size_t v = 0; v < n; ++v) {
      if (supply[v] < 0) {
        dist[v] = 0;
        heap.push_back(Item{0, static_cast<Index>(v)});
        pos[v] = static_cast<Index>(heap.size() - 1);
      }
    }
    while (!heap.empty()) {
      const Item top = heap[0];
      pos[sz(top.node)] = kNone;
      const Item last = heap.back();
      heap.pop_back();
      if (!heap.empty()) {  // sift last down from the top
        const std::size_t size = heap.size();
        std::size_t i = 0;
        for (;;) {
          const std::size_t c = 4 * i + 1;
          if (c >= size) break;
          std::size_t best = c;
          const std::size_t end = std::min(c + 4, size);
          for (std::size_t k = c + 1; k < end; ++k) {
            if (heap[k].key < heap[best].key) best = k;
          }
          if (heap[best].key >= last.key) break;
          place(i, heap[best]);
          i = best;
        }
        place(i, last);
      }
      const Index u = top.node;
      const std::int64_t d = top.key;
      for (Index k = first_in[sz(u)]; k < first_in[sz(u) + 1]; ++k) {
        const Index w = in_arcs[sz(k)].source;
        const std::int64_t nd = d + in_arcs[sz(k)].cost;
        if (nd < dist[sz(w)]) {
          const bool queued = pos[sz(w)] != kNone;
          dist[sz(w)] = nd;
          via[sz(w)] = in_id[sz(k)];
          if (!queued) heap.push_back(Item{nd, w});
          sift_up(queued ? sz(pos[sz(w)]) : heap.size() - 1, Item{nd, w});
        }
      }
    }
  }

  // Pivots between renumberings: (n + m) / 64, at least 1,024, so that a renumbering, O(n + m),
  // costs about 64 steps per pivot, less than pricing one block (measured on NETGEN-8: 15-25%
  // faster than never renumbering, and flat within 2x of this period).
  std::int64_t renumber_period() const {
    return std::max<std::int64_t>(1024, (static_cast<std::int64_t>(n_) + n_real_) / 64);
  }

  // Renumbers the nodes in the thread's order (root last, as ever), so that the subtrees the
  // pivots walk are again ranges of nearby ids: the tree moves away from its starting shape,
  // and with it the memory order of its walks. The pivots themselves do not change.
  void renumber() {
    const std::size_t nt = sz(n_) + 1;
    std::vector<Index>& id = scratch_id_;
    id.resize(nt);
    Index x = thread_[sz(root_)];
    for (Index i = 0; i < n_; ++i, x = thread_[sz(x)]) id[sz(x)] = i;
    id[sz(root_)] = root_;
    std::vector<TreeNode> node(nt);
    std::vector<Link> link(nt);
    std::vector<std::int64_t> pi(nt);
    for (std::size_t u = 0; u < nt; ++u) {
      const std::size_t v = sz(id[u]);
      node[v] = node_[u];
      link[v] = link_[u];
      if (link[v].parent != kNone) link[v].parent = id[sz(link[v].parent)];
      pi[v] = pi_[u];
      rev_thread_[v] = id[sz(last_succ_[u])];  // scratch: the new last_succ_
    }
    node_.swap(node);
    link_.swap(link);
    pi_.swap(pi);
    last_succ_.swap(rev_thread_);
    for (Index u = 0; u < n_; ++u) {
      thread_[sz(u)] = u + 1;
      rev_thread_[sz(u) + 1] = u;
    }
    thread_[sz(root_)] = 0;
    rev_thread_[0] = root_;
    rev_thread_[sz(root_)] = n_ - 1;
    thread_[sz(n_) - 1] = root_;
    for (Arc& a : arc_) {
      a.source = id[sz(a.source)];
      a.target = id[sz(a.target)];
    }
    for (Arc& a : priced_) {
      a.source = id[sz(a.source)];
      a.target = id[sz(a.target)];
    }
  }

  // Block search: scans the real arcs cyclically from where the last search stopped, in
  // blocks of block_size_; returns the most violating arc of the first block that holds a
  // violating arc, or kNone after a full round without one (the basis is optimal).
  Index find_entering() {
    const Arc* arc = priced_.data();
    const std::int64_t* pi = pi_.data();
    std::int64_t best = 0;
    Index chosen = kNone;
    Index left = block_size_;
    Index e = next_arc_;
    for (Index scanned = 0; scanned < n_real_;) {
      // The stretch of the block before the block ends, the arcs wrap or the round ends.
      const Index len = std::min(std::min(left, n_real_ - e), n_real_ - scanned);
      for (Index k = e, stop = e + len; k < stop; ++k) {
        const Arc& a = arc[sz(k)];
        const std::int64_t violation = a.cost + pi[sz(a.source)] - pi[sz(a.target)];
        if (violation < best) {
          best = violation;
          chosen = k;
        }
      }
      scanned += len;
      left -= len;
      e += len;
      if (e == n_real_) e = 0;
      if (left == 0) {
        if (chosen != kNone) {
          next_arc_ = e;
          return chosen;
        }
        left = block_size_;
      }
    }
    return chosen;  // kNone, or the best of the last, partial block
  }

  // A tree arc's flow and capacity live in the node below it while it is in the tree (the
  // walks to the apex then read them next to the arc's direction instead of from res_), and
  // in res_ otherwise.
  void load_pred(Index u) {
    const FlowCap& fc = res_[sz(node_[sz(u)].pred)];
    node_[sz(u)].flow = fc.flow;
    node_[sz(u)].cap = fc.cap;
  }
  void store_pred(Index u) { res_[sz(node_[sz(u)].pred)].flow = node_[sz(u)].flow; }

  // Moves nontree arc e to bound `state` (kAtLower or kAtUpper) and orients its pricing copy
  // so that its reduced cost, read forwards, is negative exactly when the arc violates.
  void set_state(Index e, std::int8_t state) {
    state_[sz(e)] = state;
    if (e >= n_real_) return;  // artificial arcs are never priced
    const Arc& a = arc_[sz(e)];
    priced_[sz(e)] = state == kAtLower ? a : Arc{a.target, a.source, -a.cost};
  }

  void pivot(Index in) {
    const bool increase = state_[sz(in)] == kAtLower;
    // Flow goes first -> second on the entering arc, then up from second to the apex and
    // down from the apex to first.
    const Index first = increase ? arc_[sz(in)].source : arc_[sz(in)].target;
    const Index second = increase ? arc_[sz(in)].target : arc_[sz(in)].source;
    // One walk up both sides to the apex (the side with the smaller subtree steps, so the two
    // meet there) finds the tightest arc of each side on the way. The leaving arc is the
    // blocking arc met last when the cycle is walked from the apex in the direction of the
    // flow: apex .. first, the entering arc, second .. apex. Walking the first side upwards
    // meets that order backwards (the first minimum met wins: strict <), the second side
    // forwards (the last minimum met wins: <=); the second side wins ties with the first.
    std::int64_t d1 = kUnbounded;
    std::int64_t d2 = kUnbounded;
    Index w1 = kNone;
    Index w2 = kNone;
    Index a = first;
    Index b = second;
    while (a != b) {
      const Link& la = link_[sz(a)];
      const Link& lb = link_[sz(b)];
      if (la.succ_num < lb.succ_num) {
        const TreeNode& na = node_[sz(a)];
        const std::int64_t r = na.up ? na.flow : na.cap - na.flow;  // parent -> a
        if (r < d1) {
          d1 = r;
          w1 = a;
        }
        a = la.parent;
      } else {
        const TreeNode& nb = node_[sz(b)];
        const std::int64_t r = nb.up ? nb.cap - nb.flow : nb.flow;  // b -> parent
        if (r <= d2) {
          d2 = r;
          w2 = b;
        }
        b = lb.parent;
      }
    }
    const Index apex = a;
    std::int64_t delta = res_[sz(in)].cap;  // at either bound its residual is its capacity
    Index leave = kNone;                    // child end of the leaving tree arc; kNone: `in`
    bool leave_on_first = false;
    if (d1 < delta) {
      delta = d1;
      leave = w1;
      leave_on_first = true;
    }
    if (w2 != kNone && d2 <= delta) {
      delta = d2;
      leave = w2;
      leave_on_first = false;
    }

    if (delta > 0) {
      res_[sz(in)].flow += increase ? delta : -delta;
      for (Index w = first; w != apex; w = link_[sz(w)].parent) {
        node_[sz(w)].flow += node_[sz(w)].up ? -delta : delta;
      }
      for (Index w = second; w != apex; w = link_[sz(w)].parent) {
        node_[sz(w)].flow += node_[sz(w)].up ? delta : -delta;
      }
    }
    if (leave == kNone) {  // the entering arc blocks itself: it only changes bound
      set_state(in, increase ? kAtUpper : kAtLower);
      return;
    }
    const Index out = node_[sz(leave)].pred;
    store_pred(leave);
    set_state(out, node_[sz(leave)].flow == 0 ? kAtLower : kAtUpper);
    state_[sz(in)] = kInTree;
    // The subtree below the leaving arc moves: the end of the entering arc inside it becomes
    // its root, hung from the other end.
    const Index new_root = leave_on_first ? first : second;
    const Index new_parent = leave_on_first ? second : first;
    rehang(in, new_root, new_parent, leave, apex);
  }

  // Moves the subtree T rooted at old_top (whose parent arc leaves) so that it hangs from
  // new_parent through the entering arc `in`, rooted at new_root. The stem new_root ..
  // old_top reverses; the thread of T becomes: the subtree of stem[0], then for each later
  // stem node stem[i] the part of its old subtree before stem[i-1]'s (from stem[i] itself) and
  // the part after it, so every stem node's new subtree ends where T ends.
  void rehang(Index in, Index new_root, Index new_parent, Index old_top, Index apex) {
    stem_.clear();
    for (Index w = new_root; w != old_top; w = link_[sz(w)].parent) stem_.push_back(w);
    stem_.push_back(old_top);
    const std::size_t k = stem_.size() - 1;
    const Index old_last = last_succ_[sz(old_top)];
    const Index before = rev_thread_[sz(old_top)];
    const Index after = thread_[sz(old_last)];
    const Index size = link_[sz(old_top)].succ_num;
    const Index old_parent = link_[sz(old_top)].parent;

    // Read the segment ends before any link changes.
    seg_.resize(k + 1);
    for (std::size_t i = 1; i <= k; ++i) {
      const Index child = stem_[i - 1];
      const Index w = stem_[i];
      Segment& s = seg_[i];
      s.a_end = rev_thread_[sz(child)];
      s.b_start = thread_[sz(last_succ_[sz(child)])];
      s.b_end = last_succ_[sz(w)];
      s.has_b = last_succ_[sz(w)] != last_succ_[sz(child)];
    }
    Index end = last_succ_[sz(new_root)];
    for (std::size_t i = 1; i <= k; ++i) {
      const Index w = stem_[i];
      const Segment& s = seg_[i];
      thread_[sz(end)] = w;
      rev_thread_[sz(w)] = end;
      if (s.has_b) {
        thread_[sz(s.a_end)] = s.b_start;
        rev_thread_[sz(s.b_start)] = s.a_end;
        end = s.b_end;
      } else {
        end = s.a_end;
      }
    }
    const Index new_last = end;

    // Cut T out of the thread, then splice it in right after new_parent (its first child).
    thread_[sz(before)] = after;
    rev_thread_[sz(after)] = before;
    const Index next = thread_[sz(new_parent)];
    thread_[sz(new_parent)] = new_root;
    rev_thread_[sz(new_root)] = new_parent;
    thread_[sz(new_last)] = next;
    rev_thread_[sz(next)] = new_last;

    // Reverse the stem: stem[i]'s parent arc becomes the one stem[i - 1] had.
    for (std::size_t i = k; i >= 1; --i) {
      const Index w = stem_[i];
      const Index child = stem_[i - 1];
      link_[sz(w)].parent = child;
      node_[sz(w)].pred = node_[sz(child)].pred;
      node_[sz(w)].flow = node_[sz(child)].flow;
      node_[sz(w)].cap = node_[sz(child)].cap;
      node_[sz(w)].up = node_[sz(child)].up ? 0 : 1;
      link_[sz(w)].succ_num = size - link_[sz(child)].succ_num;
      last_succ_[sz(w)] = new_last;
    }
    link_[sz(new_root)].parent = new_parent;
    node_[sz(new_root)].pred = in;
    load_pred(new_root);
    node_[sz(new_root)].up = arc_[sz(in)].source == new_root ? 1 : 0;
    link_[sz(new_root)].succ_num = size;
    last_succ_[sz(new_root)] = new_last;

    // Subtree sizes change below the apex only; subtree ends wherever T was or lands last.
    for (Index x = old_parent; x != apex; x = link_[sz(x)].parent) link_[sz(x)].succ_num -= size;
    for (Index x = new_parent; x != apex; x = link_[sz(x)].parent) link_[sz(x)].succ_num += size;
    for (Index x = old_parent; x != kNone && last_succ_[sz(x)] == old_last; x = link_[sz(x)].parent) {
      last_succ_[sz(x)] = before;
    }
    for (Index x = new_parent; x != kNone && last_succ_[sz(x)] == new_parent;
         x = link_[sz(x)].parent) {
      last_succ_[sz(x)] = new_last;
    }

    // Restore zero reduced cost on the entering arc by shifting the potentials of T.
    const std::int64_t reduced =
        arc_[sz(in)].cost + pi_[sz(arc_[sz(in)].source)] - pi_[sz(arc_[sz(in)].target)];
    const std::int64_t shift = arc_[sz(in)].source == new_root ? -reduced : reduced;
    // Only differences of potentials matter, so when T is the larger part the rest of the tree
    // (the thread after T, round to new_root) moves the other way instead; the walk follows
    // the thread, a chain of dependent reads, and is the largest cost of a pivot. The root's
    // potential then drifts from 0 and is brought back before it can approach the bound.
    if (2 * size <= n_ + 1) {
      shift_thread(new_root, size, shift);
    } else {
      shift_thread(thread_[sz(new_last)], n_ + 1 - size, -shift);
      const std::int64_t drift = pi_[sz(root_)];
      if (drift > big_m_ || drift < -big_m_) {
        for (std::int64_t& p : pi_) p -= drift;
      }
    }
  }

  // Adds shift to the potentials of the `count` nodes of the thread from x on. The thread is
  // mostly runs of consecutive ids (the renumberings make it so), and the inner loop steps to
  // the next id without waiting for the thread load: the check that the run goes on is a
  // well-predicted branch, not a dependency of the next address, so the walk no longer
  // pays a load latency per node inside a run.
  void shift_thread(Index x, Index count, std::int64_t shift) {
    std::int64_t* pi = pi_.data();
    const Index* thread = thread_.data();
    while (count > 0) {
      Index y = x;
      do {
        pi[sz(y)] += shift;
        --count;
        ++y;
      } while (count > 0 && thread[sz(y) - 1] == y);
      x = thread[sz(y) - 1];
    }
  }

  // What the pricing reads of an arc, kept together (one stream instead of three).
  struct Arc {
    Index source;       // tail
    Index target;       // head
    std::int64_t cost;  // cost (big M on artificial arcs)
  };

  // What the walk to the apex follows from node to node. The walk is a chain of dependent
  // random reads, so these 8-byte records are kept apart from the rest of a node's data: at
  // 2^16 nodes they take 512 KiB and fit in a 1 MiB L2 cache, where 32-byte records holding
  // everything did not (measured 8-13% less time on NETGEN-8 at 2^16-2^17 nodes, within
  // noise at 2^15 and below).
  struct Link {
    Index parent;    // tree parent (kNone at the root)
    Index succ_num;  // subtree size
  };

  // The rest of a node's tree data: the walk reads it for the side that steps, but the
  // address of the next step does not wait for it.
  struct TreeNode {
    std::int64_t flow;  // flow on pred (res_ holds it while pred is out of the tree)
    std::int64_t cap;   // capacity of pred
    Index pred;         // arc to the parent
    Index up;           // 1 if pred points from the node to its parent
  };

  // Flow and capacity of an arc, read together by the cycle walks.
  struct FlowCap {
    std::int64_t flow;  // current flow
    std::int64_t cap;   // capacity (clamped; unbounded on artificial arcs)
  };

  struct Segment {
    Index a_end;    // last node of the old subtree of stem[i] before stem[i - 1]'s
    Index b_start;  // first node after stem[i - 1]'s subtree inside stem[i]'s (if has_b)
    Index b_end;    // last node of stem[i]'s old subtree
    bool has_b;     // whether anything of stem[i]'s subtree follows stem[i - 1]'s
  };

  Index n_;                            // real nodes 0 .. n_ - 1
  Index root_;                         // the artificial root, node n_
  Index n_real_ = 0;                   // arcs 0 .. n_real_ - 1 are real, then one per node
  std::int64_t big_m_;                 // cost of the artificial arcs
  Index block_size_ = 10;              // arcs priced per block
  Index next_arc_ = 0;                 // where the next block search starts
  std::vector<Index> arc_of_input_;    // input arc -> internal arc, kNone if left out
  std::vector<Arc> arc_;               // ends and cost of each internal arc
  std::vector<Arc> priced_;            // real arcs as priced: reversed, cost negated, at upper
  std::vector<FlowCap> res_;           // flow and capacity of each internal arc
  std::vector<std::int8_t> state_;     // kAtLower, kInTree or kAtUpper
  std::vector<Link> link_;             // parent links and subtree sizes
  std::vector<TreeNode> node_;         // parent arcs, their flows and capacities
  std::vector<Index> thread_;          // preorder successor (cyclic through the root)
  std::vector<Index> rev_thread_;      // preorder predecessor
  std::vector<Index> last_succ_;       // last node of the subtree in thread order
  std::vector<std::int64_t> pi_;       // node potentials
  std::vector<Index> stem_;            // pivot scratch: new_root .. old_top
  std::vector<Segment> seg_;           // pivot scratch
  std::vector<Index> scratch_id_;      // renumber scratch
};

// The hop radius of the supply: the most arcs (with capacity) on a fewest-arc path from the
// supply nodes to any node they reach, by breadth-first search from all of them at once,
// abandoned past `limit` (returns limit + 1 then). -1 when an arc has an end out of range (the
// chosen method reports it). One pass over the arcs to build the adjacency, one for the search.
std::int64_t supply_hop_radius(std::int64_t n_nodes, Span<std::int32_t> tail,
                               Span<std::int32_t> head, Span<std::int64_t> capacity,
                               Span<std::int64_t> supply, std::int64_t limit) {
  const std::size_t n = static_cast<std::size_t>(n_nodes);
  std::vector<Index> first(n + 1, 0);
  for (std::size_t a = 0; a < tail.size; ++a) {
    const Index u = tail[a];
    const Index v = head[a];
    if (u < 0 || u >= n_nodes || v < 0 || v >= n_nodes) return -1;
    if (capacity[a] > 0 && u != v) ++first[sz(u) + 1];
  }
  for (std::size_t v = 0; v < n; ++v) first[v + 1] += first[v];
  std::vector<Index> out(sz(first[n]));
  {
    std::vector<Index> fill(first.begin(), first.end() - 1);
    for (std::size_t a = 0; a < tail.size; ++a) {
      if (capacity[a] > 0 && tail[a] != head[a]) out[sz(fill[sz(tail[a])]++)] = head[a];
    }
  }
  std::vector<Index> level(n, kNone);
  std::vector<Index> frontier;
  std::vector<Index> next;
  for (std::size_t v = 0; v < n; ++v) {
    if (supply[v] > 0) {
      level[v] = 0;
      frontier.push_back(static_cast<Index>(v));
    }
  }
  std::int64_t depth = 0;
  while (!frontier.empty()) {
    next.clear();
    for (const Index u : frontier) {
      for (Index k = first[sz(u)]; k < first[sz(u) + 1]; ++k) {
        const Index v = out[sz(k)];
        if (level[sz(v)] != kNone) continue;
        level[sz(v)] = static_cast<Index>(depth + 1);
        next.push_back(v);
      }
    }
    if (next.empty()) break;
    if (++depth > limit) return limit + 1;
    frontier.swap(next);
  }
  return depth;
}

}  // namespace

MinCostFlowResult network_simplex(std::int64_t n_nodes, Span<std::int32_t> tail,
                                  Span<std::int32_t> head, Span<std::int64_t> capacity,
                                  Span<std::int64_t> cost, Span<std::int64_t> supply) {
  MinCostFlowResult result;
  detail::FlowTotals totals;
  // The flow on an artificial arc stays below flow_bound (twice that must fit: a pivot adds
  // to it), and the node potentials, which big_m below enters, below potential_bound.
  auto bounds = [n_nodes](const detail::FlowTotals& t) {
    const Wide potential_bound = 8 * (static_cast<Wide>(n_nodes) + 2) * (t.max_cost + 1);
    const Wide twice_flow = 2 * t.flow_bound;
    return potential_bound > twice_flow ? potential_bound : twice_flow;
  };
  if (!detail::start_min_cost_flow(n_nodes, tail, head, capacity, cost, supply, bounds, result,
                                   totals)) {
    return result;
  }
  const Wide positive = totals.positive;
  const Wide max_cost = totals.max_cost;
  const auto total_supply = static_cast<std::int64_t>(positive);
  const auto big_m = static_cast<std::int64_t>((static_cast<Wide>(n_nodes) + 1) * max_cost + 1);
  NetworkSimplex simplex(static_cast<std::size_t>(n_nodes), tail, head, capacity, cost, supply,
                         total_supply, big_m);
  if (!simplex.solve()) {
    // The supplies cannot all be met. The primal-dual method returns the minimum-cost flow of
    // maximum value that kInfeasible promises (its overflow bounds are weaker than ours).
    return min_cost_flow(n_nodes, tail, head, capacity, cost, supply);
  }
  for (std::size_t a = 0; a < tail.size; ++a) {
    result.flow[a] = simplex.flow(a);
    result.total_cost += result.flow[a] * cost[a];
  }
  result.flow_value = total_supply;
  result.status = MinCostFlowStatus::kOptimal;
  return result;
}

MinCostFlowResult min_cost_flow(std::int64_t n_nodes, Span<std::int32_t> tail,
                                Span<std::int32_t> head, Span<std::int64_t> capacity,
                                Span<std::int64_t> cost, Span<std::int64_t> supply,
                                MinCostFlowMethod method) {
  switch (method) {
    case MinCostFlowMethod::kSuccessiveShortestPaths:
      return min_cost_flow(n_nodes, tail, head, capacity, cost, supply);
    case MinCostFlowMethod::kNetworkSimplex:
      return network_simplex(n_nodes, tail, head, capacity, cost, supply);
    case MinCostFlowMethod::kCostScaling:
      return cost_scaling(n_nodes, tail, head, capacity, cost, supply);
    case MinCostFlowMethod::kAuto:
      break;
  }
  // The choice reads measured features of the instance: its size, how many nodes hold supply
  // or demand, whether every cost is 0 or 1, and whether cost-0 arcs touch the terminals.
  //
  // With wider cost ranges, when cost-0 arcs leave a supply node and enter a demand node, a
  // maximum flow over the cost-0 arcs alone comes first: where it carries every unit (grids
  // whose master source and sink touch one node, as pynetgen's GRIDGEN makes them) it costs 0
  // and is optimal, for a scan of the arcs where the simplex would spend several times that
  // building its starting basis.
  //
  // Large networks (kAutoScalingNodes nodes or more) whose supply enters and leaves through a
  // few nodes (kFewTerminals) send the flow across the network, and every simplex pivot walks
  // a long cycle. Cost scaling then wins where the paths are short in arcs: on GOTO-style tori
  // (every node within 57 arcs of the source at 2^16 nodes, 0.22 sqrt(n)) it is 1.3x faster
  // than the simplex. Where they are long it moves the flow a hop per push and loses: on
  // GRIDGEN grids fed through their first column (sqrt(n) + 1 arcs from the source) the
  // simplex is 1.5x faster at 65,538 nodes, on the staircase (sqrt(2n)) 2.6x at 2^18. So a
  // breadth-first search from the supply, abandoned past sqrt(n) / 2 arcs, decides
  // (docs/graph/families.md).
  // With sources and sinks spread over many nodes the simplex is faster below
  // kAutoScalingSpreadNodes nodes (2.7x on NETGEN-8 at 2^15, level at 2^16) and keeps them;
  // from there on see below.
  //
  // The primal-dual method needs one phase per distinct shortest-path length: a handful when
  // every cost is 0 or 1 and paths are short (assignment-shaped networks, SPARe's moves), where
  // it beats the simplex. With long paths the lengths are many even on 0/1 costs (k disjoint
  // paths of lengths 1..k take k phases, each a Dijkstra over the network), so it gets
  // kAutoPhases phases and the simplex takes over when they do not suffice.
  const bool ids_ok = supply.size == static_cast<std::size_t>(n_nodes) &&
                      head.size == tail.size && cost.size == tail.size &&
                      capacity.size == tail.size;
  bool unit_costs = true;
  bool zero_from_supply = false;
  bool zero_into_demand = false;
  for (std::size_t a = 0; a < cost.size; ++a) {
    unit_costs = unit_costs && cost[a] <= 1;
    if (cost[a] != 0 || !ids_ok || a >= tail.size || capacity[a] <= 0) continue;
    const std::int32_t u = tail[a];
    const std::int32_t v = head[a];
    if (u < 0 || u >= n_nodes || v < 0 || v >= n_nodes || u == v) continue;  // validated later
    zero_from_supply = zero_from_supply || supply[static_cast<std::size_t>(u)] > 0;
    zero_into_demand = zero_into_demand || supply[static_cast<std::size_t>(v)] < 0;
  }
  std::int64_t terminals = 0;
  for (std::size_t v = 0; v < supply.size; ++v) terminals += supply[v] != 0;
  if (!unit_costs && zero_from_supply && zero_into_demand) {
    MinCostFlowResult r;
    if (detail::zero_cost_flow(n_nodes, tail, head, capacity, cost, supply, r)) return r;
  }
  // With supply spread over many nodes, cost scaling wins from kAutoScalingSpreadNodes nodes
  // on where the network is "small-world": NETGEN's random arcs, the numpy GRIDGEN's grid with
  // random arcs (every node within 5-6 arcs of a supply node at 2^17 nodes). There its time
  // grows about linearly with n, the simplex's faster (the pivots grow with n, and so do the
  // walks and potential shifts of each pivot). On planar grids (road, 45 arcs from the supply
  // to the farthest node at 2^17) flow moves a hop per push and the simplex stays 2-3x faster.
  bool scaling = false;
  bool long_paths = false;  // few terminals, far apart: straight to the simplex
  if (n_nodes >= kAutoScalingSpreadNodes && terminals > kFewTerminals && ids_ok &&
      !unit_costs) {
    std::int64_t log2n = 0;
    while ((std::int64_t{1} << (log2n + 1)) <= n_nodes) ++log2n;
    const std::int64_t radius =
        supply_hop_radius(n_nodes, tail, head, capacity, supply, 2 * log2n);
    scaling = radius >= 0 && radius <= 2 * log2n;
  } else if (n_nodes >= kAutoScalingNodes && terminals <= kFewTerminals && ids_ok) {
    std::int64_t half_root = 0;  // floor(sqrt(n) / 2)
    while (4 * (half_root + 1) * (half_root + 1) <= n_nodes) ++half_root;
    const std::int64_t radius =
        supply_hop_radius(n_nodes, tail, head, capacity, supply, half_root);
    scaling = radius >= 0 && radius <= half_root;
    long_paths = radius > half_root;
  }
  if (scaling) {
    MinCostFlowResult r = cost_scaling(n_nodes, tail, head, capacity, cost, supply);
    if (r.status != MinCostFlowStatus::kOverflow) return r;  // else its bound: the simplex
  } else if (unit_costs && !long_paths) {
    MinCostFlowResult r;
    if (detail::min_cost_flow_within(n_nodes, tail, head, capacity, cost, supply, kAutoPhases,
                                     r)) {
      return r;
    }
  }
  MinCostFlowResult r = network_simplex(n_nodes, tail, head, capacity, cost, supply);
  if (r.status == MinCostFlowStatus::kOverflow) {
    return min_cost_flow(n_nodes, tail, head, capacity, cost, supply);
  }
  return r;
}

}  // namespace spare_fast
