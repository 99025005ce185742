"""What a batch has produced, read from its study: the coverage summary of a Monte Carlo set, the table of
a grid set and the status of the latest set (runs stored against items planned)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..jsonsafe import finite_or_none
from .items import _float

if TYPE_CHECKING:
    from ..store.db import Store

#: Label of the run holding a set's spec.
SPEC_LABEL = "batch spec"
#: z of the two-sided 95 % band of a binomial proportion.
_Z95 = 1.959963984540054

__all__ = ["SPEC_LABEL", "ParameterCoverage", "MonteCarloSummary", "GridRow", "BatchStatus", "summarize_monte_carlo",
           "summarize_grid", "batch_status"]


_SPEC_KEY = re.compile(r"s(\d+)\|spec=([0-9a-f]{16})")


@dataclass(frozen=True, kw_only=True)
class ParameterCoverage:
    """Monte Carlo statistics of one free parameter over the successful draws.

    Attributes
    ----------
    name : str
    truth : float
    n : int
        Draws with an estimate.
    mean, bias, spread : float
        Mean estimate, mean − truth, sample standard deviation (ddof 1).
    mean_stderr : float
        Mean reported standard error.
    coverage : float
        Fraction of the intervals (at the fit's confidence) that hold the truth.
    coverage_se : float
        Its binomial standard error ``sqrt(c (1 − c) / n)``.
    nominal : float
        The intervals' confidence level.
    band : (float, float)
        The 95 % band of the coverage of n draws if the intervals were exact:
        ``nominal ± 1.96 sqrt(nominal (1 − nominal) / n)``, clipped to [0, 1].
    """

    name: str
    truth: float
    n: int
    mean: float
    bias: float
    spread: float
    mean_stderr: float
    coverage: float
    coverage_se: float
    nominal: float
    band: tuple[float, float]

    @property
    def within_band(self) -> bool:
        """True when the coverage lies in :attr:`band`."""
        return self.band[0] <= self.coverage <= self.band[1]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (NaN as None)."""
        return {"name": self.name, "truth": self.truth, "n": self.n, "mean": finite_or_none(self.mean),
                "bias": finite_or_none(self.bias), "spread": finite_or_none(self.spread), "mean_stderr": finite_or_none(self.mean_stderr),
                "coverage": finite_or_none(self.coverage), "coverage_se": finite_or_none(self.coverage_se), "nominal": self.nominal,
                "band": [finite_or_none(self.band[0]), finite_or_none(self.band[1])], "within_band": self.within_band}


@dataclass(frozen=True, kw_only=True)
class MonteCarloSummary:
    """Per-parameter statistics of a Monte Carlo set.

    Attributes
    ----------
    n_draws, n_ok, n_failed : int
    parameters : tuple of ParameterCoverage
    """

    n_draws: int
    n_ok: int
    n_failed: int
    parameters: tuple[ParameterCoverage, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"n_draws": self.n_draws, "n_ok": self.n_ok, "n_failed": self.n_failed,
                "parameters": [p.to_dict() for p in self.parameters]}


@dataclass(frozen=True, kw_only=True)
class GridRow:
    """One stored item of a grid set.

    Attributes
    ----------
    key, record, variant : str
    success : bool
    message : str
    cost : float
    values, stderr : mapping of str to float
    """

    key: str
    record: str
    variant: str
    success: bool
    message: str
    cost: float
    values: Mapping[str, float]
    stderr: Mapping[str, float]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (NaN as None)."""
        return {"key": self.key, "record": self.record, "variant": self.variant, "success": self.success,
                "message": self.message, "cost": finite_or_none(self.cost),
                "parameters": {k: {"value": finite_or_none(v), "stderr": finite_or_none(self.stderr.get(k, math.nan))}
                               for k, v in self.values.items()}}


@dataclass(frozen=True, kw_only=True)
class BatchStatus:
    """The latest run set of a study.

    Attributes
    ----------
    batch_set : int
        0 when the study holds no batch.
    kind : str
    spec_sha256 : str
    n_items, n_done, n_failed : int
    """

    batch_set: int
    kind: str
    spec_sha256: str
    n_items: int
    n_done: int
    n_failed: int


def _latest_set(keys: frozenset[str]) -> tuple[int, str]:
    best = (0, "")
    for k in keys:
        m = _SPEC_KEY.fullmatch(k)
        if m and int(m.group(1)) > best[0]:
            best = (int(m.group(1)), m.group(2))
    return best


def _set_runs(store: Store, owner: str, study_id: int, batch_set: int) -> list[Any]:
    """The item runs of one set, oldest first."""
    from ..store.studies import list_runs

    out = []
    for r in list_runs(store, owner, study_id):
        b = r.config.get("batch") if isinstance(r.config, Mapping) else None
        if isinstance(b, Mapping) and b.get("set") == batch_set and r.label != SPEC_LABEL:
            out.append(r)
    return out


def summarize_monte_carlo(results: Sequence[Mapping[str, Any]]) -> MonteCarloSummary:
    """Mean, bias, spread, mean standard error and interval coverage per parameter.

    Parameters
    ----------
    results : sequence of mapping
        The ``result`` documents of the draws (:func:`run_monte_carlo_item`).

    Returns
    -------
    MonteCarloSummary

    Notes
    -----
    Over the ``n`` successful draws with an estimate: bias = mean − truth, spread = sample standard
    deviation (ddof 1), coverage ``c`` = the fraction of intervals holding the truth with binomial
    standard error ``sqrt(c (1 − c) / n)``; exact intervals at level ``p`` would give a coverage in
    ``p ± 1.96 sqrt(p (1 − p) / n)`` 95 % of the time.
    """
    ok = [r for r in results if r.get("success") and isinstance(r.get("parameters"), Mapping)]
    names: dict[str, None] = {}
    for r in ok:
        for n in r["parameters"]:
            names.setdefault(str(n))
    nominal = float(ok[0].get("confidence", 0.95)) if ok else 0.95
    rows = []
    for name in names:
        ps = [r["parameters"][name] for r in ok if name in r["parameters"]]
        vals = np.array([_float(p.get("value")) for p in ps])
        ses = np.array([_float(p.get("stderr")) for p in ps])
        truth = _float(ps[0].get("truth")) if ps else math.nan
        covers = np.array([bool(p.get("covers")) for p in ps])
        n = int(np.isfinite(vals).sum())
        mean = float(np.nanmean(vals)) if n else math.nan
        spread = float(np.nanstd(vals, ddof=1)) if n > 1 else math.nan
        c = float(covers.mean()) if covers.size else math.nan
        se = math.sqrt(c * (1 - c) / covers.size) if covers.size else math.nan
        half = _Z95 * math.sqrt(nominal * (1 - nominal) / covers.size) if covers.size else math.nan
        rows.append(ParameterCoverage(
            name=name, truth=truth, n=n, mean=mean, bias=mean - truth, spread=spread,
            mean_stderr=float(np.nanmean(ses)) if np.isfinite(ses).any() else math.nan, coverage=c,
            coverage_se=se, nominal=nominal, band=(max(nominal - half, 0.0), min(nominal + half, 1.0))))
    return MonteCarloSummary(n_draws=len(results), n_ok=len(ok), n_failed=len(results) - len(ok),
                             parameters=tuple(rows))


def summarize_grid(runs: Sequence[Any]) -> tuple[GridRow, ...]:
    """One row per stored grid item: record, variant, success, cost, values and standard errors.

    Parameters
    ----------
    runs : sequence of Run
        The set's item runs.

    Returns
    -------
    tuple of GridRow
    """
    rows = []
    for r in runs:
        res = r.result if isinstance(r.result, Mapping) else {}
        params = res.get("parameters", {})
        params = params if isinstance(params, Mapping) else {}
        rec = r.config.get("record", {})
        var = r.config.get("variant", {})
        rows.append(GridRow(
            key=str(r.config.get("item_key", "")) or r.label, record=str(rec.get("name", "")),
            variant=str(var.get("label", "")), success=bool(r.success), message=str(res.get("message", "")),
            cost=_float(res.get("metrics", {}).get("cost") if isinstance(res.get("metrics"), Mapping) else None),
            values={str(k): _float(p.get("value")) for k, p in params.items() if isinstance(p, Mapping)},
            stderr={str(k): _float(p.get("stderr")) for k, p in params.items() if isinstance(p, Mapping)}))
    return tuple(rows)


def batch_status(store: Store, owner: str, study_id: int) -> BatchStatus:
    """The latest run set of a study: its spec, items stored and failed (the batch's progress).

    Parameters
    ----------
    store : Store
    owner : str
        The study's owner (or an engineer it is shared with).
    study_id : int

    Returns
    -------
    BatchStatus
        ``batch_set`` 0 when the study holds no batch.
    """
    from ..store.studies import list_runs, run_item_keys

    batch_set, _ = _latest_set(run_item_keys(store, owner, study_id))
    if batch_set == 0:
        return BatchStatus(batch_set=0, kind="", spec_sha256="", n_items=0, n_done=0, n_failed=0)
    kind, sha, n_items, done, failed = "", "", 0, 0, 0
    for r in list_runs(store, owner, study_id):
        b = r.config.get("batch") if isinstance(r.config, Mapping) else None
        if not isinstance(b, Mapping) or b.get("set") != batch_set:
            continue
        if r.label == SPEC_LABEL:
            kind, sha, n_items = str(b.get("kind", "")), str(b.get("spec_sha256", "")), int(b.get("n_items", 0))
        else:
            done += 1
            failed += 0 if r.success else 1
    return BatchStatus(batch_set=batch_set, kind=kind, spec_sha256=sha, n_items=n_items, n_done=done,
                       n_failed=failed)
