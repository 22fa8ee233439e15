# cython: language_level=3
# distutils: language = c++
"""Cython declarations of the C++ decision core (csrc/include/spare_fast/controller.hpp).

``cimport spare_fast.libspare`` gives Cython code the C++ ``Controller`` and ``Decision`` with
no Python call per decision. Compile as C++17 against the headers and the static library that
the wheel ships: ``spare_fast.get_include()`` and the CMake target ``spare_fast::core``
(``find_package(spare_fast)`` with ``CMAKE_PREFIX_PATH=$(python -m spare_fast --cmakedir)``);
examples/cython_montecarlo is a complete build.

Every method that validates its input is declared ``except +``: a C++ std::invalid_argument
becomes ValueError and std::out_of_range IndexError, and a rejected call changes nothing.
Declared ``nogil``: a controller touches no Python object, so a loop of decisions may run with
the GIL released (one controller per thread, or a lock around a shared one).
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libcpp cimport bool
from libcpp.string cimport string
from libcpp.vector cimport vector


cdef extern from "spare_fast/validate.hpp" namespace "spare_fast" nogil:
    # A read-only view of a contiguous array: the controller copies what it keeps.
    cdef cppclass Span[T]:
        Span()
        Span(const T* data, size_t size)
        size_t size


cdef extern from "spare_fast/controller.hpp" namespace "spare_fast" nogil:
    cpdef enum class Status(int32_t):
        kOk
        kWipeout

    # The result of one event; see controller.hpp for each field.
    cdef cppclass Decision:
        Decision()
        Status status
        int32_t phase
        int32_t depth
        int64_t moves
        int64_t swaps
        vector[int32_t] patch  # flattened (type, group) rows
        double seconds
        bool full_solve

    # No default constructor: hold it by pointer (new / del) or in a unique_ptr.
    cdef cppclass Controller:
        Controller(Span[int32_t] stacks, int64_t n_groups, int64_t height,
                   Span[int64_t] move_cost) except +
        Decision fail(Span[int32_t] groups) except +
        # fail() into a reused Decision (no allocation per event once its patch has grown).
        void fail_into(Span[int32_t] groups, Decision& d) except +
        # A cache hint for a caller that knows its next failure (see controller.hpp).
        void prefetch_failure(int32_t g, int stage)
        Decision rejoin(Span[int32_t] groups) except +
        Decision restart() except +
        string snapshot() except +
        @staticmethod
        Controller restore(const string& data) except +
        @staticmethod
        Decision solve(Span[int32_t] stacks, int64_t n_groups, int64_t height,
                       Span[uint8_t] alive, Span[int64_t] move_cost,
                       vector[int32_t]* assignment_out, vector[int32_t]* stacks_out) except +

        int32_t n_groups()
        int32_t n_types()
        int32_t height()
        int32_t redundancy()
        int32_t depth()
        int32_t n_alive()
        bool wiped_out()
        uint64_t events()
        const int32_t* stacks()
        const int32_t* initial_stacks()
        const uint8_t* alive()
        const int32_t* assignment()
        const int32_t* load()


cdef extern from "spare_fast/batch.hpp" namespace "spare_fast" nogil:
    # Column-wise decisions of fail_each (see batch.hpp).
    cdef cppclass FailEachResult:
        vector[int32_t] status
        vector[int32_t] depth
        vector[int64_t] moves
        vector[int64_t] swaps
        vector[uint8_t] full_solve
        vector[double] seconds
        vector[int32_t] patch
        vector[int64_t] patch_event
        size_t size()

    FailEachResult fail_each(Controller& controller, Span[int32_t] groups,
                             bool stop_at_wipeout) except +
