// The C ABI (spare_fast/c_api.h) over spare_fast::Controller.
//
// Every entry point runs its body inside `guarded`, which turns each C++ exception into an
// spf_error code plus the thread-local message, so none crosses into C.
#include "spare_fast/c_api.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "spare_fast/controller.hpp"

#ifndef SPARE_FAST_VERSION
#define SPARE_FAST_VERSION "unknown"
#endif

struct spf_controller {
  explicit spf_controller(spare_fast::Controller&& c) : ctl(std::move(c)) {}
  spare_fast::Controller ctl;
  std::vector<std::int32_t> patch;  // the last decision's patch: spf_decision.patch points here
};

namespace {

thread_local std::string last_error;

// A required pointer was NULL (SPF_ERROR_NULL_POINTER).
class NullPointer : public std::exception {
 public:
  explicit NullPointer(const char* what) : what_(what) {}
  const char* what() const noexcept override { return what_; }

 private:
  const char* what_;
};

// A caller's output buffer is shorter than the result (SPF_ERROR_BUFFER_TOO_SMALL).
class BufferTooSmall : public std::length_error {
 public:
  using std::length_error::length_error;
};

int fail_with(int code, const char* message) noexcept {
  try {
    last_error = message;
  } catch (...) {
    last_error.clear();  // no memory even for the message: the code still tells
  }
  return code;
}

template <class F>
int guarded(F&& body) noexcept {
  try {
    body();
    return SPF_SUCCESS;
  } catch (const NullPointer& e) {
    return fail_with(SPF_ERROR_NULL_POINTER, e.what());
  } catch (const BufferTooSmall& e) {
    return fail_with(SPF_ERROR_BUFFER_TOO_SMALL, e.what());
  } catch (const std::out_of_range& e) {
    return fail_with(SPF_ERROR_OUT_OF_RANGE, e.what());
  } catch (const std::invalid_argument& e) {
    return fail_with(SPF_ERROR_INVALID_ARGUMENT, e.what());
  } catch (const std::length_error& e) {
    return fail_with(SPF_ERROR_INVALID_ARGUMENT, e.what());
  } catch (const std::bad_alloc&) {
    return fail_with(SPF_ERROR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return fail_with(SPF_ERROR_INTERNAL, e.what());
  } catch (...) {
    return fail_with(SPF_ERROR_INTERNAL, "unknown C++ exception");
  }
}

void require(const void* p, const char* what) {
  if (p == nullptr) throw NullPointer(what);
}

std::size_t cell_count(std::int64_t n_groups, std::int64_t height) {
  if (n_groups < 1 || height < 1 ||
      n_groups > std::numeric_limits<std::int32_t>::max() / height) {
    throw std::invalid_argument("n_groups = " + std::to_string(n_groups) + ", height = " +
                                std::to_string(height) +
                                ": both must be >= 1 and their product must fit int32");
  }
  return static_cast<std::size_t>(n_groups) * static_cast<std::size_t>(height);
}

spare_fast::Span<std::int32_t> group_span(const std::int32_t* groups, std::int64_t n) {
  if (n < 0) throw std::invalid_argument("n = " + std::to_string(n) + " must be >= 0");
  if (n > 0) require(groups, "groups is NULL but n > 0");
  return spare_fast::Span<std::int32_t>(groups, static_cast<std::size_t>(n));
}

void fill(spf_decision* out, const spare_fast::Decision& d,
          const std::vector<std::int32_t>& patch) {
  if (out == nullptr) return;
  out->status = static_cast<std::int32_t>(d.status);
  out->phase = d.phase;
  out->depth = d.depth;
  out->full_solve = d.full_solve ? 1 : 0;
  out->moves = d.moves;
  out->swaps = d.swaps;
  out->seconds = d.seconds;
  out->patch_rows = static_cast<std::int64_t>(patch.size() / 2);
  out->patch = patch.empty() ? nullptr : patch.data();
}

// Moves the decision's patch into the handle (where spf_decision.patch points) and fills out.
void finish_event(spf_controller* h, spare_fast::Decision&& d, spf_decision* out) {
  h->patch = std::move(d.patch);
  fill(out, d, h->patch);
}

}  // namespace

extern "C" {

const char* spf_last_error(void) { return last_error.c_str(); }

const char* spf_version(void) { return SPARE_FAST_VERSION; }

int spf_controller_create(const int32_t* stacks, int64_t n_groups, int64_t height,
                          const int64_t* move_cost, spf_controller** out) {
  return guarded([&] {
    require(out, "out is NULL");
    *out = nullptr;
    const std::size_t n = cell_count(n_groups, height);
    require(stacks, "stacks is NULL");
    const auto cost = move_cost ? spare_fast::Span<std::int64_t>(move_cost, n)
                                : spare_fast::Span<std::int64_t>();
    *out = new spf_controller(
        spare_fast::Controller(spare_fast::Span<std::int32_t>(stacks, n), n_groups, height, cost));
  });
}

int spf_controller_restore(const uint8_t* data, size_t size, spf_controller** out) {
  return guarded([&] {
    require(out, "out is NULL");
    *out = nullptr;
    if (size > 0) require(data, "data is NULL but size > 0");
    const std::string bytes = size ? std::string(reinterpret_cast<const char*>(data), size)
                                   : std::string();
    *out = new spf_controller(spare_fast::Controller::restore(bytes));
  });
}

void spf_controller_free(spf_controller* ctl) { delete ctl; }

int spf_controller_fail(spf_controller* ctl, const int32_t* groups, int64_t n,
                        spf_decision* decision) {
  return guarded([&] {
    require(ctl, "controller handle is NULL");
    finish_event(ctl, ctl->ctl.fail(group_span(groups, n)), decision);
  });
}

int spf_controller_rejoin(spf_controller* ctl, const int32_t* groups, int64_t n,
                          spf_decision* decision) {
  return guarded([&] {
    require(ctl, "controller handle is NULL");
    finish_event(ctl, ctl->ctl.rejoin(group_span(groups, n)), decision);
  });
}

int spf_controller_restart(spf_controller* ctl, spf_decision* decision) {
  return guarded([&] {
    require(ctl, "controller handle is NULL");
    finish_event(ctl, ctl->ctl.restart(), decision);
  });
}

int spf_controller_snapshot(const spf_controller* ctl, uint8_t** data, size_t* size) {
  return guarded([&] {
    require(ctl, "controller handle is NULL");
    require(data, "data is NULL");
    require(size, "size is NULL");
    *data = nullptr;
    *size = 0;
    const std::string bytes = ctl->ctl.snapshot();
    // malloc, so that spf_buffer_free is a plain free inside this library's C runtime.
    auto* buf = static_cast<uint8_t*>(std::malloc(bytes.size() ? bytes.size() : 1));
    if (buf == nullptr) throw std::bad_alloc();
    std::memcpy(buf, bytes.data(), bytes.size());
    *data = buf;
    *size = bytes.size();
  });
}

void spf_buffer_free(void* data) { std::free(data); }

int spf_solve(const int32_t* stacks, int64_t n_groups, int64_t height, const uint8_t* alive,
              const int64_t* move_cost, int32_t* assignment, int64_t assignment_len,
              int32_t* stacks_out, spf_decision* decision) {
  return guarded([&] {
    const std::size_t n = cell_count(n_groups, height);
    require(stacks, "stacks is NULL");
    require(alive, "alive is NULL");
    const auto cost = move_cost ? spare_fast::Span<std::int64_t>(move_cost, n)
                                : spare_fast::Span<std::int64_t>();
    std::vector<std::int32_t> assign;
    std::vector<std::int32_t> reordered;
    const spare_fast::Decision d = spare_fast::Controller::solve(
        spare_fast::Span<std::int32_t>(stacks, n), n_groups, height,
        spare_fast::Span<std::uint8_t>(alive, static_cast<std::size_t>(n_groups)), cost,
        &assign, stacks_out ? &reordered : nullptr);
    if (assignment != nullptr) {
      if (assignment_len < static_cast<std::int64_t>(assign.size())) {
        throw BufferTooSmall("assignment_len = " + std::to_string(assignment_len) +
                             " is less than n_types = " + std::to_string(assign.size()));
      }
      std::memcpy(assignment, assign.data(), assign.size() * sizeof(std::int32_t));
    }
    if (stacks_out != nullptr) {
      std::memcpy(stacks_out, reordered.data(), reordered.size() * sizeof(std::int32_t));
    }
    static const std::vector<std::int32_t> kNoPatch;
    fill(decision, d, kNoPatch);
  });
}

int32_t spf_controller_n_groups(const spf_controller* ctl) {
  return ctl ? ctl->ctl.n_groups() : -1;
}
int32_t spf_controller_n_types(const spf_controller* ctl) { return ctl ? ctl->ctl.n_types() : -1; }
int32_t spf_controller_height(const spf_controller* ctl) { return ctl ? ctl->ctl.height() : -1; }
int32_t spf_controller_redundancy(const spf_controller* ctl) {
  return ctl ? ctl->ctl.redundancy() : -1;
}
int32_t spf_controller_depth(const spf_controller* ctl) { return ctl ? ctl->ctl.depth() : -1; }
int32_t spf_controller_n_alive(const spf_controller* ctl) { return ctl ? ctl->ctl.n_alive() : -1; }
int32_t spf_controller_wiped_out(const spf_controller* ctl) {
  return ctl ? (ctl->ctl.wiped_out() ? 1 : 0) : -1;
}
int64_t spf_controller_events(const spf_controller* ctl) {
  return ctl ? static_cast<int64_t>(ctl->ctl.events()) : -1;
}
const int32_t* spf_controller_assignment(const spf_controller* ctl) {
  return ctl ? ctl->ctl.assignment() : nullptr;
}
const int32_t* spf_controller_stacks(const spf_controller* ctl) {
  return ctl ? ctl->ctl.stacks() : nullptr;
}
const uint8_t* spf_controller_alive(const spf_controller* ctl) {
  return ctl ? ctl->ctl.alive() : nullptr;
}
const int32_t* spf_controller_load(const spf_controller* ctl) {
  return ctl ? ctl->ctl.load() : nullptr;
}

}  // extern "C"
