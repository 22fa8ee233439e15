// The only pybind11 translation unit: it builds spare_fast._core.
//
// The C++ library under csrc/include/spare_fast never sees a Python header. This file converts
// numpy arrays to spans, releases the GIL around the solves and maps C++ exceptions to Python
// ones: std::invalid_argument -> ValueError, std::out_of_range -> IndexError (pybind11's
// defaults), and a pybind11 cast failure -> TypeError. One register_* function per area.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

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

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "spare_fast C++ decision core (graph kernels and the ReCtlr controller)";
  register_graph(m);
  register_controller(m);
}
