// Per-decision latency of the C++ API and of the C ABI on the same failure trajectory.
//
// Reads a layout and a failure order written by benchmarks/bench_embed.py (raw int32 files),
// runs the trajectory to wipe-out once through spare_fast::Controller and once through
// spare_fast/c_api.h, timing every call with a steady clock, and prints one JSON line per API.
// A third run ("C++ CPU") times every C++ call with the thread's CPU clock instead: on a shared
// machine a wall-clock maximum is mostly the time the thread was preempted.
// Build against an installed wheel (bench_embed.py does this):
//   c++ -O2 -std=c++17 benchmarks/embed_latency.cpp -I"$(python -m spare_fast --includedir)"
//     "$(python -m spare_fast --cmakedir)/../../../lib/libspare_fast_core.a" -o embed_latency
// (one command line).
// Usage: embed_latency STACKS_FILE ORDER_FILE N HEIGHT
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "spare_fast/c_api.h"
#include "spare_fast/controller.hpp"

namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::int32_t> read_file(const char* path, std::size_t n) {
  std::vector<std::int32_t> v(n);
  FILE* f = std::fopen(path, "rb");
  if (f == nullptr || std::fread(v.data(), sizeof(std::int32_t), n, f) != n) {
    std::fprintf(stderr, "cannot read %zu int32 from %s\n", n, path);
    std::exit(2);
  }
  std::fclose(f);
  return v;
}

void report(const char* api, std::vector<double> lat, double total) {
  std::sort(lat.begin(), lat.end());
  const std::size_t m = lat.size();
  std::printf(
      "{\"api\": \"%s\", \"decisions\": %zu, \"median_us\": %.3f, \"p99_us\": %.2f, "
      "\"max_us\": %.1f, \"total_s\": %.4f}\n",
      api, m, 1e6 * lat[m / 2], 1e6 * lat[std::min(m - 1, 99 * m / 100)], 1e6 * lat[m - 1],
      total);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: embed_latency STACKS_FILE ORDER_FILE N HEIGHT\n");
    return 2;
  }
  const std::int64_t n = std::atoll(argv[3]);
  const std::int64_t h = std::atoll(argv[4]);
  const auto stacks = read_file(argv[1], static_cast<std::size_t>(n * h));
  const auto order = read_file(argv[2], static_cast<std::size_t>(n));
  std::vector<double> lat;
  lat.reserve(static_cast<std::size_t>(n));

  {  // C++
    spare_fast::Controller ctl({stacks.data(), stacks.size()}, n, h, {});
    const auto start = Clock::now();
    for (std::size_t k = 0; k < order.size(); ++k) {
      const auto t0 = Clock::now();
      const spare_fast::Decision d = ctl.fail({&order[k], 1});
      lat.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
      if (d.status == spare_fast::Status::kWipeout) break;
    }
    report("C++", lat, std::chrono::duration<double>(Clock::now() - start).count());
  }
  lat.clear();
  {  // C++, thread CPU time per call
    spare_fast::Controller ctl({stacks.data(), stacks.size()}, n, h, {});
    auto cpu = [] {
      timespec ts{};
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
      return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
    };
    const double start = cpu();
    for (std::size_t k = 0; k < order.size(); ++k) {
      const double t0 = cpu();
      const spare_fast::Decision d = ctl.fail({&order[k], 1});
      lat.push_back(cpu() - t0);
      if (d.status == spare_fast::Status::kWipeout) break;
    }
    report("C++ CPU", lat, cpu() - start);
  }
  lat.clear();
  {  // C
    spf_controller* ctl = nullptr;
    if (spf_controller_create(stacks.data(), n, h, nullptr, &ctl) != SPF_SUCCESS) {
      std::fprintf(stderr, "%s\n", spf_last_error());
      return 1;
    }
    const auto start = Clock::now();
    for (std::size_t k = 0; k < order.size(); ++k) {
      spf_decision d;
      const auto t0 = Clock::now();
      const int rc = spf_controller_fail(ctl, &order[k], 1, &d);
      lat.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
      if (rc != SPF_SUCCESS) {
        std::fprintf(stderr, "%s\n", spf_last_error());
        return 1;
      }
      if (d.status == SPF_STATUS_WIPEOUT) break;
    }
    report("C", lat, std::chrono::duration<double>(Clock::now() - start).count());
    spf_controller_free(ctl);
  }
  return 0;
}
