// libFuzzer harness for the C++ Controller and its snapshot parser (no Python).
//
// Byte 0 picks the target:
//   even: the rest is a snapshot; its trailing checksum is rewritten so that restore's own
//         checks are what the fuzzer attacks. restore must throw std::invalid_argument or give
//         a controller whose snapshot round-trips and whose next decisions equal solve();
//   1 mod 4: the rest encodes a stacks array (n_groups, height, cells), optional move costs
//         and a sequence of fail / rejoin / restart events with arbitrary ids. Construction
//         must accept or throw invalid_argument / out_of_range; every accepted event must
//         equal a from-scratch solve on the state before it; a rejected event must change
//         nothing;
//   3 mod 4: a valid unit-cost layout of 64-255 groups (a cyclic layout with groups and types
//         relabelled) and a failure sequence (single and double failures, rare rejoins) with
//         no snapshot in between, so the distance labels of the label-guided search persist
//         from event to event: every decision must equal solve().
// Build: cmake -DSPARE_FAST_FUZZ=ON with clang (see .ci/run); run with a corpus directory
// (csrc/fuzz/corpus) and -max_total_time.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "spare_fast/controller.hpp"

using spare_fast::Controller;
using spare_fast::Decision;
using spare_fast::Span;
using spare_fast::Status;

namespace {

class Bytes {
 public:
  Bytes(const std::uint8_t* d, std::size_t n) : d_(d), n_(n) {}
  std::uint8_t u8() { return i_ < n_ ? d_[i_++] : 0; }
  std::int32_t i32() {
    std::uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v = (v << 8) | u8();
    return static_cast<std::int32_t>(v);
  }
  bool done() const { return i_ >= n_; }

 private:
  const std::uint8_t* d_;
  std::size_t n_;
  std::size_t i_ = 0;
};

// Mirrors the snapshot's FNV-1a checksum (controller_snapshot.cpp).
std::uint64_t fnv1a(const std::string& s, std::size_t n) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(s[i]);
    h *= 1099511628211ull;
  }
  return h;
}

void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "contract broken: %s\n", what);
    std::abort();
  }
}

// Fails alive groups one by one and compares every decision with solve().
void drive(Controller& c, Span<std::int64_t> cost, int max_events) {
  const auto n = static_cast<std::size_t>(c.n_groups());
  const std::size_t cells = n * static_cast<std::size_t>(c.height());
  for (std::size_t g = 0; g < n && max_events-- > 0; ++g) {
    if (!c.alive()[g]) continue;
    const std::vector<std::int32_t> before(c.stacks(), c.stacks() + cells);
    const std::vector<std::int32_t> one = {static_cast<std::int32_t>(g)};
    const Decision d = c.fail(Span<std::int32_t>(one.data(), one.size()));
    const std::vector<std::uint8_t> alive(c.alive(), c.alive() + n);
    const Decision ref = Controller::solve(Span<std::int32_t>(before.data(), before.size()),
                                           c.n_groups(), c.height(),
                                           Span<std::uint8_t>(alive.data(), alive.size()), cost,
                                           nullptr, nullptr);
    if (c.wiped_out()) {
      require(d.status == Status::kWipeout, "wipe-out reported");
      return;
    }
    require(d.status == ref.status && d.depth == ref.depth && d.moves == ref.moves,
            "incremental decision equals solve()");
  }
}

void fuzz_restore(const std::uint8_t* data, std::size_t size) {
  std::string blob(reinterpret_cast<const char*>(data), size);
  if (blob.size() >= 16) {
    const std::uint64_t h = fnv1a(blob, blob.size() - 8);
    std::memcpy(&blob[blob.size() - 8], &h, sizeof(h));
  }
  try {
    Controller c = Controller::restore(blob);
    const std::string again = c.snapshot();
    require(Controller::restore(again).snapshot() == again, "snapshot round trip");
    const std::size_t cells =
        static_cast<std::size_t>(c.n_groups()) * static_cast<std::size_t>(c.height());
    drive(c, c.unit_costs() ? Span<std::int64_t>() : Span<std::int64_t>(c.move_cost(), cells), 64);
  } catch (const std::invalid_argument&) {
  }
}

void fuzz_events(const std::uint8_t* data, std::size_t size) {
  Bytes in(data, size);
  const std::int32_t n = 1 + in.u8() % 12;
  const std::int32_t h = 1 + in.u8() % 6;
  const std::size_t cells = static_cast<std::size_t>(n) * static_cast<std::size_t>(h);
  std::vector<std::int32_t> stacks(cells);
  const bool wild = in.u8() % 8 == 0;  // arbitrary ids, not just small ones
  for (auto& t : stacks) t = wild ? in.i32() : in.u8() % static_cast<std::uint8_t>(n + 1);
  std::vector<std::int64_t> cost;
  if (in.u8() % 2) {
    cost.resize(cells);
    for (auto& v : cost) v = in.u8() % 5 == 0 ? std::int64_t{in.i32()} * (std::int64_t{1} << 20) : in.u8() % 4;
  }
  const Span<std::int64_t> cost_span(cost.data(), cost.size());
  std::unique_ptr<Controller> c;
  try {
    c = std::make_unique<Controller>(Span<std::int32_t>(stacks.data(), stacks.size()), n, h,
                                     cost_span);
  } catch (const std::invalid_argument&) {
    return;
  } catch (const std::out_of_range&) {
    return;
  }
  // Controllers built only from valid costs: if a cost was rejected we returned above.
  while (!in.done()) {
    const std::uint8_t op = in.u8() % 4;
    std::vector<std::int32_t> ids(in.u8() % 4);
    for (auto& g : ids) g = in.u8() % 16 == 0 ? in.i32() : in.u8() % static_cast<std::uint8_t>(n + 1);
    const std::string before = c->snapshot();
    const std::vector<std::int32_t> stacks_before(c->stacks(), c->stacks() + cells);
    Decision d;
    try {
      if (op == 0) {
        d = c->fail(Span<std::int32_t>(ids.data(), ids.size()));
      } else if (op == 1) {
        d = c->rejoin(Span<std::int32_t>(ids.data(), ids.size()));
      } else if (op == 2) {
        c->restart();
        continue;
      } else {
        require(Controller::restore(before).snapshot() == before, "snapshot round trip");
        continue;
      }
    } catch (const std::invalid_argument&) {
      require(c->snapshot() == before, "a rejected event changed nothing");
      continue;
    } catch (const std::out_of_range&) {
      require(c->snapshot() == before, "a rejected event changed nothing");
      continue;
    }
    if (c->wiped_out()) continue;
    const std::vector<std::uint8_t> alive(c->alive(), c->alive() + n);
    const Decision ref = Controller::solve(
        Span<std::int32_t>(stacks_before.data(), stacks_before.size()), n, h,
        Span<std::uint8_t>(alive.data(), alive.size()), cost_span, nullptr, nullptr);
    require(d.status == ref.status && d.depth == ref.depth && d.moves == ref.moves,
            "incremental decision equals solve()");
  }
}

void fuzz_labelled(const std::uint8_t* data, std::size_t size) {
  Bytes in(data, size);
  const std::int32_t n = 64 + in.u8() % 192;
  const std::int32_t r = 2 + in.u8() % 5;
  std::uint64_t x = 0;
  for (int k = 0; k < 8; ++k) x = (x << 8) | in.u8();
  auto next = [&x](std::uint64_t m) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::int32_t>((x >> 33) % m);
  };
  auto at = [](std::int64_t i) { return static_cast<std::size_t>(i); };
  std::vector<std::int32_t> group(at(n));  // group relabelling
  std::vector<std::int32_t> type(at(n));   // type relabelling
  for (std::int32_t i = 0; i < n; ++i) group[at(i)] = type[at(i)] = i;
  for (std::int32_t i = n - 1; i > 0; --i) {
    std::swap(group[at(i)], group[at(next(at(i) + 1))]);
    std::swap(type[at(i)], type[at(next(at(i) + 1))]);
  }
  const std::size_t cells = at(n) * at(r);
  std::vector<std::int32_t> stacks(cells);
  for (std::int32_t g = 0; g < n; ++g) {
    for (std::int32_t l = 0; l < r; ++l) stacks[at(group[at(g)] * r + l)] = type[at((g + l) % n)];
  }
  Controller c(Span<std::int32_t>(stacks.data(), stacks.size()), n, r, {});
  while (!in.done() && !c.wiped_out()) {
    std::vector<std::int32_t> alive_ids, dead_ids;
    for (std::int32_t g = 0; g < n; ++g) (c.alive()[g] ? alive_ids : dead_ids).push_back(g);
    const std::uint8_t op = in.u8();
    std::vector<std::int32_t> ids = {alive_ids[in.u8() % alive_ids.size()]};
    const bool rejoin = op % 16 == 0 && !dead_ids.empty();
    if (rejoin) {
      ids = {dead_ids[in.u8() % dead_ids.size()]};
    } else if (op % 4 == 1 && alive_ids.size() > 1) {
      const std::int32_t other = alive_ids[in.u8() % alive_ids.size()];
      if (other != ids[0]) ids.push_back(other);
    }
    const std::vector<std::int32_t> before(c.stacks(), c.stacks() + cells);
    const Span<std::int32_t> span(ids.data(), ids.size());
    const Decision d = rejoin ? c.rejoin(span) : c.fail(span);
    const std::vector<std::uint8_t> alive(c.alive(), c.alive() + n);
    const Decision ref = Controller::solve(Span<std::int32_t>(before.data(), before.size()), n, r,
                                           Span<std::uint8_t>(alive.data(), alive.size()), {},
                                           nullptr, nullptr);
    require(d.status == ref.status && d.depth == ref.depth && d.moves == ref.moves,
            "label-guided decision equals solve()");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  if (data[0] % 2 == 0) {
    fuzz_restore(data + 1, size - 1);
  } else if (data[0] % 4 == 1) {
    fuzz_events(data + 1, size - 1);
  } else {
    fuzz_labelled(data + 1, size - 1);
  }
  return 0;
}
