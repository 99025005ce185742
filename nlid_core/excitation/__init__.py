r"""Excitation signals for identification tests.

The force drives what an identification can see, so the design follows the
regimes of a single-DOF oscillator (seed 000/001 of the project):

* a **chirp** sweeps through the stiffness-dominated (below resonance),
  damping-dominated (at resonance) and inertia-dominated (above resonance)
  regimes in one record: :func:`linear_chirp` (the phase law of
  :func:`nlid_core.examples.chirp_force`) and :func:`log_chirp` (exponential
  sweep, equal time per octave);
* a **multisine** with Schroeder phases puts equal power on every line of a
  band with a low crest factor (≈ 1.6–1.7 for a low-pass band), so the test
  reaches a high rms force without large peaks, and it is exactly periodic,
  so periods can be averaged and compared (:func:`schroeder_multisine`);
* a **stepped sine** dwells at single frequencies, the cleanest view of
  harmonics and of the response amplitude at each frequency
  (:func:`stepped_sine`);
* **stepped amplitude** repeats one excitation at several levels, which
  reveals amplitude dependence (a linear system scales, a nonlinear one does
  not): :func:`stepped_amplitude`.

Every generator returns a frozen :class:`Excitation` (time, force, sampling
rate, kind and the design values in ``settings``). Samples lie on
``t = i / fs_hz`` for ``i = 0 .. n - 1`` with ``n = round(duration_s · fs_hz)``
(a shaker controller plays them at ``fs_hz``). Design limits, checked with a
:class:`~nlid_core.errors.ModelSpecError` naming the argument: at least
``MIN_SAMPLES`` samples, and the band below the Nyquist frequency divided by
``NYQUIST_MARGIN`` (at least 10 samples per cycle at the top of the band), so
that the simulator's cubic input reconstruction and derivative estimates from
the sampled response stay accurate.

``EXCITATIONS`` maps each ``kind`` to its generator; :func:`make_excitation`
dispatches by name with the settings as a mapping (for configuration files
and dashboards).

Modules: :mod:`~nlid_core.excitation.signal` (the :class:`Excitation` result and
:func:`crest_factor`), :mod:`~nlid_core.excitation.grid` (sample grid, design
limits, argument checks), :mod:`~nlid_core.excitation.sweeps` (chirps),
:mod:`~nlid_core.excitation.multisine`, :mod:`~nlid_core.excitation.stepped`
and :mod:`~nlid_core.excitation.registry` (``EXCITATIONS``, :func:`make_excitation`).
"""

from __future__ import annotations

from .grid import MIN_SAMPLES, NYQUIST_MARGIN
from .multisine import PHASE_LAWS, schroeder_multisine
from .registry import EXCITATIONS, make_excitation
from .signal import Excitation, crest_factor
from .stepped import stepped_amplitude, stepped_sine
from .sweeps import linear_chirp, log_chirp

__all__ = [
    "MIN_SAMPLES",
    "NYQUIST_MARGIN",
    "PHASE_LAWS",
    "EXCITATIONS",
    "Excitation",
    "crest_factor",
    "linear_chirp",
    "log_chirp",
    "schroeder_multisine",
    "stepped_sine",
    "stepped_amplitude",
    "make_excitation",
]
