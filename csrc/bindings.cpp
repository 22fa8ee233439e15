// The only pybind11 translation unit: it builds spare_fast._core.
//
// The C++ library under csrc/include/spare_fast never sees a Python header. This file converts
// numpy arrays to spans, releases the GIL around the solves and maps C++ exceptions to Python
// ones: std::invalid_argument -> ValueError, std::out_of_range -> IndexError (pybind11's
// defaults), and a pybind11 cast failure -> TypeError. One register_* function per area.
#include <pybind11/native_enum.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "spare_fast/controller.hpp"
#include "spare_fast/graph.hpp"
#include "spare_fast/montecarlo.hpp"
#include "spare_fast/network_simplex.hpp"

namespace py = pybind11;

namespace {

// ---------------------------------------------------------------------------------------------
// Graph kernels: spare_fast.graph
// ---------------------------------------------------------------------------------------------
namespace graph_bindings {

namespace sf = spare_fast;

// No forcecast: numpy converts only layout and value-preserving dtypes (int16 -> int32, say);
// anything else is a TypeError. The Python layer (spare_fast.graph) normalises and range-checks
// first, so arrays that already are C-contiguous int32/int64 pass through without a copy.
template <class T>
using CArray = py::array_t<T, py::array::c_style>;

template <class T>
sf::Span<T> span_1d(const char* name, const CArray<T>& a) {
  if (a.ndim() != 1) {
    throw std::invalid_argument(std::string(name) + " must be 1-D, got " +
                                std::to_string(a.ndim()) + " dimensions");
  }
  return sf::Span<T>(a.data(), static_cast<std::size_t>(a.size()));
}

// Moves a result vector into a capsule that numpy owns: the array is the vector, no copy.
template <class T>
py::array_t<T> give_to_numpy(std::vector<T>&& v) {
  auto* owned = new std::vector<T>(std::move(v));
  py::capsule owner(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>(static_cast<py::ssize_t>(owned->size()), owned->data(), owner);
}

// Why releasing the GIL around the solves is safe: every Python object is converted before the
// release (the spans point into numpy buffers that the CArray arguments keep alive and
// unresized until the function returns), the kernels touch no Python object and keep no
// global state, and results are handed to numpy only after the GIL is back. As with any
// nogil numpy routine, callers must not write to the input arrays from another thread while
// a solve runs.

py::array_t<std::int32_t> hopcroft_karp(const CArray<std::int32_t>& indptr,
                                        const CArray<std::int32_t>& indices,
                                        std::int64_t n_right) {
  const auto p = span_1d("indptr", indptr);
  const auto i = span_1d("indices", indices);
  std::vector<std::int32_t> mate;
  {
    py::gil_scoped_release release;
    mate = sf::hopcroft_karp(p, i, n_right);
  }
  return give_to_numpy(std::move(mate));
}

py::array_t<std::int32_t> max_b_matching(const CArray<std::int32_t>& indptr,
                                         const CArray<std::int32_t>& indices,
                                         const CArray<std::int64_t>& capacity) {
  const auto p = span_1d("indptr", indptr);
  const auto i = span_1d("indices", indices);
  const auto c = span_1d("capacity", capacity);
  std::vector<std::int32_t> mate;
  {
    py::gil_scoped_release release;
    mate = sf::max_b_matching(p, i, c);
  }
  return give_to_numpy(std::move(mate));
}

py::tuple min_cost_flow(std::int64_t n_nodes, const CArray<std::int32_t>& tail,
                        const CArray<std::int32_t>& head, const CArray<std::int64_t>& capacity,
                        const CArray<std::int64_t>& cost, const CArray<std::int64_t>& supply,
                        std::int32_t method) {
  if (method < 0 || method > 2) {
    throw std::invalid_argument("method = " + std::to_string(method) + " is not in [0, 3)");
  }
  const auto t = span_1d("tail", tail);
  const auto h = span_1d("head", head);
  const auto c = span_1d("capacity", capacity);
  const auto w = span_1d("cost", cost);
  const auto b = span_1d("supply", supply);
  sf::MinCostFlowResult r;
  {
    py::gil_scoped_release release;
    r = sf::min_cost_flow(n_nodes, t, h, c, w, b, static_cast<sf::MinCostFlowMethod>(method));
  }
  return py::make_tuple(r.status, r.total_cost, r.flow_value, give_to_numpy(std::move(r.flow)));
}

}  // namespace graph_bindings

void register_graph(py::module_& m) {
  namespace gb = graph_bindings;
  py::native_enum<spare_fast::MinCostFlowStatus>(m, "MinCostFlowStatus", "enum.IntEnum",
                                                 "Outcome of min_cost_flow.")
      .value("OPTIMAL", spare_fast::MinCostFlowStatus::kOptimal,
             "every supply routed at minimum cost")
      .value("INFEASIBLE", spare_fast::MinCostFlowStatus::kInfeasible,
             "supplies balance but cannot all be routed; the flow is a min-cost maximum flow")
      .value("UNBALANCED", spare_fast::MinCostFlowStatus::kUnbalanced,
             "supplies do not sum to zero; nothing solved")
      .value("OVERFLOW", spare_fast::MinCostFlowStatus::kOverflow,
             "a total, cost or potential could overflow int64; nothing solved")
      .finalize();
  m.def("_hopcroft_karp", &gb::hopcroft_karp, py::arg("indptr"), py::arg("indices"),
        py::arg("n_right"),
        "Maximum bipartite matching on int32 CSR; see spare_fast.graph.hopcroft_karp.");
  m.def("_max_b_matching", &gb::max_b_matching, py::arg("indptr"), py::arg("indices"),
        py::arg("capacity"),
        "Maximum bipartite b-matching on int32 CSR; see spare_fast.graph.max_b_matching.");
  m.def("_min_cost_flow", &gb::min_cost_flow, py::arg("n_nodes"), py::arg("tail"),
        py::arg("head"), py::arg("capacity"), py::arg("cost"), py::arg("supply"),
        py::arg("method") = 1,
        "Min-cost flow (method 0 auto, 1 successive shortest paths, 2 network simplex); "
        "returns (status, total_cost, flow_value, flow). See "
        "spare_fast.graph.min_cost_flow.");
}

// ---------------------------------------------------------------------------------------------
// Controller: spare_fast.Controller, spare_fast.solve
// ---------------------------------------------------------------------------------------------
using spare_fast::Controller;
using spare_fast::Decision;
using spare_fast::Span;

using I32Array = py::array_t<std::int32_t, py::array::c_style | py::array::forcecast>;
using I64Array = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;
using U8Array = py::array_t<std::uint8_t, py::array::c_style | py::array::forcecast>;

// Hands a vector to numpy without copying: the capsule owns it.
template <class T>
py::array_t<T> vector_to_array(std::vector<T>&& v, std::vector<py::ssize_t> shape) {
  auto* owned = new std::vector<T>(std::move(v));
  py::capsule free_when_done(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>(shape, owned->data(), free_when_done);
}

// A read-only numpy view over C++-owned memory, kept alive by `owner`.
template <class T>
py::array readonly_view(const T* data, std::vector<py::ssize_t> shape, py::handle owner,
                        const char* dtype = nullptr) {
  py::array a = dtype ? py::array(py::dtype(dtype), shape, {}, data, owner)
                      : py::array(py::dtype::of<T>(), shape, {}, data, owner);
  py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

Span<std::int32_t> span_of(const I32Array& a) {
  return Span<std::int32_t>(a.data(), static_cast<std::size_t>(a.size()));
}
Span<std::int64_t> span_of(const I64Array& a) {
  return Span<std::int64_t>(a.data(), static_cast<std::size_t>(a.size()));
}

void check_2d(const py::array& a, const char* name) {
  if (a.ndim() != 2) {
    throw py::value_error(std::string(name) + " must be 2-D (n_groups, height), got " +
                          std::to_string(a.ndim()) + " dimensions");
  }
}

// The controller plus a mutex: one controller driven from several threads stays consistent,
// and independent controllers never contend.
struct PyController {
  std::unique_ptr<Controller> ctl;
  std::mutex mutex;
};

py::tuple decision_tuple(Decision&& d) {
  const auto k = static_cast<py::ssize_t>(d.patch.size() / 2);
  return py::make_tuple(static_cast<int>(d.status), d.phase, d.depth, d.moves, d.swaps,
                        vector_to_array(std::move(d.patch), {k, 2}), d.seconds, d.full_solve);
}

template <class F>
py::tuple locked_event(PyController& self, F&& f) {
  Decision d;
  {
    // Safe without the GIL: the controller's memory is C++-owned and guarded by the mutex,
    // and the group ids are read from an array the caller keeps referenced.
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(self.mutex);
    d = f(*self.ctl);
  }
  return decision_tuple(std::move(d));
}

void register_controller(py::module_& m) {
  py::class_<PyController>(m, "Controller")
      .def(py::init([](const I32Array& stacks, const std::optional<I64Array>& move_cost) {
             check_2d(stacks, "stacks");
             if (move_cost && (move_cost->ndim() != 2 || move_cost->shape(0) != stacks.shape(0) ||
                               move_cost->shape(1) != stacks.shape(1))) {
               throw py::value_error("move_cost must have the shape of stacks");
             }
             auto self = std::make_unique<PyController>();
             const Span<std::int64_t> cost = move_cost ? span_of(*move_cost) : Span<std::int64_t>();
             py::gil_scoped_release release;  // validation and the initial solve touch no Python
             self->ctl = std::make_unique<Controller>(span_of(stacks), stacks.shape(0),
                                                      stacks.shape(1), cost);
             return self;
           }),
           py::arg("stacks"), py::arg("move_cost") = py::none())
      .def("fail",
           [](PyController& self, const I32Array& groups) {
             return locked_event(self, [&](Controller& c) { return c.fail(span_of(groups)); });
           })
      .def("rejoin",
           [](PyController& self, const I32Array& groups) {
             return locked_event(self, [&](Controller& c) { return c.rejoin(span_of(groups)); });
           })
      .def("restart",
           [](PyController& self) {
             return locked_event(self, [](Controller& c) { return c.restart(); });
           })
      .def("snapshot",
           [](PyController& self) {
             std::string s;
             {
               py::gil_scoped_release release;
               std::lock_guard<std::mutex> lock(self.mutex);
               s = self.ctl->snapshot();
             }
             return py::bytes(s);
           })
      .def_static("restore",
                  [](const py::bytes& data) {
                    std::string s = data;
                    auto self = std::make_unique<PyController>();
                    py::gil_scoped_release release;
                    self->ctl = std::make_unique<Controller>(Controller::restore(s));
                    return self;
                  })
      .def_property_readonly("n_groups", [](PyController& s) { return s.ctl->n_groups(); })
      .def_property_readonly("n_types", [](PyController& s) { return s.ctl->n_types(); })
      .def_property_readonly("height", [](PyController& s) { return s.ctl->height(); })
      .def_property_readonly("redundancy", [](PyController& s) { return s.ctl->redundancy(); })
      .def_property_readonly("depth", [](PyController& s) { return s.ctl->depth(); })
      .def_property_readonly("n_alive", [](PyController& s) { return s.ctl->n_alive(); })
      .def_property_readonly("wiped_out", [](PyController& s) { return s.ctl->wiped_out(); })
      .def_property_readonly("events", [](PyController& s) { return s.ctl->events(); })
      .def_property_readonly("alive",
                             [](py::object self) {
                               auto& s = self.cast<PyController&>();
                               return readonly_view(s.ctl->alive(), {s.ctl->n_groups()}, self,
                                                    "bool");
                             })
      .def_property_readonly("assignment",
                             [](py::object self) {
                               auto& s = self.cast<PyController&>();
                               return readonly_view(s.ctl->assignment(), {s.ctl->n_types()}, self);
                             })
      .def_property_readonly("load",
                             [](py::object self) {
                               auto& s = self.cast<PyController&>();
                               return readonly_view(s.ctl->load(), {s.ctl->n_groups()}, self);
                             })
      .def_property_readonly("stacks",
                             [](py::object self) {
                               auto& s = self.cast<PyController&>();
                               return readonly_view(s.ctl->stacks(),
                                                    {s.ctl->n_groups(), s.ctl->height()}, self);
                             })
      .def_property_readonly("initial_stacks", [](py::object self) {
        auto& s = self.cast<PyController&>();
        return readonly_view(s.ctl->initial_stacks(), {s.ctl->n_groups(), s.ctl->height()}, self);
      });

  m.def(
      "solve",
      [](const I32Array& stacks, const U8Array& alive, const std::optional<I64Array>& move_cost) {
        check_2d(stacks, "stacks");
        if (alive.ndim() != 1) throw py::value_error("alive must be 1-D");
        if (move_cost && (move_cost->ndim() != 2 || move_cost->shape(0) != stacks.shape(0) ||
                          move_cost->shape(1) != stacks.shape(1))) {
          throw py::value_error("move_cost must have the shape of stacks");
        }
        std::vector<std::int32_t> assignment;
        std::vector<std::int32_t> new_stacks;
        Decision d;
        {
          py::gil_scoped_release release;  // arrays stay referenced by the caller's frame
          d = Controller::solve(
              span_of(stacks), stacks.shape(0), stacks.shape(1),
              Span<std::uint8_t>(alive.data(), static_cast<std::size_t>(alive.size())),
              move_cost ? span_of(*move_cost) : Span<std::int64_t>(), &assignment, &new_stacks);
        }
        const auto t = static_cast<py::ssize_t>(assignment.size());
        py::tuple dec = decision_tuple(std::move(d));
        return py::make_tuple(dec, vector_to_array(std::move(assignment), {t}),
                              vector_to_array(std::move(new_stacks),
                                              {stacks.shape(0), stacks.shape(1)}));
      },
      py::arg("stacks"), py::arg("alive"), py::arg("move_cost") = py::none());
}

// ---------------------------------------------------------------------------------------------
// Monte Carlo: spare_fast.montecarlo
// ---------------------------------------------------------------------------------------------
// Hands a std::vector to numpy without a copy: the array owns the vector through a capsule.
py::array_t<std::int64_t> vector_to_array(std::vector<std::int64_t>&& values) {
  auto* owned = new std::vector<std::int64_t>(std::move(values));
  py::capsule owner(owned, [](void* p) { delete static_cast<std::vector<std::int64_t>*>(p); });
  return py::array_t<std::int64_t>({static_cast<py::ssize_t>(owned->size())}, owned->data(),
                                   owner);
}

void register_montecarlo(py::module_& m) {
  m.def(
      "_survived_failures",
      [](const py::array_t<std::int32_t, py::array::c_style | py::array::forcecast>& stacks,
         std::int32_t n_types, std::uint64_t seed, std::int64_t first_trial,
         std::int64_t n_trials, std::int32_t threads) {
        if (stacks.ndim() != 2) {
          throw py::value_error("stacks must be 2-D (n_groups, height), got " +
                                std::to_string(stacks.ndim()) + " dimensions");
        }
        const auto n_groups = static_cast<std::int32_t>(stacks.shape(0));
        const auto height = static_cast<std::int32_t>(stacks.shape(1));
        const spare_fast::Span<std::int32_t> view(stacks.data(),
                                                  static_cast<std::size_t>(stacks.size()));
        std::vector<std::int64_t> out;
        {
          // Safe: the kernel reads only `view`, whose buffer `stacks` keeps alive, and touches
          // no Python object.
          py::gil_scoped_release release;
          out = spare_fast::survived_failures(view, n_groups, height, n_types, seed, first_trial,
                                              n_trials, threads);
        }
        return vector_to_array(std::move(out));
      },
      py::arg("stacks"), py::arg("n_types"), py::arg("seed"), py::arg("first_trial"),
      py::arg("n_trials"), py::arg("threads") = 1,
      "Failures survived before the first wipe-out, one entry per trial (see montecarlo.hpp).");
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "spare_fast C++ decision core (graph kernels and the ReCtlr controller)";
  register_graph(m);
  register_controller(m);
  register_montecarlo(m);
}
