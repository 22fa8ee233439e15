// Bindings of the controller (spare_fast.Controller, spare_fast.solve, spare_fast.Decision).
//
// Thread safety: one controller may be shared by threads. Every call on it, events and reads
// alike, holds the controller's mutex for its whole C++ part, so a call sees the state between
// two events, never during one. The mutex is taken only with the GIL released and is never
// held while waiting for the GIL, so the two locks cannot deadlock. State arrays (stacks,
// assignment, alive, load) are returned as read-only copies taken under the mutex, and
// `_assignment_at(event)` returns the assignment only if no event has happened since `event`.
// Inputs are private copies made while the GIL is held (buffer.hpp).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "buffer.hpp"
#include "py_controller.hpp"
#include "spare_fast/controller.hpp"

namespace spare_fast::python {

namespace {

void check_cost_shape(const std::optional<CArray<Cost>>& move_cost, const py::array& stacks) {
  if (move_cost && (move_cost->ndim() != 2 || move_cost->shape(0) != stacks.shape(0) ||
                    move_cost->shape(1) != stacks.shape(1))) {
    throw py::value_error("move_cost must have the shape of stacks");
  }
}

std::vector<Cost> cost_copy(const std::optional<CArray<Cost>>& move_cost) {
  return move_cost ? private_copy(*move_cost) : std::vector<Cost>();
}

template <class T>
py::array_t<T> state_copy(PyController& self, std::vector<py::ssize_t> shape,
                          const T* (Controller::*get)() const, std::size_t n) {
  std::vector<T> v = locked(self, [&](Controller& c) {
    const T* p = (c.*get)();
    return std::vector<T>(p, p + n);
  });
  return to_numpy(std::move(v), std::move(shape), /*writeable=*/false);
}

// fail and rejoin: the group ids are copied while the GIL is held, then decided under the lock.
template <Decision (Controller::*event)(Span<Index>)>
Decision group_event(PyController& self, const CArray<Index>& groups) {
  check_ndim(groups, "groups", 1);
  const auto g = private_copy(groups);
  return locked(self, [&](Controller& c) { return (c.*event)(span_of(g)); });
}

std::size_t cells(const Controller& c) {
  return static_cast<std::size_t>(c.n_groups()) * static_cast<std::size_t>(c.height());
}

}  // namespace

void register_controller(py::module_& m) {
  py::class_<Decision>(m, "Decision",
                       "One decision of the C++ core (read-only; made by Controller and solve).")
      .def_property_readonly("status", [](const Decision& d) { return static_cast<int>(d.status); })
      .def_readonly("phase", &Decision::phase)
      .def_readonly("depth", &Decision::depth)
      .def_readonly("moves", &Decision::moves)
      .def_readonly("swaps", &Decision::swaps)
      .def_property_readonly("patch",
                             [](py::object self) {
                               const auto& d = self.cast<const Decision&>();
                               const auto k = static_cast<py::ssize_t>(d.patch.size() / 2);
                               return view_of(d.patch.data(), {k, 2}, self);
                             })
      .def_readonly("seconds", &Decision::seconds)
      .def_readonly("full_solve", &Decision::full_solve)
      .def_readonly("event", &Decision::event);

  py::class_<PyController>(m, "Controller")
      .def(py::init([](const CArray<Index>& stacks, const std::optional<CArray<Cost>>& move_cost) {
             check_ndim(stacks, "stacks", 2);
             check_cost_shape(move_cost, stacks);
             // The private copy becomes the controller's layout (moved in, not copied again).
             auto s = private_copy(stacks);
             const auto c = cost_copy(move_cost);
             const auto n = stacks.shape(0);
             const auto h = stacks.shape(1);
             auto self = std::make_unique<PyController>();
             py::gil_scoped_release release;  // validation and the initial solve: copies only
             self->ctl = std::make_unique<Controller>(std::move(s), n, h, span_of(c));
             return self;
           }),
           py::arg("stacks"), py::arg("move_cost") = py::none())
      .def("fail", &group_event<&Controller::fail>, py::arg("groups"))
      .def("rejoin", &group_event<&Controller::rejoin>, py::arg("groups"))
      .def("restart",
           [](PyController& self) { return locked(self, [](Controller& c) { return c.restart(); }); })
      .def(
          "snapshot",
          [](PyController& self, const py::bytes& meta) {
            std::string m = meta;
            std::string s = locked(self, [&](Controller& c) { return c.snapshot(m); });
            return py::bytes(s);
          },
          py::arg("meta") = py::bytes())
      .def_static(
          "restore",
          [](const py::bytes& data) {
            std::string s = data;
            std::string meta;
            auto self = std::make_unique<PyController>();
            {
              py::gil_scoped_release release;  // works on the private string only
              self->ctl = std::make_unique<Controller>(Controller::restore(s, &meta));
            }
            return std::make_tuple(std::move(self), py::bytes(meta));
          },
          py::arg("data"))
      .def(
          "_assignment_at",
          [](PyController& self, std::uint64_t event) {
            std::uint64_t now = 0;
            std::vector<Index> v = locked(self, [&](Controller& c) {
              now = c.events();
              if (now != event) return std::vector<Index>();
              return std::vector<Index>(c.assignment(), c.assignment() + c.n_types());
            });
            if (now != event) {
              throw std::runtime_error(
                  "this decision's assignment is stale: the controller has decided " +
                  std::to_string(now - event) +
                  " more event(s) since; copy decision.assignment right after the call if you "
                  "need to keep it");
            }
            return to_numpy(std::move(v), {static_cast<py::ssize_t>(v.size())}, false);
          },
          py::arg("event"))
      .def("_fail_each", &fail_each_columns, py::arg("groups"), py::arg("stop_at_wipeout") = true,
           "Fail groups one at a time in order; returns (status, depth, moves, swaps, "
           "full_solve, seconds, patch, patch_event). See spare_fast.Controller.fail_each.")
      // Fixed at construction: no lock needed.
      .def_property_readonly("n_groups", [](PyController& s) { return s.ctl->n_groups(); })
      .def_property_readonly("n_types", [](PyController& s) { return s.ctl->n_types(); })
      .def_property_readonly("height", [](PyController& s) { return s.ctl->height(); })
      .def_property_readonly("redundancy", [](PyController& s) { return s.ctl->redundancy(); })
      // Changed by events: read under the mutex.
      .def_property_readonly("depth",
                             [](PyController& s) { return locked(s, [](Controller& c) { return c.depth(); }); })
      .def_property_readonly("n_alive",
                             [](PyController& s) { return locked(s, [](Controller& c) { return c.n_alive(); }); })
      .def_property_readonly("wiped_out",
                             [](PyController& s) { return locked(s, [](Controller& c) { return c.wiped_out(); }); })
      .def_property_readonly("events",
                             [](PyController& s) { return locked(s, [](Controller& c) { return c.events(); }); })
      .def_property_readonly("alive",
                             [](PyController& s) {
                               const auto n = static_cast<std::size_t>(s.ctl->n_groups());
                               py::array a = state_copy<std::uint8_t>(
                                   s, {static_cast<py::ssize_t>(n)}, &Controller::alive, n);
                               return a.view("bool");
                             })
      .def_property_readonly("assignment",
                             [](PyController& s) {
                               const auto n = static_cast<std::size_t>(s.ctl->n_types());
                               return state_copy<Index>(s, {static_cast<py::ssize_t>(n)},
                                                        &Controller::assignment, n);
                             })
      .def_property_readonly("load",
                             [](PyController& s) {
                               const auto n = static_cast<std::size_t>(s.ctl->n_groups());
                               return state_copy<Index>(s, {static_cast<py::ssize_t>(n)},
                                                        &Controller::load, n);
                             })
      .def_property_readonly("stacks",
                             [](PyController& s) {
                               return state_copy<Index>(s, {s.ctl->n_groups(), s.ctl->height()},
                                                        &Controller::stacks, cells(*s.ctl));
                             })
      .def_property_readonly("initial_stacks",
                             [](PyController& s) {
                               return state_copy<Index>(s, {s.ctl->n_groups(), s.ctl->height()},
                                                        &Controller::initial_stacks, cells(*s.ctl));
                             })
      .def_property_readonly("layout_stacks", [](PyController& s) {
        return state_copy<Index>(s, {s.ctl->n_groups(), s.ctl->height()},
                                 &Controller::layout_stacks, cells(*s.ctl));
      });

  m.def(
      "solve",
      [](const CArray<Index>& stacks, const CArray<std::uint8_t>& alive,
         const std::optional<CArray<Cost>>& move_cost) {
        check_ndim(stacks, "stacks", 2);
        check_ndim(alive, "alive", 1);
        check_cost_shape(move_cost, stacks);
        const auto s = private_copy(stacks);
        const auto a = private_copy(alive);
        const auto c = cost_copy(move_cost);
        const auto n = stacks.shape(0);
        const auto h = stacks.shape(1);
        std::vector<Index> assignment;
        std::vector<Index> new_stacks;
        Decision d;
        {
          py::gil_scoped_release release;  // reads the private copies only
          d = Controller::solve(span_of(s), n, h, span_of(a), span_of(c), &assignment,
                                &new_stacks);
        }
        const auto t = static_cast<py::ssize_t>(assignment.size());
        return py::make_tuple(d, to_numpy(std::move(assignment), {t}, false),
                              to_numpy(std::move(new_stacks), {n, h}, false));
      },
      py::arg("stacks"), py::arg("alive"), py::arg("move_cost") = py::none());
}

}  // namespace spare_fast::python
