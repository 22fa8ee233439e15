// The only pybind11 translation unit: it builds spare_fast._core.
//
// The C++ library under csrc/include/spare_fast never sees a Python header. This file converts
// numpy arrays to spans, releases the GIL around the solves and maps C++ exceptions to Python
// ones: std::invalid_argument -> ValueError, std::out_of_range -> IndexError (pybind11's
// defaults), and a pybind11 cast failure -> TypeError. One register_* function per area.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "spare_fast/controller.hpp"

namespace py = pybind11;

namespace {

// ---------------------------------------------------------------------------------------------
// Graph kernels: spare_fast.graph
// ---------------------------------------------------------------------------------------------
void register_graph(py::module_& m) { (void)m; }

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

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "spare_fast C++ decision core (graph kernels and the ReCtlr controller)";
  register_graph(m);
  register_controller(m);
}
