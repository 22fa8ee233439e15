// A cache hint shared by the controller's sources (not installed: an implementation detail).
#pragma once

namespace spare_fast {

// Starts loading the cache line at p; no effect on results, a no-op where the compiler has no
// prefetch builtin.
inline void prefetch(const void* p, bool for_write = false) {
#if defined(__GNUC__) || defined(__clang__)
  if (for_write) {
    __builtin_prefetch(p, 1);
  } else {
    __builtin_prefetch(p, 0);
  }
#else
  (void)p;
  (void)for_write;
#endif
}

}  // namespace spare_fast
