// The one numpy-buffer helper of the bindings: how arrays come in and how results go out.
//
// In: `CArray<T>` accepts C-contiguous arrays of T. Without forcecast numpy converts only the
// layout and value-preserving dtypes (int16 -> int32, bool -> uint8); anything else is a
// TypeError. The Python layer (spare_fast/_validation.py) normalises and range-checks first,
// so this is the second line of defence. `private_copy` then copies the data into C++-owned
// memory while the GIL is held: the core runs without the GIL on memory no other thread can
// write, so a caller that mutates its array from another thread can change neither what was
// validated nor what is solved (a copy costs one memcpy against a solve that reads every
// element at least once anyway).
//
// Out: `to_numpy` hands a result vector to numpy without a copy (a capsule owns it);
// `view_of` makes a read-only array over memory that a Python object owns.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "spare_fast/types.hpp"

namespace spare_fast::python {

namespace py = pybind11;

template <class T>
using CArray = py::array_t<T, py::array::c_style>;

// Throws ValueError unless `a` has `ndim` dimensions.
inline void check_ndim(const py::array& a, const char* name, py::ssize_t ndim) {
  if (a.ndim() != ndim) {
    throw py::value_error(std::string(name) + " must be " + std::to_string(ndim) +
                          "-D, got " + std::to_string(a.ndim()) + " dimensions");
  }
}

// A private copy of a C-contiguous array's elements (call with the GIL held).
template <class T>
std::vector<T> private_copy(const CArray<T>& a) {
  return std::vector<T>(a.data(), a.data() + a.size());
}

template <class T>
Span<T> span_of(const std::vector<T>& v) {
  return Span<T>(v.data(), v.size());
}

// Moves `v` into a numpy array of `shape` (no copy); read-only unless `writeable`.
template <class T>
py::array_t<T> to_numpy(std::vector<T>&& v, std::vector<py::ssize_t> shape,
                        bool writeable = true) {
  auto* owned = new std::vector<T>(std::move(v));
  py::capsule owner(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  py::array_t<T> a(std::move(shape), owned->data(), owner);
  if (!writeable) py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

template <class T>
py::array_t<T> to_numpy(std::vector<T>&& v) {
  const auto n = static_cast<py::ssize_t>(v.size());
  return to_numpy(std::move(v), {n});
}

// A read-only array over `data`, which `owner` keeps alive; `dtype` overrides T's dtype (a
// uint8 flag array shown as bool, say).
template <class T>
py::array view_of(const T* data, std::vector<py::ssize_t> shape, py::handle owner,
                  const char* dtype = nullptr) {
  py::array a = dtype ? py::array(py::dtype(dtype), std::move(shape), {}, data, owner)
                      : py::array(py::dtype::of<T>(), std::move(shape), {}, data, owner);
  py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

}  // namespace spare_fast::python
