// Batch controller calls for Python: spare_fast._core.Controller._fail_each (bound in
// register_controller.cpp).
//
// One call decides a whole failure sequence (spare_fast/batch.hpp) and hands the per-event
// columns to numpy without a copy: each array owns its std::vector through a capsule.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "buffer.hpp"
#include "py_controller.hpp"
#include "spare_fast/batch.hpp"

namespace spare_fast::python {

py::tuple fail_each_columns(PyController& self, const CArray<Index>& groups,
                            bool stop_at_wipeout) {
  check_ndim(groups, "groups", 1);
  const Span<Index> ids(groups.data(), static_cast<std::size_t>(groups.size()));
  // Safe without the GIL: `ids` points into a private numpy copy that Controller.fail_each
  // makes and no other thread can reach, kept alive by `groups` until this returns; the
  // controller's memory is C++-owned and guarded by its mutex, and no Python object is
  // touched until the GIL is back.
  FailEachResult r = locked(
      self, [&](Controller& c) { return fail_each(c, ids, stop_at_wipeout); });
  const auto n = static_cast<py::ssize_t>(r.size());
  const auto k = static_cast<py::ssize_t>(r.patch_event.size());
  return py::make_tuple(to_numpy(std::move(r.status), {n}), to_numpy(std::move(r.depth), {n}),
                        to_numpy(std::move(r.moves), {n}), to_numpy(std::move(r.swaps), {n}),
                        to_numpy(std::move(r.full_solve), {n}).view("bool"),
                        to_numpy(std::move(r.seconds), {n}), to_numpy(std::move(r.patch), {k, 2}),
                        to_numpy(std::move(r.patch_event), {k}));
}

}  // namespace spare_fast::python
