#include "spare_fast/validate.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <vector>

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
  // Branch-free pass first (it vectorises, so validating millions of ids costs a fraction of
  // a millisecond); the naming loop below only runs when something is out of range. An OR of
  // comparisons rather than a running maximum: baseline x86-64 (SSE2) has no unsigned 32-bit
  // max instruction, and the maximum version runs about three times slower there.
  if (n_cols > 0 && n_cols <= std::numeric_limits<std::uint32_t>::max()) {
    const auto limit = static_cast<std::uint32_t>(n_cols);
    std::uint32_t bad = 0;  // as unsigned, negative ids are huge: one comparison finds both
    const std::int32_t* data = indices.data;
    for (std::size_t k = 0; k < indices.size; ++k) {
      bad |= static_cast<std::uint32_t>(static_cast<std::uint32_t>(data[k]) >= limit);
    }
    if (bad == 0) return;
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

StacksInfo check_stacks(Span<Index> stacks, std::int64_t n_groups, std::int64_t height,
                        std::int64_t n_types, bool equal_counts) {
  if (n_groups < 1) {
    throw std::invalid_argument("n_groups = " + std::to_string(n_groups) + " must be >= 1");
  }
  if (height < 1) {
    throw std::invalid_argument("height = " + std::to_string(height) + " must be >= 1");
  }
  check_fits_int32("n_groups", n_groups);
  check_fits_int32("height", height);
  // Both factors fit int32, so the product fits int64.
  check_fits_int32("n_groups * height", n_groups * height);
  const auto cells = static_cast<std::size_t>(n_groups * height);
  check_length("stacks", stacks.size, cells);
  const auto h = static_cast<std::size_t>(height);
  // Ids are bounded before anything is sized by them: every type needs a cell, so a valid
  // n_types never exceeds the number of cells.
  const bool derive = n_types < 0;
  const std::int64_t bound = derive ? static_cast<std::int64_t>(cells) : n_types;
  if (!derive && (n_types < 1 || n_types > static_cast<std::int64_t>(cells))) {
    throw std::invalid_argument("n_types = " + std::to_string(n_types) + " is not in [1, " +
                                std::to_string(cells) + "] (n_groups * height)");
  }
  Index max_type = -1;
  for (std::size_t c = 0; c < cells; ++c) {
    const Index t = stacks[c];
    if (t < 0 || t >= bound) {
      throw std::out_of_range(index_name("stacks", c / h, c % h) + " = " + std::to_string(t) +
                                  " is not in [0, " + std::to_string(bound) + ")" +
                                  (derive ? " (a type id is below n_groups * height)" : ""));
    }
    max_type = std::max(max_type, t);
  }
  StacksInfo info;
  info.n_groups = static_cast<Index>(n_groups);
  info.height = static_cast<Index>(height);
  info.n_types = derive ? max_type + 1 : static_cast<Index>(n_types);
  const auto types = static_cast<std::size_t>(info.n_types);
  // Types distinct within each stack: stamp each type with the last row that held it.
  std::vector<Index> seen_row(types, -1);
  std::vector<Index> seen_layer(types, -1);
  std::vector<Index> count(types, 0);
  for (std::size_t g = 0; g < static_cast<std::size_t>(n_groups); ++g) {
    for (std::size_t l = 0; l < h; ++l) {
      const auto t = static_cast<std::size_t>(stacks[g * h + l]);
      if (seen_row[t] == static_cast<Index>(g)) {
        throw std::invalid_argument(index_name("stacks", g, l) + " = " + std::to_string(t) +
                                    " repeats " +
                                    index_name("stacks", g, static_cast<std::size_t>(seen_layer[t])) +
                                    ": types must be distinct within a stack");
      }
      seen_row[t] = static_cast<Index>(g);
      seen_layer[t] = static_cast<Index>(l);
      ++count[t];
    }
  }
  const Index r = count[static_cast<std::size_t>(stacks[0])];
  info.redundancy = r;
  for (std::size_t t = 0; t < types; ++t) {
    const Index ct = count[t];
    if (ct == 0) {
      throw std::invalid_argument("type " + std::to_string(t) +
                                  " is held by no group (types must be 0.." +
                                  std::to_string(info.n_types - 1) + ", each held at least once)");
    }
    if (!equal_counts || ct == r) continue;
    for (std::size_t c = 0; c < cells; ++c) {
      if (static_cast<std::size_t>(stacks[c]) == t) {
        throw std::invalid_argument(
            index_name("stacks", c / h, c % h) + " = " + std::to_string(t) + ": type " +
            std::to_string(t) + " is held " + std::to_string(ct) + " times, but type " +
            std::to_string(stacks[0]) + " is held " + std::to_string(r) +
            " times; every type must be held equally often");
      }
    }
  }
  return info;
}

bool check_move_cost(Span<Cost> move_cost, std::size_t cells, Index height) {
  if (move_cost.empty()) return true;
  check_length("move_cost", move_cost.size, cells);
  const auto h = static_cast<std::size_t>(height);
  Cost max_cost = 0;
  bool unit = true;
  for (std::size_t c = 0; c < cells; ++c) {
    const Cost v = move_cost[c];
    if (v < 0 || v > kMaxMoveCost) {
      throw std::invalid_argument(index_name("move_cost", c / h, c % h) + " = " +
                                  std::to_string(v) + " is not in [0, 2**40]");
    }
    max_cost = std::max(max_cost, v);
    if (v != 1) unit = false;
  }
  // cells < 2**31 and max_cost <= 2**40: the product fits int64 (< 2**71 would not, so divide).
  if (max_cost > 0 && static_cast<Cost>(cells) > kMaxTotalCost / max_cost) {
    throw std::invalid_argument(
        "move_cost: n_groups * height * max(move_cost) = " + std::to_string(cells) + " * " +
        std::to_string(max_cost) + " exceeds 2**56, the bound that keeps every total cost and "
        "search distance from overflowing int64; scale the costs down");
  }
  return unit;
}

}  // namespace spare_fast
