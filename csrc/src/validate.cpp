#include "spare_fast/validate.hpp"

#include <limits>
#include <stdexcept>

namespace spare_fast {

std::string index_name(const char* name, std::size_t i) {
  return std::string(name) + "[" + std::to_string(i) + "]";
}

std::string index_name(const char* name, std::size_t i, std::size_t j) {
  return std::string(name) + "[" + std::to_string(i) + ", " + std::to_string(j) + "]";
}

void check_range(const std::string& what, std::int64_t value, std::int64_t lo, std::int64_t hi) {
  if (value < lo || value >= hi) {
    throw std::out_of_range(what + " = " + std::to_string(value) + " is not in [" +
                            std::to_string(lo) + ", " + std::to_string(hi) + ")");
  }
}

void check_nonnegative(const std::string& what, std::int64_t value) {
  if (value < 0) {
    throw std::invalid_argument(what + " = " + std::to_string(value) + " must be >= 0");
  }
}

void check_length(const char* what, std::size_t n, std::size_t expected) {
  if (n != expected) {
    throw std::invalid_argument(std::string(what) + " has length " + std::to_string(n) +
                                ", expected " + std::to_string(expected));
  }
}

void check_indptr(Span<std::int32_t> indptr, std::size_t nnz) {
  if (indptr.size == 0) {
    throw std::invalid_argument("indptr is empty; it needs n_rows + 1 >= 1 entries");
  }
  if (indptr[0] != 0) {
    throw std::invalid_argument("indptr[0] = " + std::to_string(indptr[0]) + " must be 0");
  }
  for (std::size_t i = 1; i < indptr.size; ++i) {
    if (indptr[i] < indptr[i - 1]) {
      throw std::invalid_argument(index_name("indptr", i) + " = " + std::to_string(indptr[i]) +
                                  " is smaller than " + index_name("indptr", i - 1) + " = " +
                                  std::to_string(indptr[i - 1]) + "; indptr must be nondecreasing");
    }
  }
  const std::int64_t last = indptr[indptr.size - 1];
  if (last != static_cast<std::int64_t>(nnz)) {
    throw std::invalid_argument(index_name("indptr", indptr.size - 1) + " = " +
                                std::to_string(last) + " does not match len(indices) = " +
                                std::to_string(nnz));
  }
}

void check_indices(Span<std::int32_t> indices, std::int64_t n_cols) {
  // Branch-free pass first (it vectorises, so validating millions of ids costs well under a
  // millisecond); the naming loop below only runs when something is out of range.
  if (n_cols > 0 && n_cols <= std::numeric_limits<std::uint32_t>::max()) {
    const auto limit = static_cast<std::uint32_t>(n_cols);
    std::uint32_t largest = 0;  // as unsigned, negative ids are huge: one max finds both
    const std::int32_t* data = indices.data;
    for (std::size_t k = 0; k < indices.size; ++k) {
      const auto v = static_cast<std::uint32_t>(data[k]);
      largest = v > largest ? v : largest;
    }
    if (largest < limit) return;
  }
  for (std::size_t k = 0; k < indices.size; ++k) {
    if (indices[k] < 0 || indices[k] >= n_cols) {
      check_range(index_name("indices", k), indices[k], 0, n_cols);
    }
  }
}

void check_fits_int32(const char* what, std::int64_t value) {
  if (value < 0 || value > std::numeric_limits<std::int32_t>::max()) {
    throw std::invalid_argument(std::string(what) + " = " + std::to_string(value) +
                                " does not fit int32 ids");
  }
}

}  // namespace spare_fast
