"""Silverbox benchmark (real measurements): output-error simulation RMSE on the standard test parts.

Reference (data README): a 5-parameter Duffing grey-box fitted by output error reaches about
5.0 / 5.5 / 5.3 mV (multisine / arrow full / arrow without extrapolation) with first-order-hold
input. The requirement is <= 5.5 mV on the arrow and multisine tests.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from nlid_core.estimate import identify
from nlid_core.io import read_table
from nlid_core.record import from_arrays
from nlid_core.validation import validate

FS = 1e7 / 2**14  # 610.35 Hz


@pytest.fixture(scope="module")
def silverbox(silverbox_csv):
    df = read_table(silverbox_csv)
    u = df["V1"].to_numpy(dtype=float)
    y = df["V2"].to_numpy(dtype=float)
    t = np.arange(u.size) / FS

    def part(a, b, name):
        return from_arrays(t[a:b], u[a:b], y[a:b], name=name, units={"f": "V", "x": "V"})

    return {
        "train": part(40650, 40650 + 65062, "train"),
        "multisine": part(105712, 127400, "multisine test"),
        "arrow": part(100, 40575, "arrow test"),
    }


@pytest.fixture(scope="module")
def silverbox_fit(silverbox):
    fit = identify(silverbox["train"], "m0,c1,k1,k2,k3")
    assert fit.success, fit.message
    return fit


@pytest.mark.parametrize("part,limit_mv", [("multisine", 5.5), ("arrow", 5.5)])
def test_silverbox_simulation_rmse(silverbox, silverbox_fit, part, limit_mv):
    val = validate(silverbox_fit, silverbox[part], n_init=50)
    assert val.success, val.message
    rmse_mv = 1e3 * val.metric("x").rmse
    assert rmse_mv <= limit_mv, rmse_mv


def test_silverbox_arrow_without_extrapolation(silverbox, silverbox_fit):
    val = validate(silverbox_fit, silverbox["arrow"].slice(0, 32000), n_init=50)
    assert 1e3 * val.metric("x").rmse <= 5.5


def test_silverbox_units_and_parameters(silverbox_fit):
    # volt units carried into parameter units; hardening cubic spring
    assert silverbox_fit.estimate("k1").unit == "1"
    assert silverbox_fit.estimate("m0").unit == "s^2"
    assert silverbox_fit.estimate("k3").value > 0


def test_silverbox_through_the_cli(silverbox_csv, tmp_path):
    """The same study from the command line: time from --fs, the standard split from --rows."""
    import json

    from nlid_core.cli import main

    out = tmp_path / "sb.json"
    status = main([
        "identify", str(silverbox_csv), "--columns", "f=V1,x=V2", "--units", "f=V,x=V", "--fs", str(FS),
        "--rows", "40650:105712", "--terms", "m0,c1,k1,k2,k3", "--validate", str(silverbox_csv),
        "--validate-rows", "105712:127400", "--json", str(out), "--quiet",
    ])
    assert status == 0
    doc = json.loads(out.read_text())
    assert doc["validation"]["unit"] == "V"
    assert doc["validation"]["rmse"] * 1e3 <= 5.5


def test_the_guidance_finds_the_offset_and_leads_below_half_a_millivolt(silverbox, silverbox_fit):
    """The Duffing fit's residual sits at a ~5 mV mean; the note says so, the term check adds f0, and the model
    it proposes validates at <= 0.5 mV on both test parts (published black-box results: ~2 mV)."""
    from nlid_core import nonlinearity

    (note,) = silverbox_fit.metrics[0].notes(silverbox_fit.model.terms)
    assert re.search(r"mean of -[45]\.\d+ mV", note) and "add f0" in note  # (with k2: 4.1 mV, 74 % of it)
    oe = nonlinearity.term_check(silverbox["train"])
    assert oe is not None and oe.success and "f0" in oe.selected and "k3" in oe.nonlinear
    assert "f0" not in oe.nonlinear and "offset" in oe.findings()[0]
    fit = identify(silverbox["train"], oe.path[-1].terms)
    assert fit.success and not fit.metrics[0].notes(fit.model.terms)
    for part in ("multisine", "arrow"):
        val = validate(fit, silverbox[part], n_init=50)
        assert 1e3 * val.metric("x").rmse <= 0.5, (part, val.metric("x").rmse)
