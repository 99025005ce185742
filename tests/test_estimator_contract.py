"""One contract for every estimator: a known answer, and intervals that cover it over a few noise draws.

Each member of :data:`ESTIMATORS` builds a small problem with a known truth for a noise draw and returns
what its estimator reports. The contract, checked the same way for each:

* every free parameter is reported as one type, :class:`nlid_core.estimate.ParameterEstimate`, with a finite
  standard error and an interval around its value;
* known answer: every estimate is within 4 standard errors of the truth;
* coverage: over the draws, at least 3 in 4 of the (draw, parameter) intervals contain the truth (95 %
  intervals give about 19 in 20; an interval overconfident by a factor of 3 covers about 1 in 2).

The friction stages are held to the same contract by ``tests/test_friction.py`` (one draw: the staged fit
costs about 30 s); the problems here take under a second or two each.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pytest

from nlid_core.estimate import FitOptions, ParameterEstimate, identify
from nlid_core.examples import SEED_TRUTH, make_example

Case = tuple[Sequence[ParameterEstimate], Mapping[str, float]]


def _seed_record(draw: int, noise: Mapping[str, float] | None = None):  # type: ignore[no-untyped-def]
    return make_example("seed", overrides={"seed": 100 + draw, **({"noise": noise} if noise else {})})


def _single_dof(method: str, noise: Mapping[str, float] | None = None) -> Callable[[int], Case]:
    def case(draw: int) -> Case:
        fit = identify(_seed_record(draw, noise), "m0,m1,c1,c2,k1,k3", options=FitOptions(method=method))
        assert fit.success, fit.message
        return [e for e in fit.estimates if e.vary], SEED_TRUTH
    return case


def _multi_dof(draw: int) -> Case:
    from nlid_core.mdof import experiments as ex
    from nlid_core.mdof.fit import fit_records
    from nlid_core.mdof.presets import chain

    model = chain(2)
    theta = model.parameters().values
    truth = dict(zip(model.param_names, theta.tolist(), strict=True))
    rec = ex.multi_excitation(model, theta, scale=[5.0], band=(1.0, 25.0), duration=6.0, rng=draw,
                              floor=1e-6)
    rng = np.random.default_rng(draw)
    start = model.parameters({n: v * rng.uniform(0.8, 1.2) for n, v in truth.items()})
    fit = fit_records(model, [rec], start, model.param_names)
    assert fit.success, fit.message
    return [e for e in fit.estimates if e.vary], truth


def _pendulum(draw: int) -> Case:
    from nlid_core.multibody.inverse import identify_trajectory
    from nlid_core.multibody.pendulum import PendulumSpec, SolverSettings, simulate

    truth = {"theta1": 1.0, "theta2": 0.7, "E_ab": 2.1e7}
    fast = SolverSettings(dt=1e-3)
    run = simulate(truth["theta1"], truth["theta2"], spec=PendulumSpec(e_ab=truth["E_ab"]), t_end=1.0, dt_out=0.05,
                   settings=fast)
    rng = np.random.default_rng(draw)
    x = run.x_b + rng.normal(0, 2e-4, run.t.size)
    y = run.y_b + rng.normal(0, 2e-4, run.t.size)
    fit = identify_trajectory(run.t, x, y, free=("theta1", "theta2", "E_ab"), settings=fast)
    assert fit.success, fit.message
    return list(fit.parameters), truth


#: Every estimator and its known-answer problem (a new estimator adds one line).
ESTIMATORS: Mapping[str, tuple[Callable[[int], Case], int]] = {
    # its own assumption: noise on the force only (noisy x, ẋ, ẍ bias it, and the fit says so)
    "equation-error": (_single_dof("equation-error", {"f": 0.05}), 3),
    "output-error": (_single_dof("output-error"), 3),
    "two-stage": (_single_dof("two-stage"), 3),
    "multi-dof": (_multi_dof, 3),
    "pendulum trajectory": (_pendulum, 3),
}


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_estimator_contract(name: str) -> None:
    case, draws = ESTIMATORS[name]
    inside = total = 0
    for draw in range(draws):
        estimates, truth = case(draw)
        assert estimates, f"{name}: nothing estimated"
        for e in estimates:
            assert isinstance(e, ParameterEstimate), type(e)
            assert math.isfinite(e.stderr) and e.stderr > 0 and e.ci[0] < e.value < e.ci[1], e
            t = truth[e.name]
            assert abs(e.value - t) <= 4 * e.stderr, (name, draw, e.name, e.value, t, e.stderr)
            inside += e.ci[0] <= t <= e.ci[1]
            total += 1
    assert inside >= 0.75 * total, f"{name}: {inside} of {total} intervals contain the truth"
