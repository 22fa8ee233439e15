// Bindings of the graph kernels (spare_fast.graph): hopcroft_karp, max_b_matching,
// min_cost_flow.
#include <pybind11/native_enum.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "buffer.hpp"
#include "spare_fast/graph.hpp"
#include "spare_fast/network_simplex.hpp"

namespace spare_fast::python {

namespace {

// Why releasing the GIL around the kernels is safe: the inputs are private copies made while
// the GIL was held (buffer.hpp), the kernels touch no Python object and keep no global state,
// and results become numpy arrays only after the GIL is back. max_b_matching on inputs of up
// to kInPlaceEntries entries instead reads the caller's arrays with the GIL held throughout.

py::array_t<Index> hopcroft_karp(const CArray<Index>& indptr, const CArray<Index>& indices,
                                 std::int64_t n_right) {
  check_ndim(indptr, "indptr", 1);
  check_ndim(indices, "indices", 1);
  const auto p = private_copy(indptr);
  const auto i = private_copy(indices);
  std::vector<Index> mate;
  {
    py::gil_scoped_release release;
    mate = spare_fast::hopcroft_karp(span_of(p), span_of(i), n_right);
  }
  return to_numpy(std::move(mate));
}

// Inputs up to this many entries are solved in place with the GIL held; larger ones are
// copied and solved with the GIL released.
constexpr py::ssize_t kInPlaceEntries = py::ssize_t{1} << 22;

py::array_t<Index> max_b_matching(const CArray<Index>& indptr, const CArray<Index>& indices,
                                  const CArray<Cost>& capacity) {
  check_ndim(indptr, "indptr", 1);
  check_ndim(indices, "indices", 1);
  check_ndim(capacity, "capacity", 1);
  if (indices.size() <= kInPlaceEntries) {
    // In place, the GIL held throughout: no Python thread can write the arrays between the
    // check and the solve, and the copy of indices, which costs about a quarter of a
    // SPARe-sized solve (100,000 types, 1.4M entries), is saved. Such solves take
    // milliseconds; larger inputs take the copy and release the GIL below.
    return to_numpy(spare_fast::max_b_matching(
        Span<Index>(indptr.data(), static_cast<std::size_t>(indptr.size())),
        Span<Index>(indices.data(), static_cast<std::size_t>(indices.size())),
        Span<Cost>(capacity.data(), static_cast<std::size_t>(capacity.size()))));
  }
  const auto p = private_copy(indptr);
  const auto i = private_copy(indices);
  const auto c = private_copy(capacity);
  std::vector<Index> mate;
  {
    py::gil_scoped_release release;
    mate = spare_fast::max_b_matching(span_of(p), span_of(i), span_of(c));
  }
  return to_numpy(std::move(mate));
}

py::tuple min_cost_flow(std::int64_t n_nodes, const CArray<Index>& tail,
                        const CArray<Index>& head, const CArray<Cost>& capacity,
                        const CArray<Cost>& cost, const CArray<Cost>& supply,
                        std::int32_t method) {
  if (method < 0 || method > 3) {
    throw py::value_error("method = " + std::to_string(method) + " is not in [0, 4)");
  }
  check_ndim(tail, "tail", 1);
  check_ndim(head, "head", 1);
  check_ndim(capacity, "capacity", 1);
  check_ndim(cost, "cost", 1);
  check_ndim(supply, "supply", 1);
  const auto t = private_copy(tail);
  const auto h = private_copy(head);
  const auto c = private_copy(capacity);
  const auto w = private_copy(cost);
  const auto b = private_copy(supply);
  MinCostFlowResult r;
  {
    py::gil_scoped_release release;
    r = spare_fast::min_cost_flow(n_nodes, span_of(t), span_of(h), span_of(c), span_of(w),
                                  span_of(b), static_cast<MinCostFlowMethod>(method));
  }
  return py::make_tuple(r.status, r.total_cost, r.flow_value, to_numpy(std::move(r.flow)));
}

}  // namespace

void register_graph(py::module_& m) {
  py::native_enum<MinCostFlowStatus>(m, "MinCostFlowStatus", "enum.IntEnum",
                                     "Outcome of min_cost_flow.")
      .value("OPTIMAL", MinCostFlowStatus::kOptimal, "every supply routed at minimum cost")
      .value("INFEASIBLE", MinCostFlowStatus::kInfeasible,
             "supplies balance but cannot all be routed; the flow is a min-cost maximum flow")
      .value("UNBALANCED", MinCostFlowStatus::kUnbalanced,
             "supplies do not sum to zero; nothing solved")
      .value("OVERFLOW", MinCostFlowStatus::kOverflow,
             "a total, cost or potential could overflow int64; nothing solved")
      .finalize();
  m.def("_hopcroft_karp", &hopcroft_karp, py::arg("indptr"), py::arg("indices"),
        py::arg("n_right"),
        "Maximum bipartite matching on int32 CSR; see spare_fast.graph.hopcroft_karp.");
  m.def("_max_b_matching", &max_b_matching, py::arg("indptr"), py::arg("indices"),
        py::arg("capacity"),
        "Maximum bipartite b-matching on int32 CSR; see spare_fast.graph.max_b_matching.");
  m.def("_min_cost_flow", &min_cost_flow, py::arg("n_nodes"), py::arg("tail"), py::arg("head"),
        py::arg("capacity"), py::arg("cost"), py::arg("supply"), py::arg("method") = 1,
        "Min-cost flow (method 0 auto, 1 successive shortest paths, 2 network simplex, "
        "3 cost scaling); "
        "returns (status, total_cost, flow_value, flow). See spare_fast.graph.min_cost_flow.");
}

}  // namespace spare_fast::python
