"""Figures of the Friction & hysteresis page: the right traces, axis titles with units, reasons on hover."""

from __future__ import annotations

import numpy as np
import pytest

from nlid_core.errors import ModelSpecError
from nlid_core.figures import friction as ffig
from nlid_core.friction.experiments import friction_example
from nlid_core.friction.staged import FrictionOptions, identify_friction, replay_steady
from nlid_core.friction.stickslip import stick_slip
from nlid_core.hysteresis import benchmark_model, true_parameters
from nlid_core.models import TermModel
from nlid_core.nonlinearity.hysteresis import hysteretic_loops
from nlid_core.record import from_arrays
from nlid_core.simulate import simulate


@pytest.fixture(scope="module")
def friction():
    steady = friction_example("friction-staircase", overrides={"dwell_s": 0.3}).record
    pre = friction_example("friction-presliding", overrides={"duration_s": 0.5}).record
    result = identify_friction([steady], [pre], FrictionOptions(fixed={"m0": 1.0}))
    assert result.success, result.message
    return steady, pre, result


def names(fig):
    return [t.name for t in fig.data]


def test_plateau_figure_shades_accepted_and_explains_rejected(friction):
    steady, _, result = friction
    det = result.plateaus[0]
    fig = ffig.fig_plateaus(steady, det)
    speeds = [abs(p.velocity) for p in det.plateaus]
    assert max(speeds) > 10 * min(speeds)  # a Stribeck staircase spans decades: |v| on a log axis
    assert names(fig) == ["speed |v|", "accepted plateau", "rejected"] and fig.layout.yaxis.type == "log"
    assert len(fig.layout.shapes) == len(det.accepted) > 3 and det.rejected
    rejected = fig.data[2]
    assert len(rejected.x) == len(det.rejected)
    assert all(r.reason.split(" ")[0] in h for r, h in zip(det.rejected, rejected.hovertext))
    assert fig.layout.xaxis.title.text == "time [s]" and fig.layout.yaxis.title.text == "speed |v| (log) [m/s]"
    assert min(y for y in fig.data[1].y if y is not None) > 0


def test_stribeck_figure_has_points_with_error_bars_and_every_curve(friction):
    _, _, result = friction
    fig = ffig.fig_stribeck(result)
    assert names(fig)[:2] == ["plateaus, v > 0", "plateaus, v < 0"]
    assert fig.data[0].error_y.array is not None
    curves = [n.split(" (AIC")[0] for n in names(fig)[2:]]
    assert curves == [ffig.CURVE_LABELS[k] for k, c in result.curves.items() if c.success]
    assert "LuGre steady curve (Stribeck)" in curves
    assert fig.layout.xaxis.type == "log"
    assert fig.layout.xaxis.title.text == "speed |v| [m/s]"
    assert fig.layout.yaxis.title.text == "friction force |F| [N]"
    # the LuGre steady curve passes through the plateau points
    p = result.plateaus[0].accepted[0]
    assert result.curves["stribeck"].force(np.array([abs(p.velocity)]))[0] == pytest.approx(abs(p.force), rel=0.05)


def test_presliding_figure_is_in_micrometres(friction):
    _, pre, result = friction
    fit = result.presliding[0]
    fig = ffig.fig_presliding(fit, x_unit=pre.unit("x"))
    assert names(fig) == ["measured", "measured", "LuGre (identified)", "LuGre (identified)"]
    assert fig.layout.xaxis.title.text == "displacement [µm]"
    assert fig.layout.yaxis.title.text == "force [N]"
    assert fig.layout.xaxis2.title.text == "time [s]" and fig.layout.yaxis2.title.text == "displacement [µm]"
    assert np.max(np.abs(fig.data[0].x)) == pytest.approx(1e6 * np.max(np.abs(fit.x)), rel=1e-9)
    assert ffig.fig_presliding(fit, x_unit="mm").layout.xaxis.title.text == "displacement [mm]"


def test_steady_replay_figure(friction):
    steady, _, result = friction
    fig = ffig.fig_steady_replay(replay_steady(result, steady))
    assert names(fig)[0] == "measured f − m·a"
    assert names(fig)[1].startswith("LuGre") and names(fig)[2].startswith("static Stribeck")
    assert fig.layout.yaxis.title.text == "friction force [N]"


def test_stick_slip_figure_compares_truth_and_models():
    from nlid_core.friction.experiments import DEFAULT_TRUTH

    truth = stick_slip("lugre", dict(DEFAULT_TRUTH), duration_s=8.0, fs_hz=500.0)
    static = stick_slip("stribeck", dict(DEFAULT_TRUTH), duration_s=8.0, fs_hz=500.0)
    fig = ffig.fig_stick_slip(truth, {"static Stribeck": static})
    assert names(fig)[0].startswith("truth (simulated): period")
    assert names(fig)[1].startswith("static Stribeck")
    assert fig.layout.yaxis.title.text == "displacement [mm]"
    with pytest.raises(ModelSpecError, match="StickSlipResult"):
        ffig.fig_stick_slip(None, {})


def test_hysteretic_loops_figure():
    model = benchmark_model()
    t = np.arange(0, 1.0, 1 / 750)
    f = 40 * np.sin(2 * np.pi * 10 * t)
    x = simulate(model, t, f, true_parameters()).x
    loops = hysteretic_loops(from_arrays(t=t, f=f, x=x, name="bw"), model, true_parameters())
    assert loops.success and loops.nrmse < 0.1
    fig = ffig.fig_hysteretic_loops(loops)
    assert names(fig)[0] == "data: f − m·a − c·v" and names(fig)[1].startswith("fit: k·x + z")
    assert fig.data[0].mode == "lines" and fig.data[1].mode == "lines"  # loops, not a cloud of points
    assert fig.layout.xaxis.title.text == "displacement [m]"
    assert fig.layout.yaxis.title.text == "restoring force [N]"
    with pytest.raises(ModelSpecError, match="state `z`"):
        hysteretic_loops(from_arrays(t=t, f=f, x=x), TermModel("m0,c1,k1"), TermModel("m0,c1,k1").default_parameters())
