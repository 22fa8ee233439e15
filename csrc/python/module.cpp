// spare_fast._core: the extension module. One register_* function per area, all with one
// signature in one namespace; the C++ library under csrc/include and csrc/src never sees a
// Python header.
//
// Exceptions: std::invalid_argument -> ValueError, std::out_of_range -> IndexError,
// std::runtime_error -> RuntimeError (pybind11's defaults), a failed argument cast ->
// TypeError.
#include <pybind11/pybind11.h>

namespace spare_fast::python {
// Graph kernels (register_graph.cpp).
void register_graph(pybind11::module_& m);
// Decision, Controller (its batch calls included) and solve (register_controller.cpp).
void register_controller(pybind11::module_& m);
// The Monte Carlo kernel (register_montecarlo.cpp).
void register_montecarlo(pybind11::module_& m);
// Layout kernels: numpy-identical permutations (register_layout.cpp).
void register_layout(pybind11::module_& m);
}  // namespace spare_fast::python

PYBIND11_MODULE(_core, m) {
  m.doc() = "spare_fast C++ decision core (graph kernels, the ReCtlr controller, Monte Carlo, layouts)";
  spare_fast::python::register_graph(m);
  spare_fast::python::register_controller(m);
  spare_fast::python::register_montecarlo(m);
  spare_fast::python::register_layout(m);
}
