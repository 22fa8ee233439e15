#include "spare_fast/montecarlo.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <limits>

namespace spare_fast {
namespace {

// Trials are CPU-bound and independent: past a few hundred threads more only cost memory.
constexpr std::int64_t kMaxThreads = 256;

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class Xoshiro256 {
 public:
  Xoshiro256(std::uint64_t seed, std::uint64_t stream) {
    // Two SplitMix64 passes decorrelate neighbouring (seed, stream) pairs.
    std::uint64_t sm = seed;
    sm = splitmix64(sm) ^ stream;
    for (auto& word : s_) word = splitmix64(sm);
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, bound), bound >= 1 (Lemire: multiply-shift, reject the biased low part).
  std::uint64_t below(std::uint64_t bound) {
    unsigned __int128 product = static_cast<unsigned __int128>(next()) * bound;
    auto low = static_cast<std::uint64_t>(product);
    if (low < bound) {
      const std::uint64_t threshold = (0 - bound) % bound;
      while (low < threshold) {
        product = static_cast<unsigned __int128>(next()) * bound;
        low = static_cast<std::uint64_t>(product);
      }
    }
    return static_cast<std::uint64_t>(product >> 64);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4] = {0, 0, 0, 0};
};

}  // namespace

std::vector<std::int64_t> survived_failures(Span<std::int32_t> stacks, std::int32_t n_groups,
                                            std::int32_t height, std::int32_t n_types,
                                            std::uint64_t seed, std::int64_t first_trial,
                                            std::int64_t n_trials, std::int32_t threads) {
  check_nonnegative("first_trial", first_trial);
  check_nonnegative("n_trials", n_trials);
  // Trial ids first_trial .. first_trial + n_trials - 1 must all be representable.
  if (n_trials > std::numeric_limits<std::int64_t>::max() - first_trial) {
    throw std::invalid_argument("first_trial + n_trials = " + std::to_string(first_trial) +
                                " + " + std::to_string(n_trials) + " exceeds 2**63 - 1");
  }
  if (threads < 1) {
    throw std::invalid_argument("threads = " + std::to_string(threads) + " must be >= 1");
  }
  // The shared stacks check (validate.hpp); holder counts may differ per type here.
  check_stacks(stacks, n_groups, height, n_types, /*equal_counts=*/false);
  const auto groups = static_cast<std::size_t>(n_groups);
  const auto layers = static_cast<std::size_t>(height);
  const auto types = static_cast<std::size_t>(n_types);
  std::vector<std::int32_t> holders(types, 0);
  for (std::size_t c = 0; c < groups * layers; ++c) ++holders[static_cast<std::size_t>(stacks[c])];

  // Holders in layer-major order: holder[l * types + t] is the l-th holder of type t, padded
  // with the sentinel group n_groups (pos = -1) where a type has fewer holders than the most
  // held one. The scan below reads the first one or two layers of every type, so layer-major
  // storage streams a few dense rows instead of touching a cache line per type.
  std::size_t depth = 0;
  for (std::size_t t = 0; t < types; ++t) depth = std::max(depth, static_cast<std::size_t>(holders[t]));
  std::vector<std::int32_t> holder(depth * types, n_groups);
  {
    std::vector<std::size_t> fill(types, 0);
    for (std::size_t g = 0; g < groups; ++g) {
      for (std::size_t l = 0; l < layers; ++l) {
        const auto t = static_cast<std::size_t>(stacks[g * layers + l]);
        holder[fill[t]++ * types + t] = static_cast<std::int32_t>(g);
      }
    }
  }

  std::vector<std::int64_t> out(static_cast<std::size_t>(n_trials), 0);
  // More threads than trials or than kMaxThreads buy nothing.
  const std::int64_t workers = std::max<std::int64_t>(
      1, std::min<std::int64_t>({static_cast<std::int64_t>(threads), n_trials, kMaxThreads}));
  // Per-worker scratch, allocated here so that no thread can fail to allocate.
  std::vector<std::vector<std::int32_t>> orders(static_cast<std::size_t>(workers),
                                                std::vector<std::int32_t>(groups));
  // pos[n_groups] = -1 is the padding sentinel's failure index.
  std::vector<std::vector<std::int32_t>> positions(static_cast<std::size_t>(workers),
                                                   std::vector<std::int32_t>(groups + 1, -1));
  auto run = [&](std::int64_t worker, std::int64_t begin, std::int64_t end_trial) {
    std::vector<std::int32_t>& order = orders[static_cast<std::size_t>(worker)];
    std::vector<std::int32_t>& pos = positions[static_cast<std::size_t>(worker)];
    for (std::int64_t trial = begin; trial < end_trial; ++trial) {
      Xoshiro256 rng(seed, static_cast<std::uint64_t>(first_trial + trial));
      for (std::size_t g = 0; g < groups; ++g) order[g] = static_cast<std::int32_t>(g);
      for (std::size_t i = 0; i < groups; ++i) {
        const std::size_t j = i + static_cast<std::size_t>(rng.below(groups - i));
        std::swap(order[i], order[j]);
        pos[static_cast<std::size_t>(order[i])] = static_cast<std::int32_t>(i);
      }
      // W = min over types of max over holders of pos. A type's scan stops as soon as its
      // running max reaches the best W so far: with W near a fixed fraction of N that happens
      // after a couple of holders, so a trial reads about 2-3 entries per type instead of r.
      std::int32_t best = n_groups - 1;
      for (std::size_t t = 0; t < types; ++t) {
        std::int32_t latest = -1;
        for (std::size_t l = 0; l < depth; ++l) {
          latest = std::max(latest, pos[static_cast<std::size_t>(holder[l * types + t])]);
          if (latest >= best) break;
        }
        best = std::min(best, latest);
      }
      out[static_cast<std::size_t>(trial)] = best;
    }
  };
  // Trials are independent and seeded by index, so any split over threads gives the same
  // results; each thread writes only its own slice of `out`.
  // A thread that cannot be created (std::system_error: an address-space cap, a thread limit)
  // costs only speed: its trial range runs on the calling thread once the others are joined.
  // Never std::terminate: every started thread is joined, on every path.
  const std::int64_t per = (n_trials + workers - 1) / workers;
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(workers));
  std::vector<std::int64_t> not_started;  // workers whose range the caller runs
  for (std::int64_t w = 1; w < workers; ++w) {
    const std::int64_t b = w * per;
    const std::int64_t e = std::min(n_trials, b + per);
    if (b >= e) continue;
    try {
      pool.emplace_back(run, w, b, e);
    } catch (const std::system_error&) {
      not_started.push_back(w);
    }
  }
  run(0, 0, std::min(n_trials, per));
  for (auto& th : pool) th.join();
  for (const std::int64_t w : not_started) {
    run(0, w * per, std::min(n_trials, w * per + per));
  }
  return out;
}

}  // namespace spare_fast
