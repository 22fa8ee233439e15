// Batch controller calls for Python: spare_fast._core.Controller._fail_each.
//
// One call decides a whole failure sequence (spare_fast/batch.hpp) and hands the per-event
// columns to numpy without a copy: each array owns its std::vector through a capsule.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "py_controller.hpp"
#include "spare_fast/batch.hpp"

namespace py = pybind11;

namespace {

using spare_fast_python::PyController;

// Owns `v` through a capsule: the array is the vector, no copy. `dtype` reinterprets the
// elements (uint8 as bool) when given.
template <class T>
py::array owned_array(std::vector<T>&& v, std::vector<py::ssize_t> shape,
                      const char* dtype = nullptr) {
  auto* owned = new std::vector<T>(std::move(v));
  py::capsule owner(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  const py::dtype dt = dtype ? py::dtype(dtype) : py::dtype::of<T>();
  return py::array(dt, std::move(shape), {}, owned->data(), owner);
}

py::tuple fail_each(PyController& self,
                    const py::array_t<std::int32_t, py::array::c_style>& groups,
                    bool stop_at_wipeout) {
  if (groups.ndim() != 1) {
    throw py::value_error("groups must be 1-D, got " + std::to_string(groups.ndim()) +
                          " dimensions");
  }
  const spare_fast::Span<std::int32_t> ids(groups.data(),
                                           static_cast<std::size_t>(groups.size()));
  spare_fast::FailEachResult r;
  {
    // Safe without the GIL: `ids` points into a private numpy copy that Controller.fail_each
    // makes and no other thread can reach, kept alive by `groups` until this returns; the
    // controller's memory is C++-owned and guarded by its mutex, and no Python object is
    // touched until the GIL is back.
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(self.mutex);
    r = spare_fast::fail_each(*self.ctl, ids, stop_at_wipeout);
  }
  const auto n = static_cast<py::ssize_t>(r.size());
  const auto k = static_cast<py::ssize_t>(r.patch_event.size());
  return py::make_tuple(owned_array(std::move(r.status), {n}),
                        owned_array(std::move(r.depth), {n}),
                        owned_array(std::move(r.moves), {n}),
                        owned_array(std::move(r.swaps), {n}),
                        owned_array(std::move(r.full_solve), {n}, "bool"),
                        owned_array(std::move(r.seconds), {n}),
                        owned_array(std::move(r.patch), {k, 2}),
                        owned_array(std::move(r.patch_event), {k}));
}

}  // namespace

void register_batch(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<PyController>>(m.attr("Controller"));
  cls.def("_fail_each", &fail_each, py::arg("groups"), py::arg("stop_at_wipeout") = true,
          "Fail groups one at a time in order; returns (status, depth, moves, swaps, "
          "full_solve, seconds, patch, patch_event). See spare_fast.Controller.fail_each.");
}
