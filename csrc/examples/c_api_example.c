/* Embedding the SPARe controller in a C scheduler through spare_fast/c_api.h.
 *
 * Builds a cyclic layout of N groups with redundancy r (group g holds types g, g+1, ...,
 * g+r-1 mod N), fails groups one at a time in a fixed pseudo-random order until a wipe-out,
 * and checks along the way that
 *   - every decision equals the stateless spf_solve on the same state (depth and moves),
 *   - a snapshot restores to a controller that takes the same next decision,
 *   - a rejected call reports an error code and a message and changes nothing.
 * Prints the depth changes and the mean time per decision; exits 0 when every check holds.
 * Usage: c_api_example [N] [r]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spare_fast/c_api.h"

#define CHECK(call)                                                                   \
  do {                                                                                \
    int rc_ = (call);                                                                 \
    if (rc_ != SPF_SUCCESS) {                                                         \
      fprintf(stderr, "%s:%d: %s failed (%d): %s\n", __FILE__, __LINE__, #call, rc_, \
              spf_last_error());                                                      \
      return 1;                                                                       \
    }                                                                                 \
  } while (0)

/* A small deterministic generator (xorshift64*), so the order is the same everywhere. */
static uint64_t next_random(uint64_t* state) {
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  return *state * 2685821657736338717ull;
}

int main(int argc, char** argv) {
  const int32_t n = argc > 1 ? (int32_t)atoi(argv[1]) : 2000;
  const int32_t r = argc > 2 ? (int32_t)atoi(argv[2]) : 8;
  if (n < 2 || r < 1 || r > n) {
    fprintf(stderr, "usage: c_api_example [N >= 2] [1 <= r <= N]\n");
    return 2;
  }
  const size_t cells = (size_t)n * (size_t)r;
  int32_t* stacks = malloc(cells * sizeof *stacks);
  int32_t* before = malloc(cells * sizeof *before);
  int32_t* order = malloc((size_t)n * sizeof *order);
  if (!stacks || !before || !order) return 1;
  for (int32_t g = 0; g < n; ++g) {
    for (int32_t l = 0; l < r; ++l) stacks[(size_t)g * (size_t)r + (size_t)l] = (g + l) % n;
    order[g] = g;
  }
  uint64_t state = 88172645463325252ull;
  for (int32_t i = n - 1; i > 0; --i) { /* Fisher-Yates */
    const int32_t j = (int32_t)(next_random(&state) % (uint64_t)(i + 1));
    const int32_t t = order[i];
    order[i] = order[j];
    order[j] = t;
  }

  spf_controller* ctl = NULL;
  CHECK(spf_controller_create(stacks, n, r, NULL, &ctl));
  printf("spare_fast %s: N = %d, r = %d, T = %d types, depth %d\n", spf_version(),
         spf_controller_n_groups(ctl), spf_controller_redundancy(ctl),
         spf_controller_n_types(ctl), spf_controller_depth(ctl));

  /* A rejected call: group n is out of range. The controller is unchanged. */
  const int32_t bad = n;
  if (spf_controller_fail(ctl, &bad, 1, NULL) != SPF_ERROR_OUT_OF_RANGE ||
      spf_last_error()[0] == '\0' || spf_controller_events(ctl) != 0) {
    fprintf(stderr, "a bad group id was not rejected cleanly\n");
    return 1;
  }
  printf("rejected as expected: %s\n", spf_last_error());

  uint8_t* alive = malloc((size_t)n);
  if (!alive) return 1;
  double seconds = 0.0;
  int64_t decisions = 0;
  int32_t depth = spf_controller_depth(ctl);
  spf_controller* copy = NULL;
  for (int32_t k = 0; k < n; ++k) {
    memcpy(before, spf_controller_stacks(ctl), cells * sizeof *before);
    spf_decision d;
    CHECK(spf_controller_fail(ctl, &order[k], 1, &d));
    seconds += d.seconds;
    ++decisions;
    /* The stateless decision on the same state: the orders before the event, the survivors. */
    memcpy(alive, spf_controller_alive(ctl), (size_t)n);
    spf_decision ref;
    CHECK(spf_solve(before, n, r, alive, NULL, NULL, 0, NULL, &ref));
    if (ref.status != d.status || ref.depth != d.depth || ref.moves != d.moves) {
      fprintf(stderr, "failure %d: controller (status %d, depth %d, moves %lld) != solve "
              "(status %d, depth %d, moves %lld)\n", k + 1, d.status, d.depth,
              (long long)d.moves, ref.status, ref.depth, (long long)ref.moves);
      return 1;
    }
    if (d.status == SPF_STATUS_WIPEOUT) {
      printf("failure %d (group %d): WIPEOUT -> global restart\n", k + 1, order[k]);
      break;
    }
    for (int64_t i = 0; i < d.patch_rows; ++i) { /* each patched type has an alive provider */
      const int32_t type = d.patch[2 * i];
      const int32_t group = d.patch[2 * i + 1];
      if (!alive[group] || spf_controller_assignment(ctl)[type] != group) {
        fprintf(stderr, "failure %d: patch row (%d, %d) is not the assignment\n", k + 1, type,
                group);
        return 1;
      }
    }
    if (d.depth != depth) {
      printf("failure %d (group %d): depth %d -> %d, moves %lld, patch %lld rows\n", k + 1,
             order[k], depth, d.depth, (long long)d.moves, (long long)d.patch_rows);
      depth = d.depth;
    }
    if (copy != NULL) { /* the restored controller takes the same decision */
      spf_decision c;
      CHECK(spf_controller_fail(copy, &order[k], 1, &c));
      if (c.depth != d.depth || c.moves != d.moves || c.patch_rows != d.patch_rows ||
          (d.patch_rows && memcmp(c.patch, d.patch, (size_t)(2 * d.patch_rows) * sizeof(int32_t))) ||
          memcmp(spf_controller_stacks(copy), spf_controller_stacks(ctl),
                 cells * sizeof(int32_t)) != 0) {
        fprintf(stderr, "failure %d: the restored controller disagrees\n", k + 1);
        return 1;
      }
      spf_controller_free(copy);
      copy = NULL;
      printf("snapshot restored: the next decision agrees\n");
    }
    if (k == n / 4) { /* snapshot now; the copy decides the next failure too */
      uint8_t* blob = NULL;
      size_t size = 0;
      CHECK(spf_controller_snapshot(ctl, &blob, &size));
      CHECK(spf_controller_restore(blob, size, &copy));
      spf_buffer_free(blob);
      printf("snapshot: %zu bytes\n", size);
    }
  }
  spf_controller_free(copy); /* NULL unless the trajectory ended right after the snapshot */
  printf("%lld decisions, mean %.2f us per decision (C++ time)\n", (long long)decisions,
         1e6 * seconds / (double)decisions);

  spf_decision d;
  CHECK(spf_controller_restart(ctl, &d));
  const int ok = d.status == SPF_STATUS_OK && spf_controller_n_alive(ctl) == n;
  spf_controller_free(ctl);
  free(alive);
  free(order);
  free(before);
  free(stacks);
  return ok ? 0 : 1;
}
