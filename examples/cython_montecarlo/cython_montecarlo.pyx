# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# distutils: language = c++
"""Failure trajectories driven from Cython: no Python call per decision.

Each trajectory fails uniformly random groups one at a time through the C++ controller until
a wipe-out, then restarts. The loop runs with the GIL released; every decision is timed
around the call (monotonic clock), so the latencies include whatever the call costs.
"""

from libc.stdint cimport int32_t, int64_t, uint64_t
from libcpp.algorithm cimport sort
from libcpp.vector cimport vector
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

from spare_fast.libspare cimport Controller, Decision, Span, Status


cdef inline uint64_t splitmix64(uint64_t* state) noexcept nogil:
    state[0] += 0x9E3779B97F4A7C15ULL
    cdef uint64_t z = state[0]
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline double now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return <double>ts.tv_sec + 1e-9 * <double>ts.tv_nsec


def trajectories(const int32_t[:, ::1] stacks not None, int trials, uint64_t seed=0):
    """Run ``trials`` trajectories to wipe-out on the layout ``stacks`` (int32, C order).

    Returns a dict: ``failures`` (survived failures per trajectory), ``mean_depth`` (over the
    survived states), ``decisions``, ``median_us``, ``p99_us``, ``max_us`` (per decision,
    measured around the call), ``total_s``.
    """
    cdef int64_t n = stacks.shape[0]
    cdef int64_t h = stacks.shape[1]
    cdef Controller* ctl = new Controller(Span[int32_t](&stacks[0, 0], <size_t>(n * h)), n, h,
                                          Span[int64_t]())
    cdef vector[int32_t] order = vector[int32_t](n)
    cdef vector[double] lat
    cdef vector[int64_t] failures
    cdef Decision d
    cdef uint64_t state = seed
    cdef int64_t i, j, k, survived
    cdef int32_t tmp
    cdef double depth_sum = 0.0, t0, t_start, total
    lat.reserve(<size_t>n * <size_t>trials)
    try:
        with nogil:
            t_start = now()
            for t in range(trials):
                if t:
                    ctl.restart()
                for i in range(n):
                    order[i] = <int32_t>i
                for i in range(n - 1, 0, -1):  # Fisher-Yates
                    j = <int64_t>(splitmix64(&state) % <uint64_t>(i + 1))
                    tmp = order[i]
                    order[i] = order[j]
                    order[j] = tmp
                survived = 0
                for k in range(n):
                    t0 = now()
                    ctl.fail_into(Span[int32_t](&order[k], 1), d)  # reuses d's patch buffer
                    lat.push_back(now() - t0)
                    if d.status == Status.kWipeout:
                        break
                    depth_sum += d.depth
                    survived += 1
                failures.push_back(survived)
            total = now() - t_start
    finally:
        del ctl
    cdef int64_t m = <int64_t>lat.size()
    cdef int64_t n_survived = 0
    for k in range(<int64_t>failures.size()):
        n_survived += failures[k]
    sort(lat.begin(), lat.end())
    return {
        "failures": [int(w) for w in failures],
        "mean_depth": depth_sum / max(n_survived, 1),
        "decisions": int(m),
        "median_us": 1e6 * lat[m // 2],
        "p99_us": 1e6 * lat[min(m - 1, (99 * m) // 100)],
        "max_us": 1e6 * lat[m - 1],
        "total_s": total,
    }


def fail_sequence(const int32_t[:, ::1] stacks not None, const int32_t[::1] order not None):
    """Fail ``order`` one group at a time until wipe-out; returns the depth after each event."""
    cdef int64_t n = stacks.shape[0]
    cdef int64_t h = stacks.shape[1]
    cdef Controller* ctl = new Controller(Span[int32_t](&stacks[0, 0], <size_t>(n * h)), n, h,
                                          Span[int64_t]())
    cdef vector[int32_t] depths
    cdef Decision d
    cdef Py_ssize_t k
    try:
        for k in range(order.shape[0]):
            d = ctl.fail(Span[int32_t](&order[k], 1))
            depths.push_back(d.depth)
            if d.status == Status.kWipeout:
                break
    finally:
        del ctl
    return [int(x) for x in depths]
