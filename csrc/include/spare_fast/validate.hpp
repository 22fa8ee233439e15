// Input validation shared by every kernel and the controller.
//
// Every public entry point validates its whole input before it does any work, so that a
// rejected call changes nothing. Errors name the offending position and value, in the form
// "indices[17] = 42 is not in [0, 40)": std::invalid_argument for bad values or shapes,
// std::out_of_range for ids out of range (the bindings turn them into ValueError and IndexError).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace spare_fast {

// A read-only view of a contiguous array (a tiny std::span stand-in for C++17).
template <class T>
struct Span {
  const T* data = nullptr;
  std::size_t size = 0;
  Span() = default;
  Span(const T* d, std::size_t n) : data(d), size(n) {}
  const T& operator[](std::size_t i) const { return data[i]; }
  const T* begin() const { return data; }
  const T* end() const { return data + size; }
  bool empty() const { return size == 0; }
};

// "name[i]" and "name[i, j]" for error messages.
std::string index_name(const char* name, std::size_t i);
std::string index_name(const char* name, std::size_t i, std::size_t j);

// Throws std::out_of_range "<what> = value is not in [lo, hi)" unless lo <= value < hi.
void check_range(const std::string& what, std::int64_t value, std::int64_t lo, std::int64_t hi);

// Throws std::invalid_argument "<what> = value must be >= 0" when value < 0.
void check_nonnegative(const std::string& what, std::int64_t value);

// Throws std::invalid_argument "<what> has length n, expected m" when n != m.
void check_length(const char* what, std::size_t n, std::size_t expected);

// Validates a CSR row pointer: length n_rows + 1, indptr[0] == 0, nondecreasing, and
// indptr[n_rows] == nnz. Names the first violation.
void check_indptr(Span<std::int32_t> indptr, std::size_t nnz);

// Every indices[k] in [0, n_cols).
void check_indices(Span<std::int32_t> indices, std::int64_t n_cols);

// Sizes that must fit int32 ids.
void check_fits_int32(const char* what, std::int64_t value);

}  // namespace spare_fast
