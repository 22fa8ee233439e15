// The vocabulary types of the decision core, named once.
//
// Ids (groups, types, layers, graph vertices and arcs) are `Index` = int32: every id array
// crosses the Python boundary as int32 and halves the memory of int64 ids. Costs,
// capacities, supplies, flows and totals are `Cost` = int64. Inputs are read through `Span`,
// a read-only view of a contiguous array (a tiny std::span stand-in for C++17).
#pragma once

#include <cstddef>
#include <cstdint>

namespace spare_fast {

using Index = std::int32_t;
using Cost = std::int64_t;

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

// The limits the controller accepts (checked before any allocation; see validate.hpp).
// Each move cost is at most kMaxMoveCost, and n_groups * height * max(move_cost) is at most
// kMaxTotalCost, so every total and every shortest-path distance of the searches (bounded by a
// small multiple of that product) stays far below the searches' infinity (int64 max / 4).
constexpr Cost kMaxMoveCost = Cost{1} << 40;
constexpr Cost kMaxTotalCost = Cost{1} << 56;

}  // namespace spare_fast
