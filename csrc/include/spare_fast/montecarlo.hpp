// Monte Carlo of the number of failures a layout survives before its first wipe-out.
//
// Problem. Groups fail one at a time in a uniformly random order (a random permutation of the
// n_groups groups). A type is wiped out when every group that holds it has failed; the job
// survives failure i (0-based) if no type is wiped out after it. For each trial this returns
// W = the number of failures survived, i.e. the 0-based index of the failure that causes the
// first wipe-out. Equivalently W = min over types of max over holders of pos[holder], with
// pos the failure index of each group. Coverage alone decides a wipe-out: no matching needed.
//
// Invariants. stacks is row-major (n_groups, height) with every entry in [0, n_types), the types
// of one stack distinct and every type held by at least one group (holder counts may differ per
// type; a type dies when its count of dead holders reaches its holder count).
//
// Algorithm. A Fisher-Yates shuffle per trial gives pos; then one pass over the types (holders
// stored layer-major) computes the min-max, cutting a type's scan as soon as its running max reaches
// the best value so far. A trial costs O(n_groups) for the shuffle plus, in practice, a few
// holder reads per type (the cut fires after about 1 / (1 - W/N) holders), at most
// O(n_groups * height). Holders are stored layer-major, so the pass streams the first few rows
// of the holder array and reads pos (4N bytes) at random. Trials run on up to `threads`
// std::threads, one contiguous trial range each, with buffers allocated before they start.
//
// Randomness. Trial t uses xoshiro256** seeded by SplitMix64 from (seed, t), so a trial's result
// depends only on (seed, t): splitting a run into chunks (for a progress bar) or running chunks
// in any order gives the same numbers bit for bit. Bounded draws use Lemire's multiply-shift
// with rejection, which is exactly uniform.
//
// References. D. Lemire, "Fast random integer generation in an interval", ACM TOMACS 29(1),
// 2019, doi:10.1145/3230636. D. Blackman and S. Vigna, "Scrambled linear pseudorandom number
// generators", ACM TOMS 47(4), 2021, doi:10.1145/3460772.
#pragma once

#include <cstdint>
#include <vector>

#include "spare_fast/validate.hpp"

namespace spare_fast {

// Failures survived in trials first_trial .. first_trial + n_trials - 1 (one entry each),
// computed by up to `threads` threads (the results do not depend on it).
// stacks has n_groups * height entries. Throws std::invalid_argument (bad shape, repeated
// type in a stack, type without holder, negative counts) or std::out_of_range (a type id
// outside [0, n_types)) before any work.
std::vector<std::int64_t> survived_failures(Span<Index> stacks, std::int32_t n_groups,
                                            std::int32_t height, std::int32_t n_types,
                                            std::uint64_t seed, std::int64_t first_trial,
                                            std::int64_t n_trials, std::int32_t threads = 1);

}  // namespace spare_fast
