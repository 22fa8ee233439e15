// pcg64_permutation (permutation.hpp).
#include "spare_fast/permutation.hpp"

#include "prefetch.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace spare_fast {

namespace {

__extension__ using U128 = unsigned __int128;

constexpr U128 kMultiplier =
    (static_cast<U128>(0x2360ed051fc65da4ULL) << 64) | static_cast<U128>(0x4385df649fccf645ULL);

// The generator in registers for the length of one permutation.
struct Pcg64 {
  U128 state;
  U128 inc;
  bool has_uint32;
  std::uint32_t uinteger;

  std::uint64_t next64() {
    state = state * kMultiplier + inc;
    const auto hi = static_cast<std::uint64_t>(state >> 64);
    const auto lo = static_cast<std::uint64_t>(state);
    const auto rot = static_cast<unsigned>(state >> 122);
    const std::uint64_t x = hi ^ lo;
    return (x >> rot) | (x << ((64U - rot) & 63U));
  }
  std::uint32_t next32() {
    if (has_uint32) {
      has_uint32 = false;
      return uinteger;
    }
    const std::uint64_t next = next64();
    has_uint32 = true;
    uinteger = static_cast<std::uint32_t>(next >> 32);
    return static_cast<std::uint32_t>(next & 0xffffffffULL);
  }
  // Uniform in [0, max] by masked rejection on 32-bit draws: numpy's random_interval, which
  // its shuffle uses (max < 2**32).
  std::uint32_t interval(std::uint32_t max) {
    if (max == 0) return 0;
    std::uint32_t mask = max;
    mask |= mask >> 1;
    mask |= mask >> 2;
    mask |= mask >> 4;
    mask |= mask >> 8;
    mask |= mask >> 16;
    std::uint32_t value = next32() & mask;
    while (value > max) value = next32() & mask;
    return value;
  }
};

}  // namespace

std::vector<std::int64_t> pcg64_permutation(Pcg64State& st, std::int64_t n) {
  if (n < 0 || n >= (std::int64_t{1} << 32)) {
    throw std::invalid_argument("n = " + std::to_string(n) + " is not in [0, 2**32)");
  }
  Pcg64 g{(static_cast<U128>(st.state_hi) << 64) | st.state_lo,
          (static_cast<U128>(st.inc_hi) << 64) | st.inc_lo, st.has_uint32, st.uinteger};
  // Swaps on 32-bit entries: half the memory traffic of the int64 result, widened at the end.
  std::vector<std::uint32_t> a(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::uint32_t>(i);
  // The draws do not depend on the array, so they run kAhead swaps ahead of the swaps, each
  // prefetching its random position: the swaps are bound by those cache misses, not by the
  // generator (the order of the swaps, hence the result, is unchanged).
  constexpr std::size_t kAhead = 32;
  std::uint32_t ring[kAhead];
  const std::int64_t first = n - 1;  // swaps run for i = first down to 1
  std::int64_t drawn = first;        // the next i whose draw is not in the ring yet
  auto draw = [&]() {
    const std::uint32_t j = g.interval(static_cast<std::uint32_t>(drawn));
    prefetch(a.data() + j, true);
    ring[static_cast<std::size_t>(drawn) % kAhead] = j;
    --drawn;
  };
  while (drawn >= 1 && first - drawn < static_cast<std::int64_t>(kAhead)) draw();
  for (std::int64_t i = first; i >= 1; --i) {
    const std::uint32_t j = ring[static_cast<std::size_t>(i) % kAhead];
    if (drawn >= 1) draw();
    std::swap(a[static_cast<std::size_t>(i)], a[j]);
  }
  st.state_hi = static_cast<std::uint64_t>(g.state >> 64);
  st.state_lo = static_cast<std::uint64_t>(g.state);
  st.has_uint32 = g.has_uint32;
  st.uinteger = g.uinteger;
  return std::vector<std::int64_t>(a.begin(), a.end());
}

}  // namespace spare_fast
