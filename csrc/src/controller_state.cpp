// State (controller_state.hpp): sizing, the holder slot index, liveness, room, labels and
// potentials.
#include "controller_state.hpp"

#include <algorithm>
#include <utility>

namespace spare_fast::detail {

void State::init(std::vector<Index>&& stacks, std::int32_t n, std::int32_t h,
                 std::int32_t n_types, std::int32_t r, bool unit_costs,
                 Span<std::int64_t> move_cost) {
  unit_costs_ = unit_costs;
  n_groups_ = n;
  n_types_ = n_types;
  height_ = h;
  redundancy_ = r;
  layout_stacks_ = std::move(stacks);
  initial_stacks_.clear();
  stacks_ = layout_stacks_;
  if (!unit_costs_) move_cost_.assign(move_cost.begin(), move_cost.end());

  const std::size_t slots = static_cast<std::size_t>(n_types) * static_cast<std::size_t>(r);
  slot_cell_.assign(slots, -1);
  height_div_ = Divider(static_cast<std::uint32_t>(h));
  std::vector<std::int32_t> fill(static_cast<std::size_t>(n_types), 0);
  for (std::int32_t g = 0; g < n; ++g) {
    for (std::int32_t l = 0; l < h; ++l) {
      const std::size_t cell =
          static_cast<std::size_t>(g) * static_cast<std::size_t>(h) + static_cast<std::size_t>(l);
      const auto t = static_cast<std::size_t>(stacks_[cell]);
      const std::size_t k = t * static_cast<std::size_t>(r) + static_cast<std::size_t>(fill[t]++);
      slot_cell_[k] = static_cast<std::int32_t>(cell);
    }
  }

  alive_.assign(static_cast<std::size_t>(n), 1);
  alive_bits_.assign((static_cast<std::size_t>(n) + 63) / 64, ~std::uint64_t{0});
  room_bits_.assign((static_cast<std::size_t>(n) + 63) / 64, 0);
  assign_.assign(static_cast<std::size_t>(n_types), -1);
  load_.assign(static_cast<std::size_t>(n), 0);
  n_alive_ = n;

  const std::size_t nodes = static_cast<std::size_t>(n_types) + static_cast<std::size_t>(n) + 1;
  node_.assign(nodes, SearchNode{});
  deep_stamp_.assign(static_cast<std::size_t>(n), 0);
  changed_flag_.assign(static_cast<std::size_t>(n_types), 0);
  // The failure search's labels (controller_labels.cpp), sized here so that no decision pays
  // for touching their pages first.
  if (unit_costs_) label_.assign(nodes - 1, LabelCell{});
  label_epoch_ = 1;
  label_default_ = 0;
}

void State::index_slots() {
  // O(N * height * R): each cell looks up its holder slot among the R holders of its type (a
  // slot's group is fixed, only its layer moves). Callers guarantee that every row of stacks_ is
  // a permutation of its layout row.
  const auto H = static_cast<std::size_t>(height_);
  for (std::size_t g = 0; g < static_cast<std::size_t>(n_groups_); ++g) {
    for (std::size_t l = 0; l < H; ++l) {
      const std::size_t cell = g * H + l;
      const std::size_t k = slot_of(stacks_[cell], static_cast<std::int32_t>(g));
      slot_cell_[k] = static_cast<std::int32_t>(cell);
    }
  }
}

void State::set_all_alive() {
  std::fill(alive_.begin(), alive_.end(), std::uint8_t{1});
  std::fill(alive_bits_.begin(), alive_bits_.end(), ~std::uint64_t{0});
  n_alive_ = n_groups_;
}

bool State::every_type_held() const {
  for (std::int32_t t = 0; t < n_types_; ++t) {
    if (!type_held(t)) return false;
  }
  return true;
}

void State::prepare_room(std::int32_t s) {
  if (room_depth_ == s) return;
  std::fill(room_bits_.begin(), room_bits_.end(), 0);
  for (std::size_t g = 0; g < static_cast<std::size_t>(n_groups_); ++g) {
    if (alive_[g] && load_[g] < s) room_bits_[g >> 6] |= std::uint64_t{1} << (g & 63);
  }
  room_depth_ = s;
}

void State::fill_labels(std::int32_t value) {
  if (++label_epoch_ == 0) {  // wrapped: clear the stamps once every 2^32 epochs
    for (LabelCell& c : label_) c.stamp = 0;
    label_epoch_ = 1;
  }
  label_default_ = value;
}

void State::prepare_labels(std::int32_t s) {
  prepare_room(s);
  if (label_depth_ == s) return;
  relabel_room_ = -1;
  fill_labels(0);
  label_depth_ = s;
}

void State::reset_potentials() {
  if (++pot_epoch_ == 0) {  // wrapped: clear the stamps once every 2^32 events
    for (SearchNode& n : node_) n.pot_stamp = 0;
    pot_epoch_ = 1;
  }
  pot_shift_ = 0;
  zero_state_ = true;
}

}  // namespace spare_fast::detail
