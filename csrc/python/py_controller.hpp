// What the binding files share about spare_fast._core.Controller.
//
// The Python class holds the C++ controller plus a mutex: one controller driven from several
// threads stays consistent, and independent controllers never contend. The type lives in a
// named namespace (not an anonymous one) so that every binding file that reopens the class
// sees the same C++ type.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <mutex>

#include "spare_fast/controller.hpp"

namespace spare_fast_python {

struct PyController {
  std::unique_ptr<spare_fast::Controller> ctl;
  std::mutex mutex;
};

}  // namespace spare_fast_python

// Adds Controller._fail_each (csrc/python/register_batch.cpp); call after the Controller class
// is registered.
void register_batch(pybind11::module_& m);
