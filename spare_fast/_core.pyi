# Hand-written stubs for the C++ extension spare_fast._core (see csrc/bindings.cpp).
import numpy as np
import numpy.typing as npt

# -- Monte Carlo (register_montecarlo) ------------------------------------------------------
def _survived_failures(
    stacks: npt.ArrayLike, n_types: int, seed: int, first_trial: int, n_trials: int
) -> npt.NDArray[np.int64]: ...
