// Bindings of the Monte Carlo kernel (spare_fast.montecarlo).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "buffer.hpp"
#include "spare_fast/montecarlo.hpp"

namespace spare_fast::python {

void register_montecarlo(py::module_& m) {
  m.def(
      "_survived_failures",
      [](const CArray<Index>& stacks, Index n_types, std::uint64_t seed, std::int64_t first_trial,
         std::int64_t n_trials, Index threads) {
        check_ndim(stacks, "stacks", 2);
        const auto copy = private_copy(stacks);
        // shape() fits int32 or survived_failures rejects it: check before narrowing.
        if (stacks.shape(0) > INT32_MAX || stacks.shape(1) > INT32_MAX) {
          throw py::value_error("stacks has more than 2**31 - 1 groups or layers");
        }
        const auto n_groups = static_cast<Index>(stacks.shape(0));
        const auto height = static_cast<Index>(stacks.shape(1));
        std::vector<std::int64_t> out;
        {
          // Safe: the kernel reads only the private copy and touches no Python object.
          py::gil_scoped_release release;
          out = survived_failures(span_of(copy), n_groups, height, n_types, seed, first_trial,
                                  n_trials, threads);
        }
        return to_numpy(std::move(out));
      },
      py::arg("stacks"), py::arg("n_types"), py::arg("seed"), py::arg("first_trial"),
      py::arg("n_trials"), py::arg("threads") = 1,
      "Failures survived before the first wipe-out, one entry per trial (see montecarlo.hpp).");
}

}  // namespace spare_fast::python
