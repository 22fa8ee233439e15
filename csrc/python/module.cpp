// spare_fast._core: the extension module. One register_* function per area; the C++ library
// under csrc/include and csrc/src never sees a Python header.
//
// Exceptions: std::invalid_argument -> ValueError, std::out_of_range -> IndexError,
// std::runtime_error -> RuntimeError (pybind11's defaults), a failed argument cast ->
// TypeError.
#include <pybind11/pybind11.h>

#include "py_controller.hpp"

namespace spare_fast::python {
void register_graph(pybind11::module_& m);
void register_controller(pybind11::module_& m);
void register_montecarlo(pybind11::module_& m);
}  // namespace spare_fast::python

PYBIND11_MODULE(_core, m) {
  m.doc() = "spare_fast C++ decision core (graph kernels, the ReCtlr controller, Monte Carlo)";
  spare_fast::python::register_graph(m);
  spare_fast::python::register_controller(m);
  register_batch(m);  // reopens the Controller class: after register_controller
  spare_fast::python::register_montecarlo(m);
}
