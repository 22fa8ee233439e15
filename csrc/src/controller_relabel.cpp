// Relabel (controller_relabel.hpp).
//
// Why. The labelled search (controller_labels.cpp) raises only the labels of the nodes it
// settles, so as the groups with room fill up, most labels fall far below the true distances,
// and each search settles about alive / F nodes (F slots of room). Near saturation (the
// failure path in controller.cpp says when) every label is set afresh to min(d(v), 2), d the
// residual distance to the sink, before the event's first search.
//
// Validity. That keeps the labels' invariant (L): for an edge (u, v), d(u) <= c(u, v) + d(v),
// and capping both sides at 2 keeps the inequality (c >= 0 there: before the first search
// every assigned type costs 0). Only the nodes at distance 0 and 1 are visited, backwards from
// the groups with room, so the cost grows with F rather than N; every other node gets 2 by
// starting a new label epoch whose default is 2 (State::fill_labels, O(1)).
#include "controller_relabel.hpp"

namespace spare_fast::detail {

void Relabel::run(State& st, std::int32_t s) {
  st.prepare_room(s);
  const std::int32_t T = st.n_types_;
  const auto H = static_cast<std::size_t>(st.height_);
  // Every node at 2 (dead groups out), then the nodes at distance 0 and 1, found backwards
  // from the groups with room. The residual edges into a type come from its provider (cost
  // 0: the type sits in the provider's top s layers); those into a group g from the types it
  // holds but does not provide, at cost 0 in its top s layers and 1 below. A group without
  // room fills its top s layers with the s types it provides, so it has no edge of cost 0
  // coming in: the distance-0 nodes are the groups with room, the types they hold in their
  // top layers without providing them, and those types' providers; the distance-1 nodes
  // are the types held below the top layers of a distance-0 group, and their providers.
  st.fill_labels(2);
  std::vector<std::int32_t>& zero = zero_;
  std::vector<std::int32_t>& one = one_;
  zero.clear();
  one.clear();
  st.for_each_room_group([&](std::int32_t g) {
    st.set_label(T + g, 0);
    zero.push_back(T + g);
  });
  for (std::size_t i = 0; i < zero.size(); ++i) {
    const std::int32_t v = zero[i];
    if (v >= T) {
      const std::int32_t g = v - T;
      const std::int32_t* row = st.stacks_.data() + static_cast<std::size_t>(g) * H;
      for (std::size_t l = 0; l < H; ++l) {
        const std::int32_t t = row[l];
        if (st.assign_[static_cast<std::size_t>(t)] == g) continue;
        if (l < static_cast<std::size_t>(s)) {
          if (st.label_of(t) > 0) {
            st.set_label(t, 0);
            zero.push_back(t);
          }
        } else if (st.label_of(t) > 1) {
          st.set_label(t, 1);
          one.push_back(t);
        }
      }
    } else {
      const std::int32_t p = st.assign_[static_cast<std::size_t>(v)];
      if (p >= 0 && st.label_of(T + p) > 0) {
        st.set_label(T + p, 0);
        zero.push_back(T + p);
      }
    }
  }
  for (const std::int32_t t : one) {
    if (st.label_of(t) != 1) continue;
    const std::int32_t p = st.assign_[static_cast<std::size_t>(t)];
    if (p >= 0 && st.label_of(T + p) > 1) st.set_label(T + p, 1);
  }
  st.label_depth_ = s;
}

}  // namespace spare_fast::detail
