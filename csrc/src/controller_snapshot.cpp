// Controller::snapshot and Controller::restore (see "Snapshots" in controller.hpp).
//
// Format, version 2, native endianness (snapshots move between runs of one deployment, not
// between architectures): the magic "SPFCTLR1", u32 version, i32 n_groups, i32 height,
// i32 depth, i32 initial_depth, u8 wiped_out, u64 events, u8 unit_costs, i64 initial_moves,
// i64 initial_swaps, then length-prefixed (u64) arrays: layout stacks, initial stacks,
// current stacks, move costs (empty for unit costs), alive, assignment, initial assignment,
// meta; then the u64 FNV-1a checksum of everything before it.
//
// restore never trusts a field it can re-derive: it rebuilds the controller from the layout
// and the costs (which re-runs the initial decision) and then checks each stored field
// against the derived one, so a blob with a recomputed checksum still cannot smuggle in a
// state the controller could not have reached. Every length is checked against the bytes
// left before anything is allocated.
#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "spare_fast/controller.hpp"

#include "controller_impl.hpp"

namespace spare_fast {

namespace {

constexpr char kMagic[8] = {'S', 'P', 'F', 'C', 'T', 'L', 'R', '1'};
constexpr std::uint32_t kVersion = 2;

std::uint64_t fnv1a(const char* data, std::size_t n) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= 1099511628211ull;
  }
  return h;
}

class Writer {
 public:
  template <class T>
  void put(const T& v) {
    const char* p = reinterpret_cast<const char*>(&v);
    out_.append(p, sizeof(T));
  }
  template <class T>
  void put_vec(const T* data, std::size_t n) {
    put<std::uint64_t>(n);
    out_.append(reinterpret_cast<const char*>(data), n * sizeof(T));
  }
  template <class T>
  void put_vec(const std::vector<T>& v) {
    put_vec(v.data(), v.size());
  }
  std::string& str() { return out_; }

 private:
  std::string out_;
};

[[noreturn]] void bad(const std::string& why) {
  throw std::invalid_argument("snapshot: " + why);
}

class Reader {
 public:
  Reader(const char* data, std::size_t n) : p_(data), n_(n) {}
  template <class T>
  T get(const char* what) {
    need(1, sizeof(T), what);
    T v;
    std::memcpy(&v, p_ + off_, sizeof(T));
    off_ += sizeof(T);
    return v;
  }
  // A length-prefixed array whose length must be `expected` (any length when `expected` is
  // kAny); the bytes are checked to be there before the vector is allocated.
  static constexpr std::size_t kAny = std::numeric_limits<std::size_t>::max();
  template <class T>
  std::vector<T> get_vec(const char* what, std::size_t expected) {
    const auto n = get<std::uint64_t>(what);
    if (expected != kAny && n != expected) {
      bad(std::string(what) + " has length " + std::to_string(n) + ", expected " +
          std::to_string(expected));
    }
    need(n, sizeof(T), what);
    std::vector<T> v(static_cast<std::size_t>(n));
    if (n) std::memcpy(v.data(), p_ + off_, v.size() * sizeof(T));
    off_ += v.size() * sizeof(T);
    return v;
  }
  std::size_t remaining() const { return n_ - off_; }

 private:
  void need(std::uint64_t count, std::size_t each, const char* what) {
    if (count > (n_ - off_) / each) {
      bad(std::string("truncated while reading ") + what + " (" + std::to_string(n_) +
          " bytes)");
    }
  }
  const char* p_;
  std::size_t n_;
  std::size_t off_ = 0;
};

}  // namespace

std::string Controller::snapshot(const std::string& meta) const {
  // The distance labels are a search cache outside the image: reset them here so that this
  // controller and one restored from the image decide identically from now on.
  const Impl& st = *impl_;
  impl_->reset_labels();
  Writer w;
  w.str().append(kMagic, sizeof(kMagic));
  w.put<std::uint32_t>(kVersion);
  w.put<std::int32_t>(st.n_groups_);
  w.put<std::int32_t>(st.height_);
  w.put<std::int32_t>(st.depth_);
  w.put<std::int32_t>(st.initial_depth_);
  w.put<std::uint8_t>(st.wiped_out_ ? 1 : 0);
  w.put<std::uint64_t>(st.events_);
  w.put<std::uint8_t>(st.unit_costs_ ? 1 : 0);
  w.put<std::int64_t>(st.initial_moves_);
  w.put<std::int64_t>(st.initial_swaps_);
  w.put_vec(st.layout_stacks_);
  w.put_vec(st.initial_stacks());
  w.put_vec(st.stacks_);
  w.put_vec(st.move_cost_);
  w.put_vec(st.alive_);
  w.put_vec(st.assign_);
  w.put_vec(st.initial_assign_);
  w.put_vec(meta.data(), meta.size());
  const std::uint64_t h = fnv1a(w.str().data(), w.str().size());
  w.put<std::uint64_t>(h);
  return w.str();
}

Controller Controller::restore(const std::string& data, std::string* meta_out) {
  if (data.size() < sizeof(kMagic) + sizeof(std::uint64_t) ||
      std::memcmp(data.data(), kMagic, sizeof(kMagic)) != 0) {
    bad("not a spare_fast controller snapshot (bad magic, " + std::to_string(data.size()) +
        " bytes)");
  }
  const std::size_t body = data.size() - sizeof(std::uint64_t);
  std::uint64_t stored;
  std::memcpy(&stored, data.data() + body, sizeof(stored));
  if (fnv1a(data.data(), body) != stored) {
    bad("checksum mismatch (corrupted or truncated data)");
  }
  Reader rd(data.data() + sizeof(kMagic), body - sizeof(kMagic));
  const auto version = rd.get<std::uint32_t>("version");
  if (version != kVersion) {
    bad("version " + std::to_string(version) + " is not supported (expected " +
        std::to_string(kVersion) + ")");
  }
  const auto n = rd.get<std::int32_t>("n_groups");
  const auto h = rd.get<std::int32_t>("height");
  const auto depth = rd.get<std::int32_t>("depth");
  const auto initial_depth = rd.get<std::int32_t>("initial_depth");
  const auto wiped = rd.get<std::uint8_t>("wiped_out");
  const auto events = rd.get<std::uint64_t>("events");
  const auto unit = rd.get<std::uint8_t>("unit_costs");
  const auto initial_moves = rd.get<std::int64_t>("initial_moves");
  const auto initial_swaps = rd.get<std::int64_t>("initial_swaps");
  if (n < 1 || h < 1 || static_cast<std::int64_t>(n) * h > std::numeric_limits<std::int32_t>::max()) {
    bad("bad shape " + std::to_string(n) + " x " + std::to_string(h));
  }
  if (unit > 1 || wiped > 1) bad("a flag is not 0 or 1");
  const std::size_t cells = static_cast<std::size_t>(n) * static_cast<std::size_t>(h);
  auto layout = rd.get_vec<std::int32_t>("layout_stacks", cells);
  auto initial = rd.get_vec<std::int32_t>("initial_stacks", cells);
  auto stacks = rd.get_vec<std::int32_t>("stacks", cells);
  auto cost = rd.get_vec<std::int64_t>("move_cost", unit ? 0 : cells);
  auto alive = rd.get_vec<std::uint8_t>("alive", static_cast<std::size_t>(n));
  // Types are fewer than cells (check_stacks); the exact count is checked below.
  auto assign = rd.get_vec<std::int32_t>("assignment", Reader::kAny);
  auto initial_assign = rd.get_vec<std::int32_t>("initial_assignment", Reader::kAny);
  auto meta = rd.get_vec<char>("meta", Reader::kAny);
  if (rd.remaining() != 0) {
    bad(std::to_string(rd.remaining()) + " unexpected trailing bytes");
  }

  // Re-derive the layout's controller, its initial decision and the unit-cost flag.
  Controller c = [&] {
    try {
      return Controller(Span<std::int32_t>(layout.data(), layout.size()), n, h,
                        Span<std::int64_t>(cost.data(), cost.size()));
    } catch (const std::exception& e) {  // invalid_argument or out_of_range: both are bad data
      bad(std::string("layout: ") + e.what());
    }
  }();
  Impl& st = *c.impl_;
  if (st.unit_costs_ != (unit != 0)) bad("the unit-cost flag does not match the move costs");
  const auto types = static_cast<std::size_t>(st.n_types_);
  if (assign.size() != types || initial_assign.size() != types) {
    bad("assignment has length " + std::to_string(assign.size()) + ", expected n_types = " +
        std::to_string(types));
  }
  if (initial != st.initial_stacks() || initial_assign != st.initial_assign_ ||
      initial_depth != st.initial_depth_ || initial_moves != st.initial_moves_ ||
      initial_swaps != st.initial_swaps_) {
    bad("the initial decision does not match the one the layout gives");
  }

  // Current stacks: row g a permutation of layout row g. Each cell must name a type that g
  // holds, and each of g's holder slots is used once.
  const auto H = static_cast<std::size_t>(h);
  const auto R = static_cast<std::size_t>(st.redundancy_);
  std::vector<std::uint8_t> used(types * R, 0);
  for (std::size_t g = 0; g < static_cast<std::size_t>(n); ++g) {
    for (std::size_t l = 0; l < H; ++l) {
      const std::int32_t t = stacks[g * H + l];
      std::size_t k = types * R;
      if (t >= 0 && static_cast<std::size_t>(t) < types) {
        for (k = static_cast<std::size_t>(t) * R; k < (static_cast<std::size_t>(t) + 1) * R; ++k) {
          if (st.slot_group(k) == static_cast<std::int32_t>(g)) break;
        }
        if (k == (static_cast<std::size_t>(t) + 1) * R) k = types * R;
      }
      if (k == types * R || used[k]) {
        bad("stacks[" + std::to_string(g) + ", " + std::to_string(l) + "] = " +
            std::to_string(t) + ": row " + std::to_string(g) +
            " is not a permutation of the layout's row");
      }
      used[k] = 1;
    }
  }
  st.stacks_ = std::move(stacks);
  st.index_slots();

  // The wiped-out flag.
  st.n_alive_ = 0;
  for (std::size_t g = 0; g < static_cast<std::size_t>(n); ++g) {
    if (alive[g] > 1) {
      bad("alive[" + std::to_string(g) + "] = " + std::to_string(alive[g]) + " is not a boolean");
    }
    st.set_alive(static_cast<std::int32_t>(g), alive[g] != 0);
    if (alive[g]) ++st.n_alive_;
  }
  const bool covered = st.every_type_held();
  if ((wiped != 0) == covered) {
    bad(std::string("wiped_out = ") + std::to_string(wiped) + " but " +
        (covered ? "every type has an alive holder" : "some type has no alive holder"));
  }

  // (I1), (I2) and the minimal depth.
  std::fill(st.load_.begin(), st.load_.end(), 0);
  if (wiped) {
    if (depth != 0) bad("depth " + std::to_string(depth) + " while wiped out (expected 0)");
    for (std::size_t t = 0; t < types; ++t) {
      if (assign[t] != -1) bad("assignment[" + std::to_string(t) + "] set while wiped out");
    }
  } else {
    std::vector<std::uint8_t> alive_u8(st.alive_.begin(), st.alive_.end());
    const Decision fresh = Controller::solve(
        Span<std::int32_t>(st.stacks_.data(), st.stacks_.size()), n, h,
        Span<std::uint8_t>(alive_u8.data(), alive_u8.size()),
        Span<std::int64_t>(cost.data(), cost.size()), nullptr, nullptr);
    if (depth != fresh.depth) {
      bad("depth " + std::to_string(depth) + " is not the minimal depth " +
          std::to_string(fresh.depth) + " for the alive groups");
    }
    for (std::size_t t = 0; t < types; ++t) {
      const std::int32_t g = assign[t];
      if (g < 0 || g >= n || !st.alive_[static_cast<std::size_t>(g)]) {
        bad("assignment[" + std::to_string(t) + "] = " + std::to_string(g) +
            " is not an alive group");
      }
      std::size_t k = t * R;
      while (k < (t + 1) * R && st.slot_group(k) != g) ++k;
      if (k == (t + 1) * R || st.holder_at(k).layer >= depth) {
        bad("assignment[" + std::to_string(t) + "] = " + std::to_string(g) +
            " does not hold the type in its top " + std::to_string(depth) + " layers");
      }
      if (++st.load_[static_cast<std::size_t>(g)] > depth) {
        bad("group " + std::to_string(g) + " provides more types than the depth " +
            std::to_string(depth));
      }
    }
  }
  st.assign_ = std::move(assign);
  st.depth_ = depth;
  st.price_depth_ = std::max(depth, 1);
  st.wiped_out_ = wiped != 0;
  st.events_ = events;
  if (meta_out) meta_out->assign(meta.begin(), meta.end());
  return c;
}

}  // namespace spare_fast
