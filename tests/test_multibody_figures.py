"""Figures of the flexible double pendulum (nlid_core.figures.multibody) on synthetic runs, bounds and swarms:
the traces, frames and axes each figure promises, and specific errors for bad input."""

from __future__ import annotations

from types import SimpleNamespace as NS

import numpy as np
import pandas as pd
import pytest

from nlid_core.errors import DataValidationError
from nlid_core.figures import (
    fig_interval_bounds,
    fig_pendulum_animation,
    fig_surrogate_check,
    fig_swarm_convergence,
    fig_tip_trajectory,
)

T = np.round(np.arange(41) * 0.05, 12)


def run(model: str = "ancf", n_oa: int = 2, n_ab: int = 4, phase: float = 0.0) -> NS:
    """A double pendulum swinging rigidly (nodes evenly along OA and AB), in the core's layout."""
    th1 = np.pi / 4 + 0.4 * np.sin(2 * T + phase)
    th2 = np.pi / 6 + 0.7 * np.sin(3 * T + phase)
    a = np.stack([np.cos(th1), -np.sin(th1)], axis=-1)
    b = a + 2.0 * np.stack([np.cos(th2), -np.sin(th2)], axis=-1)
    s_oa = np.linspace(0.0, 1.0, n_oa + 1)
    s_ab = np.linspace(0.0, 1.0, n_ab + 1)[1:]
    nodes = np.concatenate([s_oa[None, :, None] * a[:, None, :],
                            a[:, None, :] + s_ab[None, :, None] * (b - a)[:, None, :]], axis=1)
    return NS(t=T.copy(), x_b=b[:, 0].copy(), y_b=b[:, 1].copy(), nodes=nodes, model=model)


def bounds(width: float = 0.05, r: NS | None = None) -> NS:
    r = r or run()
    return NS(t=r.t, x_min=r.x_b - width, x_max=r.x_b + width, y_min=r.y_b - width, y_max=r.y_b + width)


# --------------------------------------------------------------------------- animation
def test_animation_side_by_side_has_frames_slider_and_equal_scale():
    flex, rigid = run("ancf"), run("rigid", 1, 1, phase=0.3)
    fig = fig_pendulum_animation([flex, rigid])
    assert len(fig.frames) == T.size  # 41 samples <= max_frames: one frame each
    # per run: faint whole path, (pivot), path so far, rod, tip; the frames update the last three of each
    assert len(fig.frames[0].data) == 6 and len(fig.frames[0].traces) == 6
    names = [tr.name for tr in fig.data]
    assert "flexible (ANCF)" in names and "rigid" in names
    rod = next(tr for tr in fig.data if tr.name == "flexible (ANCF)")
    assert len(rod.x) == 7  # O, OA's interior node, A, AB's three interior nodes, B
    # the rod in the last frame is the last sample's node polyline; the traced tip path has grown to the end
    last = fig.frames[-1]
    k = list(last.traces).index(next(i for i, tr in enumerate(fig.data) if tr.name == "flexible (ANCF)"))
    np.testing.assert_allclose(last.data[k].x, flex.nodes[-1, :, 0])
    assert len(last.data[k - 1].x) == T.size
    # both panels: metres on both axes, one scale (y anchored to x), the same ranges
    assert fig.layout.xaxis.title.text == "x [m]" and fig.layout.yaxis.title.text == "y [m]"
    assert fig.layout.yaxis.scaleanchor == "x" and fig.layout.yaxis2.scaleanchor == "x2"
    assert tuple(fig.layout.xaxis.range) == tuple(fig.layout.xaxis2.range)
    lo, hi = fig.layout.yaxis.range
    assert lo < flex.y_b.min() and hi > 0.0  # the pivot and the lowest tip position are in view
    # play/pause buttons and a slider with one step per frame, labelled with the time
    buttons = fig.layout.updatemenus[0].buttons
    assert [b.method for b in buttons] == ["animate", "animate"] and "Play" in buttons[0].label
    steps = fig.layout.sliders[0].steps
    assert len(steps) == T.size and steps[-1].label == "2" and fig.layout.sliders[0].currentvalue.suffix == " s"


def test_animation_overlay_and_thinned_frames():
    fig = fig_pendulum_animation([run(), run("rigid", phase=0.5)], ["a", "b"], overlay=True, max_frames=9)
    assert len(fig.frames) == 9
    assert fig.frames[0].name == "0" and fig.frames[-1].name == "2"  # first and last sample kept
    assert "xaxis2" not in fig.layout or fig.layout.xaxis2.domain is None
    assert {tr.name for tr in fig.data} >= {"a", "b", "pivot O"}


def test_animation_refuses_runs_without_nodes_and_bad_labels():
    r = run()
    with pytest.raises(DataValidationError, match="nodes=True"):
        fig_pendulum_animation([NS(**{**vars(r), "nodes": None})])
    with pytest.raises(DataValidationError, match="shape"):
        fig_pendulum_animation([NS(**{**vars(r), "nodes": r.nodes[:, :, :1]})])
    with pytest.raises(DataValidationError, match="one label per item"):
        fig_pendulum_animation([r], ["a", "b"])
    with pytest.raises(DataValidationError, match="empty"):
        fig_pendulum_animation([])


def test_animation_of_a_failed_run_with_nan_rows_still_draws():
    r = run()
    nodes = r.nodes.copy()
    nodes[20:] = np.nan
    fig = fig_pendulum_animation([NS(**{**vars(r), "nodes": nodes, "x_b": nodes[:, -1, 0], "y_b": nodes[:, -1, 1]})])
    assert len(fig.frames) == T.size and np.all(np.isfinite(fig.layout.xaxis.range))


# --------------------------------------------------------------------------- tip trajectory
def test_tip_trajectory_with_measured_markers_and_the_misfit_row():
    flex, rigid = run(), run("rigid", phase=0.2)
    measured = pd.DataFrame({"t": T, "x_B": flex.x_b + 1e-3, "y_B": flex.y_b})
    fig = fig_tip_trajectory([flex, rigid], measured=measured, measured_label="paper, Table A1")
    marks = [tr for tr in fig.data if tr.mode == "markers"]
    assert len(marks) == 2 and marks[0].name == "paper, Table A1"
    assert fig.layout.yaxis.title.text == "x_B [m]" and fig.layout.yaxis2.title.text == "y_B [m]"
    # both runs are on the table's grid: a third row with run − table in mm (x and y per run)
    misfit = [tr for tr in fig.data if tr.yaxis == "y3"]
    assert len(misfit) == 4 and fig.layout.yaxis3.title.text == "run − table [mm]"
    np.testing.assert_allclose(misfit[0].y, -1.0)  # the flexible run's x is 1 mm below the "table"
    assert fig.layout.xaxis3.title.text == "t [s]"
    # a run on another grid: no misfit row
    coarse = NS(t=T[::2], x_b=flex.x_b[::2], y_b=flex.y_b[::2])
    fig = fig_tip_trajectory([coarse], measured=measured)
    assert "yaxis3" not in fig.layout or fig.layout.yaxis3.domain is None
    assert fig.layout.xaxis2.title.text == "t [s]" and len(fig.data) == 4
    with pytest.raises(DataValidationError, match="missing"):
        fig_tip_trajectory([flex], measured=measured.drop(columns="y_B"))
    with pytest.raises(DataValidationError, match="41"):
        fig_tip_trajectory([NS(t=T, x_b=flex.x_b[:-1], y_b=flex.y_b)])


# --------------------------------------------------------------------------- interval bounds
def test_interval_bounds_from_an_analysis_band_samples_vertex_and_given():
    b = bounds()
    analysis = NS(bounds=b, samples=(run(), run(phase=0.1)), vertex_bounds=bounds(0.03))
    fig = fig_interval_bounds(analysis, given=bounds(0.04))
    filled = [tr for tr in fig.data if tr.fill == "tonexty"]
    assert len(filled) == 2  # one band per row
    np.testing.assert_allclose(filled[0].y, b.x_min)
    samples = [tr for tr in fig.data if tr.name == "true runs inside the box"]
    assert len(samples) == 4 and sum(bool(tr.showlegend) for tr in samples) == 1
    dashed = [tr for tr in fig.data if tr.line.dash == "dash"]
    assert len(dashed) == 4  # vertex min and max in each row
    given = [tr for tr in fig.data if tr.mode == "markers"]
    assert len(given) == 4 and given[0].name == "given bounds"
    assert fig.layout.yaxis.title.text == "x_B [m]" and fig.layout.xaxis2.title.text == "t [s]"


def test_interval_bounds_alone_and_bad_bounds():
    fig = fig_interval_bounds(bounds())
    assert len(fig.data) == 4  # the bands only
    bad = bounds()
    bad.y_max = bad.y_max[:-3]
    with pytest.raises(DataValidationError, match="y_max"):
        fig_interval_bounds(bad)
    with pytest.raises(DataValidationError, match="no field"):
        fig_interval_bounds(NS(t=T))


# --------------------------------------------------------------------------- swarms and surrogate
def test_swarm_convergence_log_scale_and_labels():
    pso = NS(history=np.logspace(-1, -4, 101), method="pso")
    ipso = NS(history=np.logspace(-1, -6, 101), method="ipso")
    fig = fig_swarm_convergence([pso, ipso])
    assert [tr.name for tr in fig.data] == ["PSO", "IPSO"]
    assert fig.layout.yaxis.type == "log" and list(fig.data[0].x[:2]) == [0, 1] and len(fig.data[1].y) == 101
    assert fig.layout.xaxis.title.text.startswith("iteration") and "[m²]" in fig.layout.yaxis.title.text
    zero = NS(history=np.array([1.0, 0.0]), method="pso")
    assert fig_swarm_convergence([zero]).layout.yaxis.type == "linear"  # log of 0 is undefined


def test_surrogate_check_scatter_and_title():
    rng = np.random.default_rng(0)
    true = rng.normal(size=(6, 82))
    fig = fig_surrogate_check(NS(order=4, kind="total", holdout_rms=2e-4, holdout_max=6e-4), true, true + 1e-4)
    assert "order 4 (total)" in fig.layout.title.text and "0.2 mm" in fig.layout.title.text
    assert fig.data[1].x.size == true.size
    assert fig.layout.xaxis.title.text == "true [m]"
    with pytest.raises(DataValidationError, match="shape"):
        fig_surrogate_check(None, true, true[:, :3])


def test_with_a_real_run_when_the_core_is_there():
    pendulum = pytest.importorskip("nlid_core.multibody.pendulum")
    flex = pendulum.simulate(np.pi / 4, np.pi / 6, t_end=0.2, dt_out=0.05, nodes=True)
    rigid = pendulum.simulate_rigid(np.pi / 4, np.pi / 6, t_end=0.2, dt_out=0.05, nodes=True)
    fig = fig_pendulum_animation([flex, rigid])
    assert len(fig.frames) == 5 and {"flexible (ANCF)", "rigid"} <= {tr.name for tr in fig.data}
    assert len(fig_tip_trajectory([flex, rigid]).data) == 4


def test_interval_bounds_relative_to_the_mid_line_in_mm():
    b = bounds(0.05)
    coarse = bounds(0.04)
    coarse = NS(t=coarse.t[::4], x_min=coarse.x_min[::4], x_max=coarse.x_max[::4], y_min=coarse.y_min[::4],
                y_max=coarse.y_max[::4])
    fig = fig_interval_bounds(b, samples=(run(),), given=coarse, relative=True)
    band = [tr for tr in fig.data if tr.legendgroup == "band"]
    np.testing.assert_allclose(band[0].y, 50.0)  # upper bound of x: +50 mm about the mid-line
    np.testing.assert_allclose(band[1].y, -50.0)
    sample = next(tr for tr in fig.data if tr.name == "true runs inside the box")
    np.testing.assert_allclose(sample.y, 0.0, atol=1e-9)  # the run is the mid-line
    given = [tr for tr in fig.data if tr.mode == "markers"]
    assert len(given[0].x) == 11
    # the given bounds on a coarser grid: the mid-line is interpolated to their times (on the band's samples here)
    np.testing.assert_allclose(given[0].y, -40.0, atol=1e-9)
    assert fig.layout.yaxis.title.text == "x_B − mid-line [mm]"
    assert fig.layout.yaxis2.title.text == "y_B − mid-line [mm]"


def test_bending_is_exaggerated_about_each_rods_chord():
    from nlid_core.errors import ModelSpecError
    from nlid_core.figures.multibody import exaggerate_bending

    r = run()  # straight rods: nothing changes
    np.testing.assert_allclose(exaggerate_bending(r.nodes, 2, 10.0), r.nodes, atol=1e-12)
    bent = r.nodes.copy()
    bent[:, 4, :] += np.array([0.0, 0.01])  # AB's middle node 1 cm off (not along the chord in general)
    out = exaggerate_bending(bent, 2, 10.0)
    np.testing.assert_allclose(out[:, [0, 2, 6]], bent[:, [0, 2, 6]])  # O, A, B stay
    chord = bent[:, 6] - bent[:, 2]
    u = chord / np.linalg.norm(chord, axis=1, keepdims=True)

    def offset(p: np.ndarray) -> np.ndarray:
        d = p - bent[:, 2]
        return d[:, 0] * u[:, 1] - d[:, 1] * u[:, 0]

    np.testing.assert_allclose(offset(out[:, 4]), 10.0 * offset(bent[:, 4]), rtol=1e-9)
    fig = fig_pendulum_animation([NS(**{**vars(r), "nodes": bent})], exaggerate=10.0, joint=2)
    assert fig.layout.annotations[0].text == "flexible (ANCF), bending ×10"
    with pytest.raises(ModelSpecError, match="joint"):
        fig_pendulum_animation([r], exaggerate=10.0)
    with pytest.raises(DataValidationError, match="joint"):
        exaggerate_bending(r.nodes, 6, 2.0)
    with pytest.raises(ModelSpecError, match="factor"):
        exaggerate_bending(r.nodes, 2, 0.0)
