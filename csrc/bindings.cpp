// The only pybind11 translation unit: it builds spare_fast._core.
//
// The C++ library under csrc/include/spare_fast never sees a Python header. This file converts
// numpy arrays to spans, releases the GIL around the solves and maps C++ exceptions to Python
// ones: std::invalid_argument -> ValueError, std::out_of_range -> IndexError (pybind11's
// defaults), and a pybind11 cast failure -> TypeError. One register_* function per area.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "spare_fast/montecarlo.hpp"

namespace py = pybind11;

namespace {

// ---------------------------------------------------------------------------------------------
// Graph kernels: spare_fast.graph
// ---------------------------------------------------------------------------------------------
void register_graph(py::module_& m) { (void)m; }

// ---------------------------------------------------------------------------------------------
// Controller: spare_fast.Controller, spare_fast.solve
// ---------------------------------------------------------------------------------------------
void register_controller(py::module_& m) { (void)m; }

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
         std::int64_t n_trials) {
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
                                              n_trials);
        }
        return vector_to_array(std::move(out));
      },
      py::arg("stacks"), py::arg("n_types"), py::arg("seed"), py::arg("first_trial"),
      py::arg("n_trials"),
      "Failures survived before the first wipe-out, one entry per trial (see montecarlo.hpp).");
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "spare_fast C++ decision core (graph kernels and the ReCtlr controller)";
  register_graph(m);
  register_controller(m);
  register_montecarlo(m);
}
