// Bindings of the layout kernels (spare_fast.layout).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "buffer.hpp"
#include "spare_fast/permutation.hpp"

namespace spare_fast::python {

void register_layout(py::module_& m) {
  m.def(
      "_pcg64_permutation",
      [](std::uint64_t state_hi, std::uint64_t state_lo, std::uint64_t inc_hi,
         std::uint64_t inc_lo, bool has_uint32, std::uint32_t uinteger, std::int64_t n) {
        Pcg64State st{state_hi, state_lo, inc_hi, inc_lo, has_uint32, uinteger};
        std::vector<std::int64_t> perm;
        {
          // Safe: the kernel reads and writes only C++ values, no Python object.
          py::gil_scoped_release release;
          perm = pcg64_permutation(st, n);
        }
        const auto len = static_cast<py::ssize_t>(perm.size());
        return py::make_tuple(to_numpy(std::move(perm), {len}), st.state_hi, st.state_lo,
                              st.has_uint32, st.uinteger);
      },
      py::arg("state_hi"), py::arg("state_lo"), py::arg("inc_hi"), py::arg("inc_lo"),
      py::arg("has_uint32"), py::arg("uinteger"), py::arg("n"),
      "numpy's Generator.permutation(n) on a PCG64 state, bit for bit (see permutation.hpp); "
      "returns (permutation, state_hi, state_lo, has_uint32, uinteger).");
}

}  // namespace spare_fast::python
