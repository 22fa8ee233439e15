// What the controller's binding files share (register_controller.cpp, controller_batch.cpp).
//
// The Python class spare_fast._core.Controller holds the C++ controller plus a mutex: one
// controller driven from several threads stays consistent, and independent controllers never
// contend. register_controller defines the whole class, the batch calls included.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <mutex>

#include "buffer.hpp"
#include "spare_fast/controller.hpp"

namespace spare_fast::python {

struct PyController {
  std::unique_ptr<Controller> ctl;
  std::mutex mutex;
};

// Runs f(controller) with the GIL released and the controller's mutex held. Safe: f touches
// only C++-owned memory (the controller and private copies of the inputs).
template <class F>
auto locked(PyController& self, F&& f) {
  py::gil_scoped_release release;
  std::lock_guard<std::mutex> lock(self.mutex);
  return f(*self.ctl);
}

// Controller._fail_each (controller_batch.cpp): fails `groups` one at a time in order and
// returns the per-event columns (status, depth, moves, swaps, full_solve, seconds, patch,
// patch_event) as numpy arrays over the C++ vectors.
py::tuple fail_each_columns(PyController& self, const CArray<Index>& groups,
                            bool stop_at_wipeout);

}  // namespace spare_fast::python
