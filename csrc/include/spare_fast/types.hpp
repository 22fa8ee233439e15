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

// Exact a / d for 0 <= a < 2**31 and a divisor d >= 1 fixed at construction, by one multiply
// and one shift: with L = ceil(log2 d), k = 31 + L and m = ceil(2**k / d), floor(a / d) =
// (a * m) >> k, because a * (m - 2**k / d) / 2**k < 2**31 / 2**(31 + L) <= 1 / d keeps the
// error below the gap to the next integer (the round-up method: T. Granlund, P. L. Montgomery,
// "Division by invariant integers using multiplication", PLDI 1994). m <= 2**32, so the product
// fits 64 bits. The controller divides cell ids (group * height + layer) by the height with it
// in its searches, where a hardware division would cost several times more.
class Divider {
 public:
  Divider() = default;
  explicit Divider(std::uint32_t d) {
    unsigned lg = 0;
    while ((std::uint64_t{1} << lg) < d) ++lg;
    shift_ = 31 + lg;
    mul_ = ((std::uint64_t{1} << shift_) + d - 1) / d;
  }
  std::int32_t quotient(std::int32_t a) const {
    return static_cast<std::int32_t>((static_cast<std::uint64_t>(a) * mul_) >> shift_);
  }

 private:
  std::uint64_t mul_ = std::uint64_t{1} << 31;
  unsigned shift_ = 31;
};

// The index of the lowest set bit of m != 0.
inline std::int32_t lowest_bit(std::uint64_t m) {
#if defined(__GNUC__) || defined(__clang__)
  return static_cast<std::int32_t>(__builtin_ctzll(m));
#else
  std::int32_t i = 0;
  while (!(m & 1U)) {
    m >>= 1;
    ++i;
  }
  return i;
#endif
}

// The limits the controller accepts (checked before any allocation; see validate.hpp).
// Each move cost is at most kMaxMoveCost, and n_groups * height * max(move_cost) is at most
// kMaxTotalCost, so every total and every shortest-path distance of the searches (bounded by a
// small multiple of that product) stays far below the searches' infinity (int64 max / 4).
constexpr Cost kMaxMoveCost = Cost{1} << 40;
constexpr Cost kMaxTotalCost = Cost{1} << 56;

}  // namespace spare_fast
