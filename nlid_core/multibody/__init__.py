"""Flexible multibody dynamics and interval inverse problems (seed 002): the planar ANCF double pendulum
(:mod:`.pendulum`, kernels in :mod:`.ancf`, a plain-numpy twin in :mod:`.reference`), its deterministic inverse
problem (:mod:`.inverse`), Chebyshev surrogates (:mod:`.surrogate`), particle swarms (:mod:`.swarm`), parallel
forward runs (:mod:`.parallel`) and the interval forward and inverse analyses (:mod:`.interval`)."""
