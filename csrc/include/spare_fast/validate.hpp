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

#include "spare_fast/types.hpp"

namespace spare_fast {

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
void check_indptr(Span<Index> indptr, std::size_t nnz);

// Every indices[k] in [0, n_cols).
void check_indices(Span<Index> indices, std::int64_t n_cols);

// Sizes that must fit int32 ids.
void check_fits_int32(const char* what, std::int64_t value);

// What check_stacks learns about a valid stacks array.
struct StacksInfo {
  Index n_groups = 0;
  Index height = 0;
  Index n_types = 0;     // max id + 1 (or the n_types the caller gave)
  Index redundancy = 0;  // holders per type (the holder count of stacks[0, 0])
};

// The one check of the stacks invariants, shared by the Controller, the stateless solve and
// the Monte Carlo kernel. stacks is row-major (n_groups, height), n_groups >= 1, height >= 1,
// n_groups * height fits int32. Every id is in [0, n_types) where n_types is the caller's
// value, or, when n_types < 0, max id + 1, which must be at most n_groups * height (a type
// needs a cell): the range is checked before any array is sized by an id, so a one-cell input
// holding 2**30 costs nothing. Types are distinct within a stack; every type has a holder;
// with `equal_counts` every type is held equally often. Throws std::invalid_argument naming
// the first bad cell ("stacks[17, 3] = 42 is not in [0, 40)"). O(n_groups * height) time,
// O(n_types) memory.
StacksInfo check_stacks(Span<Index> stacks, std::int64_t n_groups, std::int64_t height,
                        std::int64_t n_types, bool equal_counts);

// Validates per-(group, layer) move costs for `cells` cells: empty (all ones) or `cells`
// values in [0, kMaxMoveCost], with cells * max(cost) <= kMaxTotalCost (types.hpp), which
// bounds every total the controller forms. Returns true when the costs are all ones.
bool check_move_cost(Span<Cost> move_cost, std::size_t cells, Index height);

}  // namespace spare_fast
