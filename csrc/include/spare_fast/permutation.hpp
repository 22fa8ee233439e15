// Random permutations bit for bit as numpy draws them, for layouts built at scale.
//
// Problem. Layout.random draws its layers with numpy's Generator.permutation on a PCG64 bit
// generator, and its seeds are a contract (same seed, same layout). At N = 1,000,000 groups
// the Python-level construction spends most of its time in those permutations and in turning
// them into Python lists; this kernel draws the same permutation in C++, so the layout stays
// identical for every seed while it is built in a fraction of the time.
//
// What is reproduced (numpy >= 1.17, Generator with PCG64):
//   * PCG64: a 128-bit LCG, state = state * 0x2360ed051fc65da44385df649fccf645 + inc, each
//     64-bit output the XSL-RR permutation of the new state (O'Neill 2014); a 32-bit draw
//     takes the low half of a fresh 64-bit output and keeps the high half for the next one
//     (has_uint32 / uinteger in numpy's state);
//   * Generator.permutation(n): arange(n) shuffled by Fisher-Yates from the last position
//     down to 1, swapping position i with j drawn uniformly from [0, i] by masked rejection
//     (numpy's random_interval: a 32-bit draw masked to the smallest all-ones mask >= i,
//     redrawn while above i; every i < 2**32 here).
// The state goes in and comes back, so the caller's generator continues exactly as if numpy
// had drawn the permutation. Tests compare the output with numpy's for many seeds and sizes.
//
// Complexity. O(n) time, n draws (plus the rejections, fewer than n on average), O(n) memory.
//
// Reference. M. E. O'Neill, "PCG: A Family of Simple Fast Space-Efficient Statistically Good
// Algorithms for Random Number Generation", Harvey Mudd College, HMC-CS-2014-0905, 2014.
// numpy's numpy/random/src/distributions/distributions.c (random_interval) and
// numpy/random/_generator.pyx (Generator.shuffle).
#pragma once

#include <cstdint>
#include <vector>

namespace spare_fast {

// numpy's PCG64 state: the 128-bit LCG state and increment as (high, low) halves, and the
// buffered half of the last 64-bit output.
struct Pcg64State {
  std::uint64_t state_hi = 0;
  std::uint64_t state_lo = 0;
  std::uint64_t inc_hi = 0;
  std::uint64_t inc_lo = 0;
  bool has_uint32 = false;
  std::uint32_t uinteger = 0;
};

// Generator.permutation(n) for a PCG64 generator in `state`, which is advanced as numpy
// advances it. Throws std::invalid_argument unless 0 <= n < 2**32.
std::vector<std::int64_t> pcg64_permutation(Pcg64State& state, std::int64_t n);


}  // namespace spare_fast
