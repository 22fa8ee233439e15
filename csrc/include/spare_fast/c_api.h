/* The SPARe controller (ReCtlr) behind a C ABI, for schedulers written in C, Go, Rust, ...
 *
 * What it is. The same controller as spare_fast/controller.hpp (see that header for the
 * problem, the invariants and the complexity) behind an opaque handle and plain C types:
 * int32_t ids, int64_t costs, uint8_t booleans. A decision is returned in a caller-owned
 * spf_decision struct. The library is C++ inside; it links into C programs with a C++ linker
 * (CMake does that for the spare_fast::core target).
 *
 * Errors. Every function that can fail returns an spf_error code: SPF_SUCCESS (0) or a
 * nonzero code, and then sets a thread-local message that spf_last_error() returns, e.g.
 * "groups[0] = 7 is already dead". No C++ exception crosses this interface. A rejected call
 * changes nothing (the handle stays valid and its state is unchanged). A wipe-out is not an
 * error: it is an expected outcome, reported as SPF_STATUS_WIPEOUT in the decision.
 *
 * Ownership. The caller owns every buffer it passes in; the library reads it during the call
 * only and keeps no pointer to it. Pointers the library returns:
 *   - spf_decision.patch and the spf_controller_assignment / _stacks / _alive / _load arrays
 *     point into the controller: valid until the next event (fail, rejoin, restart) on the
 *     same handle or spf_controller_free, whichever comes first; never free them;
 *   - spf_controller_snapshot allocates its buffer; release it with spf_buffer_free;
 *   - spf_last_error's string belongs to the calling thread, valid until its next call here.
 * A handle is released with spf_controller_free (NULL is accepted).
 *
 * Threads. Distinct handles are independent. One handle must not be used from two threads at
 * once (serialise the calls, e.g. with a mutex); the getters are reads and may run
 * concurrently with each other, not with an event. spf_controller_snapshot counts as an
 * event here: it resets the failure search's distance labels (a cache the image leaves out,
 * so that a restored controller decides exactly as this one does afterwards).
 */
#ifndef SPARE_FAST_C_API_H
#define SPARE_FAST_C_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ABI version: bumped when a struct layout or a signature changes. */
#define SPF_ABI_VERSION 1

/* Return codes. */
typedef enum spf_error {
  SPF_SUCCESS = 0,
  SPF_ERROR_INVALID_ARGUMENT = 1, /* a bad value or shape; the message names it */
  SPF_ERROR_OUT_OF_RANGE = 2,     /* an id outside its range */
  SPF_ERROR_NULL_POINTER = 3,     /* a required pointer was NULL */
  SPF_ERROR_BUFFER_TOO_SMALL = 4, /* an output buffer shorter than required */
  SPF_ERROR_OUT_OF_MEMORY = 5,
  SPF_ERROR_INTERNAL = 6 /* a bug: please report the message */
} spf_error;

/* Outcome of a decision (spf_decision.status). */
typedef enum spf_status {
  SPF_STATUS_OK = 0,
  SPF_STATUS_WIPEOUT = 1 /* some type has no alive holder: the job needs a global restart */
} spf_status;

/* One decision. Filled by the event functions; the caller owns the struct itself. */
typedef struct spf_decision {
  int32_t status;     /* spf_status */
  int32_t phase;      /* 0 nothing moves, 1 wipe-out found, 2 a reorder was computed */
  int32_t depth;      /* minimal depth S* (0 on wipe-out) */
  int32_t full_solve; /* 1 when the full optimisation ran (rejoin lowering the depth, restart) */
  int64_t moves;      /* minimal total move cost at S* (0 on wipe-out) */
  int64_t swaps;      /* (type, group) pairs swapped into a top layer */
  double seconds;     /* wall-clock time spent deciding */
  int64_t patch_rows; /* number of (type, group) rows in patch */
  /* 2 * patch_rows int32: (type, new provider) for the types whose provider died in this
   * event. Owned by the controller (see Ownership); NULL when patch_rows == 0. */
  const int32_t* patch;
} spf_decision;

/* Opaque controller handle. */
typedef struct spf_controller spf_controller;

/* The thread's last error message ("" if the last failing call on this thread set none). */
const char* spf_last_error(void);

/* The library version, e.g. "0.1.0". */
const char* spf_version(void);

/* Builds a controller. stacks: n_groups * height row-major types (the layout: every type in
 * [0, T) held equally often, at most once per stack). move_cost: NULL (all ones) or
 * n_groups * height nonnegative costs <= 2**40. On success *out receives a new handle. */
int spf_controller_create(const int32_t* stacks, int64_t n_groups, int64_t height,
                          const int64_t* move_cost, spf_controller** out);

/* Rebuilds a controller from spf_controller_snapshot bytes (checked: corrupted or truncated
 * data is SPF_ERROR_INVALID_ARGUMENT, never a crash). */
int spf_controller_restore(const uint8_t* data, size_t size, spf_controller** out);

void spf_controller_free(spf_controller* ctl);

/* Events. groups: n ids (NULL allowed when n == 0). decision may be NULL. */
int spf_controller_fail(spf_controller* ctl, const int32_t* groups, int64_t n,
                        spf_decision* decision);
int spf_controller_rejoin(spf_controller* ctl, const int32_t* groups, int64_t n,
                          spf_decision* decision);
int spf_controller_restart(spf_controller* ctl, spf_decision* decision);

/* The exact state as bytes: *data receives a buffer of *size bytes, allocated by the library;
 * release it with spf_buffer_free. */
int spf_controller_snapshot(const spf_controller* ctl, uint8_t** data, size_t* size);
void spf_buffer_free(void* data);

/* Stateless from-scratch decision on `stacks` (the current orders) and `alive` (n_groups
 * bytes, 0 or 1). assignment: NULL or assignment_len >= T int32 (T = 1 + the largest type),
 * receives the provider per type (-1 on wipe-out). stacks_out: NULL or n_groups * height
 * int32, receives the reordered stacks. decision may be NULL; its patch is empty.
 * An assignment_len below T returns SPF_ERROR_BUFFER_TOO_SMALL and writes no output. */
int spf_solve(const int32_t* stacks, int64_t n_groups, int64_t height, const uint8_t* alive,
              const int64_t* move_cost, int32_t* assignment, int64_t assignment_len,
              int32_t* stacks_out, spf_decision* decision);

/* State. Sizes return -1 for a NULL handle; arrays return NULL for a NULL handle. */
int32_t spf_controller_n_groups(const spf_controller* ctl);
int32_t spf_controller_n_types(const spf_controller* ctl);
int32_t spf_controller_height(const spf_controller* ctl);
int32_t spf_controller_redundancy(const spf_controller* ctl);
int32_t spf_controller_depth(const spf_controller* ctl); /* 0 while wiped out */
int32_t spf_controller_n_alive(const spf_controller* ctl);
int32_t spf_controller_wiped_out(const spf_controller* ctl); /* 1 between wipe-out and cure */
int64_t spf_controller_events(const spf_controller* ctl);
/* n_types int32: provider group per type (-1 while wiped out). */
const int32_t* spf_controller_assignment(const spf_controller* ctl);
/* n_groups * height int32, row-major: each group's current order. */
const int32_t* spf_controller_stacks(const spf_controller* ctl);
/* n_groups uint8 (0/1). */
const uint8_t* spf_controller_alive(const spf_controller* ctl);
/* n_groups int32: number of types each group provides. */
const int32_t* spf_controller_load(const spf_controller* ctl);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SPARE_FAST_C_API_H */
