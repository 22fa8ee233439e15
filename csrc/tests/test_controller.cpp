// C++ unit tests of the controller with no Python: valid events, wipe-out, rejoin, restart,
// snapshot round trips, and malformed input of every kind (run under ASan + UBSan in CI).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "harness.hpp"
#include "spare_fast/controller.hpp"

using spare_fast::Controller;
using spare_fast::Decision;
using spare_fast::Divider;
using spare_fast::Span;
using spare_fast::Status;

namespace {

std::vector<std::int32_t> cyclic(std::int32_t n, std::int32_t r) {
  std::vector<std::int32_t> s(static_cast<std::size_t>(n * r));
  for (std::int32_t g = 0; g < n; ++g)
    for (std::int32_t l = 0; l < r; ++l) s[static_cast<std::size_t>(g * r + l)] = (g + l) % n;
  return s;
}

Span<std::int32_t> span(const std::vector<std::int32_t>& v) { return {v.data(), v.size()}; }

void test_events() {
  const auto s = cyclic(12, 3);
  Controller c(span(s), 12, 3, {});
  CHECK(c.depth() == 1 && c.n_alive() == 12 && c.n_types() == 12 && c.redundancy() == 3);
  std::vector<std::int32_t> g = {4};
  Decision d = c.fail(span(g));
  CHECK(d.status == Status::kOk && d.depth == 2 && d.patch.size() == 2);
  CHECK(c.assignment()[d.patch[0]] == d.patch[1]);
  std::vector<std::int32_t> more = {5, 6};  // 4, 5, 6 hold type 6 with cyclic r = 3
  d = c.fail(span(more));
  CHECK(d.status == Status::kWipeout && d.phase == 1 && d.depth == 0);
  CHECK(c.wiped_out());
  std::vector<std::int32_t> back = {5};
  d = c.rejoin(span(back));
  CHECK(d.status == Status::kOk && !c.wiped_out());
  d = c.restart();
  CHECK(d.status == Status::kOk && d.depth == 1 && c.n_alive() == 12);
  for (std::size_t i = 0; i < s.size(); ++i) CHECK(c.stacks()[i] == s[i]);
}

void test_snapshot() {
  const auto s = cyclic(50, 4);
  std::vector<std::int64_t> cost(s.size());
  for (std::size_t i = 0; i < cost.size(); ++i) cost[i] = static_cast<std::int64_t>(i % 5);
  Controller a(span(s), 50, 4, Span<std::int64_t>(cost.data(), cost.size()));
  for (std::int32_t g = 0; g < 50; g += 3) {
    std::vector<std::int32_t> one = {g};
    a.fail(span(one));
  }
  const std::string snap = a.snapshot();
  Controller b = Controller::restore(snap);
  CHECK(b.snapshot() == snap);
  for (std::int32_t g = 1; g < 50; g += 3) {
    std::vector<std::int32_t> one = {g};
    if (!a.alive()[g]) continue;
    const Decision da = a.fail(span(one));
    const Decision db = b.fail(span(one));
    CHECK(da.status == db.status && da.depth == db.depth && da.moves == db.moves);
    CHECK(da.patch == db.patch);
  }
  EXPECT_THROW(std::invalid_argument, Controller::restore(snap.substr(0, snap.size() - 3)), "checksum");
  EXPECT_THROW(std::invalid_argument, Controller::restore("short"), "magic");
  for (std::size_t i = 8; i < snap.size(); i += 7) {
    std::string bad = snap;
    bad[i] = static_cast<char>(bad[i] ^ 0x10);
    EXPECT_THROW(std::invalid_argument, Controller::restore(bad), "snapshot");
  }
}

void test_malformed_input() {
  const auto s = cyclic(6, 2);
  EXPECT_THROW(std::invalid_argument, Controller(span(s), 6, 3, {}), "stacks has length 12");
  EXPECT_THROW(std::invalid_argument, Controller(span(s), 0, 2, {}), "n_groups = 0");
  std::vector<std::int32_t> neg = s;
  neg[5] = -4;
  EXPECT_THROW(std::out_of_range, Controller(span(neg), 6, 2, {}), "stacks[2, 1] = -4");
  std::vector<std::int32_t> rep = s;
  rep[1] = rep[0];
  EXPECT_THROW(std::invalid_argument, Controller(span(rep), 6, 2, {}), "stacks[0, 1] = 0 repeats");
  std::vector<std::int64_t> cost(12, 1);
  cost[7] = -1;
  EXPECT_THROW(std::invalid_argument, Controller(span(s), 6, 2, Span<std::int64_t>(cost.data(), cost.size())), "move_cost[3, 1] = -1");
  Controller c(span(s), 6, 2, {});
  std::vector<std::int32_t> out = {6};
  EXPECT_THROW(std::out_of_range, c.fail(span(out)), "groups[0] = 6 is not in [0, 6)");
  std::vector<std::int32_t> dup = {1, 1};
  EXPECT_THROW(std::invalid_argument, c.fail(span(dup)), "repeats");
  std::vector<std::int32_t> live = {2};
  EXPECT_THROW(std::invalid_argument, c.rejoin(span(live)), "already alive");
  CHECK(c.n_alive() == 6);
  std::vector<std::uint8_t> alive(5, 1);
  EXPECT_THROW(std::invalid_argument, Controller::solve(span(s), 6, 2, {alive.data(), alive.size()}, {}, nullptr, nullptr), "alive has length 5");
}

void test_solve_matches_incremental() {
  const std::int32_t n = 200, r = 4;
  const auto s = cyclic(n, r);
  Controller c(span(s), n, r, {});
  std::uint64_t x = 12345;
  for (int step = 0; step < 150; ++step) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const auto g = static_cast<std::int32_t>((x >> 33) % static_cast<std::uint64_t>(n));
    if (!c.alive()[g]) continue;
    std::vector<std::int32_t> before(c.stacks(), c.stacks() + n * r);
    std::vector<std::int32_t> one = {g};
    const Decision d = c.fail(span(one));
    std::vector<std::uint8_t> alive(c.alive(), c.alive() + n);
    const Decision ref = Controller::solve(span(before), n, r, {alive.data(), alive.size()}, {},
                                           nullptr, nullptr);
    CHECK(d.status == ref.status && d.depth == ref.depth && d.moves == ref.moves);
    if (d.status == Status::kWipeout) break;
  }
}


// Every failure to wipe-out on a spread layout (cyclic with the groups relabelled at random, so
// augmenting paths are long near saturation and the two-ended search runs), with move costs or
// unit costs (then the label-guided search runs until the last few groups with room, and
// occasional rejoins reset its labels), and some two-group failures: each decision, depth
// raises included, equals a fresh solve() in status, depth and moves, and no failure runs the
// full solve.
void check_raises_and_saturation(bool unit_costs) {
  const std::int32_t n = 400, r = 6;
  std::uint64_t x = 987654321;
  auto next = [&x](std::uint64_t m) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::int32_t>((x >> 33) % m);
  };
  std::vector<std::int32_t> label(static_cast<std::size_t>(n));
  for (std::int32_t g = 0; g < n; ++g) label[static_cast<std::size_t>(g)] = g;
  for (std::int32_t g = n - 1; g > 0; --g) {
    std::swap(label[static_cast<std::size_t>(g)],
              label[static_cast<std::size_t>(next(static_cast<std::uint64_t>(g) + 1))]);
  }
  const auto c0 = cyclic(n, r);
  std::vector<std::int32_t> s(c0.size());
  for (std::int32_t g = 0; g < n; ++g) {
    for (std::int32_t l = 0; l < r; ++l) {
      s[static_cast<std::size_t>(label[static_cast<std::size_t>(g)] * r + l)] =
          c0[static_cast<std::size_t>(g * r + l)];
    }
  }
  std::vector<std::int64_t> cost(s.size());
  for (auto& v : cost) v = 1 + next(3);
  const Span<std::int64_t> costs =
      unit_costs ? Span<std::int64_t>{} : Span<std::int64_t>(cost.data(), cost.size());
  Controller c(span(s), n, r, costs);
  int raises = 0;
  int rejoins = 0;
  while (true) {
    if (unit_costs && rejoins < 3 && next(60) == 0 && c.n_alive() < n) {
      // A rejoin of one dead group, checked the same way.
      std::vector<std::int32_t> back;
      for (std::int32_t g = 0; g < n && back.empty(); ++g) {
        if (!c.alive()[g]) back.push_back(g);
      }
      std::vector<std::int32_t> before(c.stacks(), c.stacks() + n * r);
      const Decision d = c.rejoin(span(back));
      std::vector<std::uint8_t> alive(c.alive(), c.alive() + n);
      const Decision ref = Controller::solve(span(before), n, r, {alive.data(), alive.size()},
                                             costs, nullptr, nullptr);
      CHECK(d.status == ref.status && d.depth == ref.depth && d.moves == ref.moves);
      ++rejoins;
    }
    std::vector<std::int32_t> alive_ids;
    for (std::int32_t g = 0; g < n; ++g) {
      if (c.alive()[g]) alive_ids.push_back(g);
    }
    std::vector<std::int32_t> groups = {
        alive_ids[static_cast<std::size_t>(next(alive_ids.size()))]};
    if (next(5) == 0 && alive_ids.size() > 1) {
      const std::int32_t other = alive_ids[static_cast<std::size_t>(next(alive_ids.size()))];
      if (other != groups[0]) groups.push_back(other);
    }
    std::vector<std::int32_t> before(c.stacks(), c.stacks() + n * r);
    const std::int32_t depth_before = c.depth();
    const Decision d = c.fail(span(groups));
    std::vector<std::uint8_t> alive(c.alive(), c.alive() + n);
    const Decision ref = Controller::solve(span(before), n, r, {alive.data(), alive.size()},
                                           costs, nullptr, nullptr);
    CHECK(d.status == ref.status && d.depth == ref.depth && d.moves == ref.moves);
    CHECK(!d.full_solve);
    if (d.status == Status::kWipeout) break;
    if (d.depth > depth_before) ++raises;
  }
  CHECK(raises >= 2);
}

void test_raises_and_saturation_match_solve() {
  check_raises_and_saturation(/*unit_costs=*/false);
  check_raises_and_saturation(/*unit_costs=*/true);
}

// A spread layout: n groups of h distinct types, every type in h groups, dealt at random (a
// shuffled deck of n * h cards, repeats within a group swapped away).
std::vector<std::int32_t> dealt(std::int32_t n, std::int32_t h, std::uint64_t seed) {
  std::uint64_t x = seed;
  auto next = [&x](std::uint64_t m) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::size_t>((x >> 33) % m);
  };
  const std::size_t cells = static_cast<std::size_t>(n) * static_cast<std::size_t>(h);
  std::vector<std::int32_t> s(cells);
  for (std::size_t i = 0; i < cells; ++i) s[i] = static_cast<std::int32_t>(i % static_cast<std::size_t>(n));
  for (std::size_t i = cells - 1; i > 0; --i) std::swap(s[i], s[next(i + 1)]);
  const auto H = static_cast<std::size_t>(h);
  for (bool clean = false; !clean;) {
    clean = true;
    for (std::size_t i = 0; i < cells; ++i) {
      const std::size_t row = i / H * H;
      for (std::size_t j = row; j < i; ++j) {
        if (s[j] == s[i]) {  // a repeat in this group: swap it with a random cell
          std::swap(s[i], s[next(cells)]);
          clean = false;
          break;
        }
      }
    }
  }
  return s;
}

// Unit costs near saturation on a spread layout large enough for the failure search to set its
// distance labels afresh (spare room F <= alive / 64, F >= 4): every decision from F = alive / 8
// to the wipe-out, depth rises included, equals a fresh solve (under the sanitizers in CI).
void test_relabelled_saturation_matches_solve() {
  const std::int32_t n = 3000, h = 16;
  const auto s = dealt(n, h, 2024);
  Controller c(span(s), n, h, {});
  std::uint64_t x = 77;
  int checked = 0;
  int raises = 0;
  while (true) {
    std::vector<std::int32_t> alive_ids;
    for (std::int32_t g = 0; g < n; ++g) {
      if (c.alive()[g]) alive_ids.push_back(g);
    }
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    std::vector<std::int32_t> one = {alive_ids[(x >> 33) % alive_ids.size()]};
    const std::int64_t room = static_cast<std::int64_t>(c.depth()) *
                                  static_cast<std::int64_t>(alive_ids.size()) - c.n_types();
    const bool near = room * 8 <= static_cast<std::int64_t>(alive_ids.size());
    std::vector<std::int32_t> before(c.stacks(), c.stacks() + static_cast<std::size_t>(n) * h);
    const std::int32_t depth_before = c.depth();
    const Decision d = c.fail(span(one));
    if (near) {
      std::vector<std::uint8_t> alive(c.alive(), c.alive() + n);
      const Decision ref = Controller::solve(span(before), n, h, {alive.data(), alive.size()}, {},
                                             nullptr, nullptr);
      CHECK(d.status == ref.status && d.depth == ref.depth && d.moves == ref.moves);
      ++checked;
    }
    if (d.status == Status::kWipeout) break;
    if (d.depth > depth_before) ++raises;
  }
  CHECK(checked > 60 && raises >= 1);
}

void test_fail_into_equals_fail_and_reuses_the_decision() {
  // Two controllers on one layout: fail() on one, fail_into() with one reused Decision on the
  // other; every field agrees, and a rejected call leaves the reused decision as it was.
  const auto s = cyclic(40, 4);
  Controller a(span(s), 40, 4, {});
  Controller b(span(s), 40, 4, {});
  Decision reused;
  for (std::int32_t g : {3, 17, 4, 29, 5, 11, 6}) {
    std::vector<std::int32_t> one = {g};
    const Decision d = a.fail(span(one));
    b.fail_into(span(one), reused);
    CHECK(reused.status == d.status && reused.depth == d.depth && reused.moves == d.moves);
    CHECK(reused.swaps == d.swaps && reused.phase == d.phase && reused.event == d.event);
    CHECK(reused.patch == d.patch && reused.full_solve == d.full_solve);
    if (d.status == Status::kWipeout) break;
  }
  const Decision kept = reused;
  std::vector<std::int32_t> dead = {3};
  EXPECT_THROW(std::invalid_argument, b.fail_into(span(dead), reused), "already dead");
  CHECK(reused.patch == kept.patch && reused.event == kept.event);
}

void test_divider_is_exact() {
  // Divider (types.hpp) replaces a division in the searches: it must equal a / d for every
  // cell id the controller can form (a < 2**31), whatever the height d. Checked near each
  // multiple of d around the ends of the range and at random points in between.
  std::uint64_t state = 12345;
  auto next = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::int32_t>(state >> 33);  // 31 bits
  };
  const std::int32_t top = std::numeric_limits<std::int32_t>::max();
  for (std::int32_t d : {1, 2, 3, 5, 7, 8, 12, 20, 31, 32, 33, 64, 100, 255, 1000, 65535, 65537,
                         1 << 20, top / 3, top}) {
    const Divider by(static_cast<std::uint32_t>(d));
    for (std::int32_t a = 0; a < 3000; ++a) CHECK(by.quotient(a) == a / d);
    for (std::int32_t a = top; a > top - 3000; --a) CHECK(by.quotient(a) == a / d);
    for (std::int64_t q = 1; q <= 64 && q * d <= top; ++q) {
      const auto m = static_cast<std::int32_t>(q * d);
      CHECK(by.quotient(m) == q && by.quotient(m - 1) == q - 1);
    }
    for (int i = 0; i < 20000; ++i) {
      const std::int32_t a = next();
      CHECK(by.quotient(a) == a / d);
    }
  }
}

// A copy is an independent controller in the same state: it decides as the original does, and
// events on one leave the other unchanged; a moved-to controller carries the state on.
void test_copy_and_move() {
  const std::int32_t n = 300;
  const std::int32_t r = 4;
  const auto s = cyclic(n, r);
  Controller a(span(s), n, r, {});
  for (std::int32_t g = 0; g < n; g += 5) {
    std::vector<std::int32_t> one = {g};
    a.fail(span(one));
  }
  Controller b(a);
  CHECK(b.snapshot() == a.snapshot());
  const std::uint64_t before = b.events();
  std::vector<std::int32_t> first = {1};
  a.fail(span(first));
  CHECK(b.events() == before && b.alive()[1] == 1);
  b.fail(span(first));
  for (std::int32_t g = 2; g < n; g += 5) {
    std::vector<std::int32_t> one = {g};
    const Decision da = a.fail(span(one));
    const Decision db = b.fail(span(one));
    CHECK(da.status == db.status && da.depth == db.depth && da.moves == db.moves);
    CHECK(da.patch == db.patch);
  }
  for (std::int32_t t = 0; t < a.n_types(); ++t) CHECK(a.assignment()[t] == b.assignment()[t]);
  const std::string snap = a.snapshot();
  Controller moved(std::move(a));
  CHECK(moved.snapshot() == snap);
  Controller assigned(span(s), n, r, {});
  assigned = moved;
  CHECK(assigned.snapshot() == snap);
  assigned = std::move(moved);
  CHECK(assigned.snapshot() == snap && assigned.events() == b.events());
}
}  // namespace

void test_rejoins_near_saturation_match_solve() {
  // Batch rejoins between failures keep the room bitmap and the distance labels (now reset
  // by an epoch, not a fill) valid: every decision equals a fresh solve. 1,003 groups, not a
  // multiple of 64, so the bitmaps' last word is partly past the groups.
  const std::int32_t n = 1003, h = 6;
  const auto s = dealt(n, h, 99);
  Controller c(span(s), n, h, {});
  std::uint64_t x = 5;
  auto next = [&x](std::size_t m) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::size_t>((x >> 33) % m);
  };
  int checked = 0;
  int rejoins = 0;
  for (int event = 0; event < 4000 && checked < 3000; ++event) {
    std::vector<std::int32_t> alive_ids, dead_ids;
    for (std::int32_t g = 0; g < n; ++g) (c.alive()[g] ? alive_ids : dead_ids).push_back(g);
    std::vector<std::int32_t> before(c.stacks(), c.stacks() + static_cast<std::size_t>(n) * h);
    Decision d;
    if (event % 40 == 39 && !dead_ids.empty()) {
      std::vector<std::int32_t> back;
      for (std::size_t i = 0; i < dead_ids.size(); i += 7) back.push_back(dead_ids[i]);
      d = c.rejoin(span(back));
      ++rejoins;
    } else {
      std::vector<std::int32_t> one = {alive_ids[next(alive_ids.size())]};
      d = c.fail(span(one));
    }
    std::vector<std::uint8_t> alive(c.alive(), c.alive() + n);
    const Decision ref = Controller::solve(span(before), n, h, {alive.data(), alive.size()}, {},
                                           nullptr, nullptr);
    CHECK(d.status == ref.status && d.depth == ref.depth && d.moves == ref.moves);
    ++checked;
    if (d.status == Status::kWipeout) c.restart();
  }
  CHECK(checked >= 3000 && rejoins >= 50);
}

void test_moved_stacks_construct_the_same_controller() {
  const auto s = cyclic(40, 5);
  Controller a(span(s), 40, 5, {});
  std::vector<std::int32_t> moved = s;
  Controller b(std::move(moved), 40, 5, {});
  for (std::int32_t g = 0; g < 40; g += 7) {
    std::vector<std::int32_t> one = {g};
    const Decision da = a.fail(span(one));
    const Decision db = b.fail(span(one));
    CHECK(da.depth == db.depth && da.moves == db.moves && da.patch == db.patch);
  }
  for (std::size_t i = 0; i < s.size(); ++i) {
    CHECK(a.stacks()[i] == b.stacks()[i] && b.layout_stacks()[i] == s[i]);
    CHECK(b.initial_stacks()[i] == s[i]);
  }
  // A rejected layout is not taken: the caller's vector is left as it was.
  std::vector<std::int32_t> bad = s;
  bad[3] = 99;
  bool threw = false;
  try {
    Controller c(std::move(bad), 40, 5, {});
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  CHECK(threw && bad.size() == s.size() && bad[3] == 99);
}

int main() {
  test_divider_is_exact();
  test_events();
  test_snapshot();
  test_malformed_input();
  test_solve_matches_incremental();
  test_raises_and_saturation_match_solve();
  test_relabelled_saturation_matches_solve();
  test_fail_into_equals_fail_and_reuses_the_decision();
  test_copy_and_move();
  test_rejoins_near_saturation_match_solve();
  test_moved_stacks_construct_the_same_controller();
  return harness::summary("test_controller");
}
