"""Development tooling: peers, reference solvers, graph instances and benchmark helpers.

Used by the tests, the benchmarks and the ``bench`` and ``demo`` commands; never imported by
the decision core (:mod:`spare_fast.controller`, :mod:`spare_fast.layout`, :mod:`spare_fast.sim`,
...), so nothing here is needed to run a job.

* :mod:`spare_fast.testing.peers`: the OR-Tools peer pipeline (max flow, min-cost flow).
* :mod:`spare_fast.testing.reference`: independent references (brute force, OR-Tools) for the
  controller's decisions.
* :mod:`spare_fast.testing.graph_instances`: SPARe-shaped graph instances for the kernels.
* :mod:`spare_fast.testing.bench`: the controller's speed figures (``spare-fast bench``).
"""
