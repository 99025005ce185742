"""Multi-channel evidence (nlid_core.nonlinearity.mimo) and its figures (nlid_core.figures.mdof).

Known answers: linear systems M q'' + C q' + K q = F simulated exactly in the frequency domain (the
periodic steady state of the trigonometric interpolant of random inputs, Y = H(ω) U at every DFT
line), whose FRF matrix H(ω) = (K − ω²M + iωC)⁻¹ is known in closed form; a Duffing oscillator
simulated at three levels; hand-computed fit metrics.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import signal

from nlid_core.errors import DataValidationError, ModelSpecError
from nlid_core.figures.mdof import (
    DiagramBody,
    DiagramEdge,
    DiagramNode,
    channel_fit_figure,
    coupling_figure,
    frf_matrix_figure,
    level_drift_figure,
    model_diagram,
)
from nlid_core.models import TermModel
from nlid_core.nonlinearity.mimo import (
    MAX_INPUT_CONDITION,
    channel_fit,
    coupling,
    frf_matrix,
    level_drift,
)
from nlid_core.simulate import simulate

DT = 0.01
# 2-DOF chain (two masses, springs to ground and between them)
M2 = np.diag([1.0, 2.0])
K2 = np.array([[300.0, -100.0], [-100.0, 200.0]])
C2 = 0.002 * K2 + 0.1 * M2
# 3-DOF rigid body in the plane (x, y, rotation), mounts off the centre of gravity couple x and y to the rotation
M3 = np.diag([10.0, 10.0, 0.8])
K3 = np.array([[4000.0, 0.0, -400.0], [0.0, 6000.0, 900.0], [-400.0, 900.0, 900.0]])
C3 = 0.003 * K3 + 0.2 * M3
NAMES3 = {"input_names": ["Fx", "Fy", "Mz"], "output_names": ["x", "y", "psi"],
          "input_units": ["N", "N", "N·m"], "output_units": ["m", "m", "rad"]}


def analytic_frf(m: np.ndarray, c: np.ndarray, k: np.ndarray, f_hz: np.ndarray) -> np.ndarray:
    w = 2 * np.pi * np.asarray(f_hz)
    z = k[None] - (w**2)[:, None, None] * m[None] + 1j * w[:, None, None] * c[None]
    return np.linalg.solve(z, np.broadcast_to(np.eye(k.shape[0]), z.shape))


def simulate_freq(m: np.ndarray, c: np.ndarray, k: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Exact periodic response to the band-limited interpolant of ``u`` (time-major)."""
    n = u.shape[0]
    spec = np.fft.rfft(u, axis=0)
    h = analytic_frf(m, c, k, np.fft.rfftfreq(n, DT))
    return np.fft.irfft(np.einsum("fij,fj->fi", h, spec), n, axis=0)


def rel_error(est, m, c, k, mask=None):
    truth = analytic_frf(m, c, k, est.freq_hz)
    err = np.abs(est.H - truth) / np.abs(truth)
    return err[est.valid if mask is None else mask]


# --------------------------------------------------------------------------- frf_matrix


def test_two_dof_random_inputs_matches_analytic_and_coherence_is_one():
    rng = np.random.default_rng(1)
    u = rng.standard_normal((2**15, 2))
    est = frf_matrix([(u, simulate_freq(M2, C2, K2, u))], DT, input_names=["F1", "F2"], output_names=["x1", "x2"],
                     input_units=["N", "N"], output_units=["m", "m"])
    assert est.success and est.H.shape == (est.freq_hz.size, 2, 2)
    assert est.n_averages == 15  # default nperseg 2048: (32768 - 2048) / 1024 + 1
    err = rel_error(est, M2, C2, K2)
    # noise-free: only Hann leakage near the lightly damped modes; measured median 0.66 %
    assert np.median(err) < 0.03
    assert est.valid.mean() > 0.9
    # no noise: the multiple coherence is 1 up to leakage (measured median 1 - 1.2e-6)
    assert np.median(est.coherence_multiple[est.valid[:, :, 0]]) > 0.999
    assert est.units == (("m/N", "m/N"), ("m/N", "m/N"))
    assert np.allclose(est.input_rms, 1.0, atol=0.03)  # unit-variance white inputs


def test_one_input_at_a_time_records_of_different_lengths_3x3():
    rng = np.random.default_rng(2)
    records = []
    for j, n in enumerate((2**14, 3 * 2**13, 2**15)):
        u = np.zeros((n, 3))
        u[:, j] = rng.standard_normal(n) * (1.0 if j < 2 else 0.2)
        records.append((u, simulate_freq(M3, C3, K3, u)))
    est = frf_matrix(records, DT, nperseg=1024, **NAMES3)
    assert est.n_averages == 31 + 47 + 63
    assert est.units[2] == ("rad/N", "rad/N", "rad/(N·m)")
    assert est.units[0][2] == "m/(N·m)"
    err = rel_error(est, M3, C3, K3)
    assert np.median(err) < 0.03  # measured 0.12 %
    assert all(r == "" for r in est.reason[1:])
    frame = est.to_frame()
    assert len(frame) == est.freq_hz.size * 9 and {"unit", "valid", "magnitude_std"} <= set(frame.columns)


def test_output_noise_lowers_coherence_as_predicted_and_errors_match_random_error():
    rng = np.random.default_rng(3)
    n = 2**16
    u = rng.standard_normal((n, 3)) * np.array([1.0, 1.0, 0.2])
    clean = simulate_freq(M3, C3, K3, u)
    noise = rng.standard_normal(clean.shape) * 0.3 * clean.std(axis=0)
    est = frf_matrix([(u, clean + noise)], DT, nperseg=1024, **NAMES3)
    # expected multiple coherence: clean power / (clean + noise power), from scipy's Welch (independent code)
    _, p_clean = signal.welch(clean, fs=1 / DT, nperseg=1024, axis=0)
    _, p_noise = signal.welch(noise, fs=1 / DT, nperseg=1024, axis=0)
    expected = p_clean / (p_clean + p_noise)
    ok = est.valid.all(axis=2)
    gap = np.abs(est.coherence_multiple - expected)[ok]
    assert np.median(gap) < 0.03  # measured 0.009 (the estimate's own scatter with 127 averages)
    assert np.median(est.coherence_multiple[ok]) < 0.97  # noise is seen ...
    assert np.median(est.coherence_multiple[ok]) > 0.5  # ... but keeps most lines valid
    # |H1 - H|² / (2 σ²) is exponential with mean 1 if σ (the standard uncertainty of |H|) is right:
    # its median should be ln 2 ≈ 0.69; leakage bias and correlated neighbours allow a wide margin.
    truth = analytic_frf(M3, C3, K3, est.freq_hz)
    z2 = (np.abs(est.H - truth) ** 2 / (2 * est.h_std**2))[est.valid]
    assert 0.4 < np.median(z2) < 1.2  # measured 0.80
    # tail: P(z² > 4.6) = 1 % for the exponential; leakage bias near the resonances adds some (measured 6 %)
    assert np.mean(z2 > 4.6) < 0.1


def test_unexcited_input_gives_nan_column_with_reason():
    rng = np.random.default_rng(4)
    u = rng.standard_normal((2**14, 3))
    u[:, 2] = 0.0
    m, c, k = M2, C2, K2
    y = simulate_freq(m, c, k, u[:, :2])
    est = frf_matrix([(u, y)], DT, input_names=["Fx", "Fy", "Mz"], output_names=["x", "y"],
                     input_units=["N", "N", "N·m"], output_units=["m", "m"])
    assert np.isnan(est.H[:, :, 2]).all() and not est.valid[:, :, 2].any()
    assert all("`Mz` not excited" in r for r in est.reason)
    assert np.isnan(est.band_hz[2]).all()
    truth = analytic_frf(m, c, k, est.freq_hz)
    err = np.abs(est.H[:, :, :2] - truth) / np.abs(truth)
    assert np.median(err[est.valid[:, :, :2]]) < 0.03  # the excited columns are unaffected (measured 1.4 %)
    assert est.success and "`Mz` not excited" in est.message


def test_correlated_inputs_are_refused():
    rng = np.random.default_rng(5)
    u = rng.standard_normal((2**14, 2))
    u[:, 1] = 2.0 * u[:, 0] + 1e-6 * u[:, 1]  # input coherence 1 - 1e-13
    y = simulate_freq(M2, C2, K2, u)
    est = frf_matrix([(u, y)], DT, input_names=["F1", "F2"], output_names=["x1", "x2"],
                     input_units=["N", "N"], output_units=["m", "m"])
    assert not est.success and not est.valid.any()
    assert np.isnan(est.H[1:]).all()
    assert np.nanmin(est.condition[1:]) > MAX_INPUT_CONDITION
    assert "ill-conditioned" in est.reason[10] and "no valid line" in est.message


def test_frf_matrix_validation():
    u = np.ones((256, 2))
    y = np.ones((256, 1))
    kw = {"input_names": ["a", "b"], "output_names": ["y"], "input_units": ["N", "N"], "output_units": ["m"]}
    with pytest.raises(DataValidationError, match="u has 256 samples but y has 255"):
        frf_matrix([(u, y[:-1])], DT, **kw)
    bad = u.copy()
    bad[7, 1] = np.nan
    with pytest.raises(DataValidationError, match=r"`segments\[0\]\[0\]` has a non-finite value at sample 7"):
        frf_matrix([(bad, y)], DT, **kw)
    with pytest.raises(ModelSpecError, match="`input_names` must hold 2"):
        frf_matrix([(u, y)], DT, **(kw | {"input_names": ["a"]}))
    with pytest.raises(DataValidationError, match="at least 2 are needed"):
        frf_matrix([(u, y)], DT, nperseg=256, **kw)
    with pytest.raises(DataValidationError, match="has 3 channels, expected 2"):
        frf_matrix([(u, y), (np.ones((256, 3)), y)], DT, **kw)
    with pytest.raises(ModelSpecError, match="`dt`"):
        frf_matrix([(u, y)], -1.0, **kw)
    with pytest.raises(DataValidationError, match="2-D"):
        frf_matrix([(u[:, 0], y)], DT, **kw)


# --------------------------------------------------------------------------- coupling


def test_coupling_uncoupled_system_is_diagonal():
    rng = np.random.default_rng(6)
    m, c, k = np.diag([1.0, 2.0, 0.5]), np.diag([2.4, 3.0, 0.9]), np.diag([300.0, 500.0, 100.0])
    u = rng.standard_normal((2**16, 3))
    est = frf_matrix([(u, simulate_freq(m, c, k, u))], DT, **NAMES3)
    table = coupling(est)
    assert table.main_input == ("Fx", "Fy", "Mz")
    off = ~np.eye(3, dtype=bool)
    assert np.all(table.relative[off] < 0.01)  # measured 0.3-0.6 %
    # what is left off the diagonal is the random error (leakage of the segments): for a complex
    # Gaussian error of standard uncertainty σ per component, E|ΔH| = σ·sqrt(π/2) ≈ 1.25 σ
    ratio = np.array([[np.abs(est.H[est.valid[:, i, j], i, j]).mean() / est.h_std[est.valid[:, i, j], i, j].mean()
                       for j in range(3)] for i in range(3)])
    assert np.all((ratio[off] > 0.6) & (ratio[off] < 2.5))  # measured 1.19-1.50


def test_coupling_of_coupled_system_matches_analytic_ratio():
    rng = np.random.default_rng(7)
    u = rng.standard_normal((2**15, 3)) * np.array([1.0, 1.0, 0.2])
    est = frf_matrix([(u, simulate_freq(M3, C3, K3, u))], DT, **NAMES3)
    table = coupling(est)
    # the definition applied to the analytic H on the same valid lines and input levels
    truth = np.abs(analytic_frf(M3, C3, K3, est.freq_hz))
    c_true = np.array([[truth[est.valid[:, i, j], i, j].mean() * est.input_rms[j] for j in range(3)]
                       for i in range(3)])
    r_true = c_true / c_true.max(axis=1, keepdims=True)
    assert np.allclose(table.relative, r_true, rtol=0.02)  # measured within 0.8 %
    assert table.main_input == tuple(est.input_names[int(j)] for j in np.argmax(c_true, axis=1))
    assert 0.01 < r_true[0, 2] < 1  # x does respond to Mz: a real cross-coupling is reported
    frame = table.to_frame()
    assert len(frame) == 9 and frame["relative_percent"].max() == pytest.approx(100.0)
    # weighting by other input levels scales the contributions
    scaled = coupling(est, input_rms=[1.0, 1.0, 1.0])
    assert scaled.contribution[0, 2] == pytest.approx(table.contribution[0, 2] / est.input_rms[2], rel=1e-12)


# --------------------------------------------------------------------------- level drift

FS_DUFF = 50.0
N_DUFF = 16384
K_DUFF = (2 * np.pi * 2.0) ** 2  # f_n = 2 Hz at low level
C_DUFF = 2 * 0.05 * math.sqrt(K_DUFF)  # ζ = 5 %


def _duffing_levels(k3: float) -> dict[str | float, tuple[np.ndarray, np.ndarray]]:
    t = np.arange(N_DUFF) / FS_DUFF
    sos = signal.butter(4, [0.5, 6.0], btype="bandpass", fs=FS_DUFF, output="sos")
    out: dict[str | float, tuple[np.ndarray, np.ndarray]] = {}
    for seed, level in enumerate((4.5, 0.5, 1.5)):  # deliberately unsorted
        f = signal.sosfilt(sos, np.random.default_rng(10 + seed).standard_normal(N_DUFF))
        f *= level / np.std(f)
        sim = simulate(TermModel("m0,c1,k1,k3"), t, f, np.array([1.0, C_DUFF, K_DUFF, k3]))
        assert sim.success
        out[level] = (np.column_stack([f, 0.01 * f]), sim.x[:, None])
    return out


@pytest.fixture(scope="module")
def hardening():
    return level_drift(_duffing_levels(6e3), 1 / FS_DUFF, input_index=0, output_index=0, input_name="Fz",
                       output_name="z")


def test_level_drift_duffing_hardening_frequency_goes_up(hardening):
    drift = hardening
    assert drift.labels == ("0.5", "1.5", "4.5")
    assert np.all(np.diff(drift.input_rms) > 0)
    # equivalent linearisation: k_eq = k + 3 k3 σx² raises f_n by ~10 % at the highest level (measured
    # 2.007 -> 2.193 Hz, 15 combined standard uncertainties)
    assert drift.frequency_trend == "up" and drift.peak_hz[-1] > 1.05 * drift.peak_hz[0]
    assert np.all(np.diff(drift.peak_hz) > 0)
    assert drift.peak_hz[0] == pytest.approx(2.0 * math.sqrt(1 - 2 * 0.05**2), rel=0.03)
    assert "hardening" in drift.verdict and drift.success
    assert np.all(drift.peak_hz_u > 0) and np.all(drift.peak_gain_u > 0)
    assert len(drift.to_frame()) == 3


def test_level_drift_linear_reports_no_drift():
    drift = level_drift(_duffing_levels(0.0), 1 / FS_DUFF, input_index=0, output_index=0)
    assert drift.frequency_trend == "none" and drift.gain_trend == "none"
    assert "no drift beyond the uncertainty" in drift.verdict
    # the three estimates agree within their own uncertainties (|Δ| / u_c measured 0.46)
    z = abs(drift.peak_hz[-1] - drift.peak_hz[0]) / math.hypot(drift.peak_hz_u[0], drift.peak_hz_u[-1])
    assert z < 2
    # the linear peak gain is 1 / (2 ζ k sqrt(1 - ζ²)); H1 and the parabola land within a few % (leakage)
    assert drift.peak_gain[0] == pytest.approx(1 / (2 * 0.05 * K_DUFF * math.sqrt(1 - 0.05**2)), rel=0.05)


def test_level_drift_validation():
    with pytest.raises(DataValidationError, match="non-empty mapping"):
        level_drift({}, 0.01, input_index=0, output_index=0)
    with pytest.raises(ModelSpecError, match="`input_index`"):
        level_drift({"a": (np.ones((512, 1)), np.ones((512, 1)))}, 0.01, input_index=1, output_index=0)


# --------------------------------------------------------------------------- channel fit


def test_channel_fit_against_hand_values():
    measured = np.array([[1.0, 0.0], [2.0, 1.0], [3.0, 0.0], [4.0, 1.0]])
    simulated = np.array([[1.0, 0.0], [2.0, 1.0], [3.0, 0.5], [5.0, 1.0]])
    fits = channel_fit(measured, simulated, ["z", "psi"], ["m", "rad"])
    # z: ‖y − ŷ‖ = 1, ‖y − ȳ‖ = sqrt(5) -> 100 (1 − 1/√5); rmse = sqrt(1/4) = 0.5;
    # nrmse = 0.5 / std(y) = 0.5 / sqrt(1.25)
    assert fits.fit_percent[0] == pytest.approx(100 * (1 - 1 / math.sqrt(5)))
    assert fits.rmse[0] == pytest.approx(0.5)
    assert fits.nrmse[0] == pytest.approx(0.5 / math.sqrt(1.25))
    # psi: ‖y − ŷ‖ = 0.5, ‖y − ȳ‖ = 1 -> 50 %; rmse = 0.25
    assert fits.fit_percent[1] == pytest.approx(50.0)
    assert fits.rmse[1] == pytest.approx(0.25)
    late = channel_fit(measured, simulated, ["z", "psi"], ["m", "rad"], start=2)
    assert late.start == 2 and late.rmse[0] == pytest.approx(math.sqrt(0.5))
    frame = fits.to_frame()
    assert list(frame["unit"]) == ["m", "rad"] and fits.success
    with pytest.raises(ModelSpecError, match="`names` must hold 2"):
        channel_fit(measured, simulated, ["z"], ["m", "rad"])
    with pytest.raises(DataValidationError, match="`simulated` has 3 channels"):
        channel_fit(measured, np.ones((4, 3)), ["z", "psi"], ["m", "rad"])


# --------------------------------------------------------------------------- figures


@pytest.fixture(scope="module")
def est3():
    rng = np.random.default_rng(8)
    u = rng.standard_normal((2**13, 3)) * np.array([1.0, 1.0, 0.2])
    y = simulate_freq(M3, C3, K3, u)
    return frf_matrix([(u, y + 1e-3 * y.std(axis=0) * rng.standard_normal(y.shape))], DT, **NAMES3)


def _axis_titles(fig) -> list[str]:
    lay = fig.to_dict()["layout"]
    return [v["title"]["text"] for k, v in lay.items() if k.startswith(("xaxis", "yaxis")) and "title" in v]


def test_frf_matrix_figure(est3):
    fig = frf_matrix_figure(est3)
    titles = _axis_titles(fig)
    assert "|H| [rad/(N·m)]" in titles and "|H| [m/N]" in titles and "frequency [Hz]" in titles
    names = [a["text"] for a in fig.to_dict()["layout"]["annotations"]]
    assert "Fx → psi" in names and "Mz → x" in names
    # per cell a valid (solid) and a faded (invalid) trace, plus one coherence trace per output
    assert len(fig.data) == 3 * 3 * 2 + 3
    assert fig.to_dict()["layout"]["xaxis"]["type"] == "log"
    small = frf_matrix_figure(est3, max_outputs=2, max_inputs=1)
    assert len(small.data) == 2 * 1 * 2 + 2
    with pytest.raises(DataValidationError):
        frf_matrix_figure("nope")


def test_coupling_and_channel_fit_figures(est3):
    table = coupling(est3)
    fig = coupling_figure(table)
    heat = fig.data[0]
    assert heat.type == "heatmap" and np.asarray(heat.z).shape == (3, 3)
    assert np.nanmax(np.asarray(heat.z, dtype=float)) == pytest.approx(100.0)
    assert any("%" in str(t) for row in heat.text for t in row)
    t = np.arange(200) * DT
    meas = np.column_stack([np.sin(t), np.cos(t)])
    sim = meas * 0.9
    fits = channel_fit(meas, sim, ["z", "psi"], ["m", "rad"])
    fig2 = channel_fit_figure(t, meas, sim, ["z", "psi"], ["m", "rad"], fits)
    assert len(fig2.data) == 4
    titles = _axis_titles(fig2)
    assert "z [m]" in titles and "psi [rad]" in titles and "time [s]" in titles
    panel_titles = [a["text"] for a in fig2.to_dict()["layout"]["annotations"]]
    assert f"z: fit {fits.fit_percent[0]:.1f} %" in panel_titles


def test_level_drift_figure(hardening):
    fig = level_drift_figure(hardening)
    assert len(fig.data) == 2
    assert all(d.error_y.array is not None and len(d.error_y.array) == 3 for d in fig.data)
    titles = _axis_titles(fig)
    assert "Fz rms [N]" in titles and "peak frequency [Hz]" in titles and "peak gain |H| [m/N]" in titles


def test_model_diagram_chain_and_platform():
    nodes = [DiagramNode("ground", 0.0, 0.0, "ground")] + [
        DiagramNode(f"m{i}", float(i), 0.0, "mass") for i in range(1, 8)]
    edges = [DiagramEdge(nodes[i].name, nodes[i + 1].name, f"k{i + 1}, c{i + 1}") for i in range(7)]
    fig = model_diagram(nodes, edges, title="8-node chain")
    layout = fig.to_dict()["layout"]
    assert layout["yaxis"]["scaleanchor"] == "x"
    texts = [a["text"] for a in layout["annotations"]]
    assert all(n.name in texts for n in nodes) and "k3, c3" in texts
    boxes = _label_boxes(fig)
    assert not any(_overlap(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    mounts = [DiagramNode(f"mount {i}", x, y, "mount") for i, (x, y) in enumerate(
        [(0.4, 0.3), (0.4, -0.3), (-0.4, 0.3), (-0.4, -0.3)])]
    points = [DiagramNode("O", 0.0, 0.0, "body_point"), DiagramNode("CoG", 0.05, 0.02, "body_point")]
    body = DiagramBody("platform", (0.5, 0.5, -0.5, -0.5), (0.4, -0.4, -0.4, 0.4))
    fig2 = model_diagram(mounts + points, [], title="platform (top view)", bodies=(body,))
    boxes2 = _label_boxes(fig2)
    assert not any(_overlap(a, b) for i, a in enumerate(boxes2) for b in boxes2[i + 1:])
    assert any(d.fill == "toself" for d in fig2.data)
    with pytest.raises(ModelSpecError, match="unknown node"):
        model_diagram(nodes, [DiagramEdge("m1", "nowhere", "k")], title="x")
    with pytest.raises(ModelSpecError, match="`kind`"):
        DiagramNode("a", 0.0, 0.0, "planet")


def _label_boxes(fig):
    """Pixel boxes of the annotations, as the figure places them (x/y in data units + shift in px)."""
    from nlid_core.figures.diagram import _label_box_px

    return [_label_box_px(fig, a) for a in fig.layout.annotations]


def _overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_frf_output_figure_draws_one_output_with_every_input_as_a_line(est3):
    from nlid_core.figures.mdof import frf_output_figure

    fig = frf_output_figure(est3, "psi")
    assert [t.name for t in fig.data if t.showlegend is not False][:3] == ["Fx [rad/N]", "Fy [rad/N]", "Mz [rad/(N·m)]"]
    assert len(fig.data) == 3 * 2 + 1 and fig.to_dict()["layout"]["xaxis"]["type"] == "log"
    assert "|H| [rad/(N·m), rad/N]" in _axis_titles(fig) and "frequency [Hz]" in _axis_titles(fig)
    assert frf_output_figure(est3, 0).layout.title.text.startswith("FRFs into x")
    with pytest.raises(DataValidationError):
        frf_output_figure(est3, "nope")
