r"""Running a batch: items, their computation on a runner, their runs in the study store, resume.

A batch (:mod:`.spec`) becomes a list of **items**, each with a stable key:

* grid: ``s<set>|rec=<sha256 of the record, 16 hex>|var=<label>``;
* Monte Carlo: ``s<set>|mc=<draw index>``.

``<set>`` numbers the **run sets** of a study: the first batch run into a study
is set 1; ``--restart`` starts set ``n + 1`` beside the earlier ones (nothing
is deleted). Each set starts with one run labelled ``batch spec`` whose key is
``s<set>|spec=<identity, 16 hex>`` and whose config holds the spec's text,
its SHA-256, the kind and the number of items. The identity is the SHA-256 of
the spec text (Monte Carlo) or of the spec text and the sorted content
addresses of the records it read (grid), so changed data count as a changed
spec.

Resume: the items whose key the study already holds
(:func:`nlid_core.store.studies.run_item_keys`) are skipped. A spec whose
identity differs from the latest set's is refused unless ``restart``.

Items are computed by a :class:`~nlid_core.runners.Runner` (local
processes, a Dask cluster, or serially) in chunks: ``2 × workers`` items
first, then about :data:`CHUNK_TARGET_S` seconds of work (2 to 16 items per
worker, from the measured time of the previous chunk). Each finished chunk
is written (one transaction for the chunk) before the next starts, so an
interruption loses at most the chunk in flight. Every item
function is deterministic in its inputs (the Monte Carlo noise of draw ``i``
comes from ``SeedSequence(seed, spawn_key=(i,))``, the true response is
computed once, before the items), so the stored results do not depend on
the runner — except the ``timing`` of a grid result, which is measured.

Progress is the number of item runs stored in the set against the set's
``n_items`` (:func:`batch_status`). An item whose identification fails (or
raises) is stored as a failed run with its message; the batch goes on.
"""

from __future__ import annotations

import math
import re
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ..errors import DataValidationError, ModelSpecError, SimulationError
from ..jsonsafe import finite_or_none
from .spec import BatchSpec, MonteCarloSpec, Variant, _build_model, check_work, variant_parameters

if TYPE_CHECKING:
    from ..runners import Runner
    from ..record import Record
    from ..store.db import Store

__all__ = [
    "SPEC_LABEL",
    "GridItem",
    "MonteCarloDesign",
    "MonteCarloItem",
    "ItemOutcome",
    "BatchProgress",
    "ParameterCoverage",
    "MonteCarloSummary",
    "GridRow",
    "BatchStatus",
    "BatchResult",
    "item_seed",
    "run_grid_item",
    "run_monte_carlo_item",
    "monte_carlo_design",
    "load_grid_records",
    "summarize_monte_carlo",
    "summarize_grid",
    "batch_status",
    "study_name",
    "run_batch",
    "run_spec_text",
]

FloatArray = NDArray[np.float64]
#: Label of the run holding a set's spec.
SPEC_LABEL = "batch spec"
#: CPU seconds one item may take (see :func:`nlid_core.limits.budget`).
ITEM_CPU_ENV = "NLID_BATCH_ITEM_CPU_S"
_SPEC_KEY = re.compile(r"s(\d+)\|spec=([0-9a-f]{16})")
_BAD_NAME_CHARS = re.compile(r"[^\w .+(),=#-]+")
#: z of the two-sided 95 % band of a binomial proportion.
_Z95 = 1.959963984540054

ProgressCallback = Callable[["BatchProgress"], None]


# ----------------------------------------------------------------------------- items and outcomes


@dataclass(frozen=True, kw_only=True)
class GridItem:
    """One identification of a grid: a record with a variant.

    Attributes
    ----------
    key, label : str
    record_name : str
        Name of the record inside the study.
    record_sha256 : str
    record : Record
    variant : Variant
    batch_set : int
    """

    key: str
    label: str
    record_name: str
    record_sha256: str
    record: Record
    variant: Variant
    batch_set: int


@dataclass(frozen=True, kw_only=True)
class MonteCarloDesign:
    """The true test of a Monte Carlo batch, computed once before the draws.

    Attributes
    ----------
    t : (n,) ndarray, s
    force : (n,) ndarray, N
    clean : mapping of str to (n,) ndarray
        True response ``x`` (m), ``v`` (m/s), ``a`` (m/s²).
    channels : tuple of str
        Measured response channels.
    noise : mapping of str to float
        Standard deviation per channel (x, v, a, f).
    truth : mapping of str to float
        True value of every parameter of the model.
    seed : int
        Base seed.
    """

    t: FloatArray
    force: FloatArray
    clean: Mapping[str, FloatArray]
    channels: tuple[str, ...]
    noise: Mapping[str, float]
    truth: Mapping[str, float]
    seed: int


@dataclass(frozen=True, kw_only=True)
class MonteCarloItem:
    """Draw ``index`` of a Monte Carlo batch.

    Attributes
    ----------
    key, label : str
    index : int
    design : MonteCarloDesign
    fit : Variant
    batch_set : int
    """

    key: str
    label: str
    index: int
    design: MonteCarloDesign
    fit: Variant
    batch_set: int


@dataclass(frozen=True, kw_only=True)
class ItemOutcome:
    """What an item produced, ready to be stored as a run.

    Attributes
    ----------
    key, label : str
    config, result : dict
        JSON-ready.
    success : bool
    message : str
    """

    key: str
    label: str
    config: dict[str, Any]
    result: dict[str, Any]
    success: bool
    message: str


@dataclass(frozen=True, kw_only=True)
class BatchProgress:
    """Where a running batch is.

    Attributes
    ----------
    done, total : int
        Items of the set stored (skipped ones included) and in all.
    skipped, computed, failed : int
        Found stored at the start; computed by this call; failed among those computed.
    elapsed_s : float, s
        Since the computation started.
    eta_s : float, s
        Estimated seconds left (NaN before the first item).
    """

    done: int
    total: int
    skipped: int
    computed: int
    failed: int
    elapsed_s: float
    eta_s: float


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


@dataclass(frozen=True, kw_only=True)
class BatchResult:
    """The outcome of :func:`run_batch`.

    Attributes
    ----------
    success : bool
        Every item of the set is stored and succeeded.
    message : str
    study_id : int
    study_name, owner : str
    batch_set : int
    kind : str
    n_items, n_skipped, n_computed, n_failed : int
        ``n_failed`` counts the set's failed runs (earlier ones included).
    elapsed_s : float, s
    runner : str
        ``serial``, ``processes``, ``dask``, or ``none`` when nothing was left to compute.
    workers : int
    monte_carlo : MonteCarloSummary or None
    grid : tuple of GridRow
    """

    success: bool
    message: str
    study_id: int
    study_name: str
    owner: str
    batch_set: int
    kind: str
    n_items: int
    n_skipped: int
    n_computed: int
    n_failed: int
    elapsed_s: float
    runner: str
    workers: int
    monte_carlo: MonteCarloSummary | None = None
    grid: tuple[GridRow, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"success": self.success, "message": self.message,
                "study": {"id": self.study_id, "name": self.study_name, "owner": self.owner},
                "batch_set": self.batch_set, "kind": self.kind, "n_items": self.n_items,
                "n_skipped": self.n_skipped, "n_computed": self.n_computed, "n_failed": self.n_failed,
                "elapsed_s": self.elapsed_s, "runner": self.runner, "workers": self.workers,
                "monte_carlo": self.monte_carlo.to_dict() if self.monte_carlo else None,
                "grid": [r.to_dict() for r in self.grid]}


def _float(v: Any) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan


# ----------------------------------------------------------------------------- computing one item


def _fit_options(variant: Variant) -> Any:
    from ..estimate import FitOptions

    return FitOptions(method=variant.method, outputs=variant.outputs, initial_state=variant.initial_state,
                      input_hold=variant.input_hold, sample_step=variant.sample_step,
                      force_threshold=variant.force_threshold, differentiator=variant.differentiator,
                      max_nfev=variant.max_nfev, confidence=variant.confidence)


def _identify(record: Record, variant: Variant) -> tuple[Any, Any]:
    """(fit, parameter set) of ``variant`` on ``record``; numerical warnings go into the fit's warnings."""
    import dataclasses

    from ..estimate import WarningTally, identify

    from ..isolation import CpuBudgetExceeded, cpu_budget
    from ..limits import budget

    model = _build_model(variant, f"variant `{variant.label}`")
    params = variant_parameters(variant, model, record.unit("f"), record.unit("x"))
    limit = budget(ITEM_CPU_ENV)
    stop = (f"the identification used more than {limit or 0:g} s of CPU time and was stopped (an administrator"
            f" can raise the limit with {ITEM_CPU_ENV})")
    try:
        with warnings.catch_warnings(record=True) as caught, cpu_budget(limit, stop):
            warnings.simplefilter("always")
            fit = identify(record, model, params=params, options=_fit_options(variant))
    except CpuBudgetExceeded as exc:
        raise SimulationError(str(exc)) from None
    tally = WarningTally()
    for entry in caught:
        tally.record(entry)
    if tally:
        fit = dataclasses.replace(fit, warnings=(*fit.warnings, *tally.lines()))
    return fit, params


def _failure(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:500]
    return text if isinstance(exc, (ModelSpecError, DataValidationError, SimulationError)) else \
        f"{type(exc).__name__}: {text}"


def run_grid_item(item: GridItem) -> ItemOutcome:
    """Identify ``item.record`` with ``item.variant`` (a failure becomes a failed outcome, never an exception).

    Parameters
    ----------
    item : GridItem

    Returns
    -------
    ItemOutcome
        ``result`` is :func:`nlid_core.report.result_to_dict` of the fit; ``config`` names the set,
        the record and the variant, with the parameter set-up handed to the estimator.
    """
    from ..modeltext import parameter_setup
    from ..report import result_to_dict

    config: dict[str, Any] = {"batch": {"set": item.batch_set, "kind": "grid"},
                              "record": {"name": item.record_name, "sha256": item.record_sha256},
                              "variant": item.variant.to_dict()}
    try:
        fit, params = _identify(item.record, item.variant)
    except Exception as exc:  # noqa: BLE001 - one item's failure is stored; the batch goes on
        msg = _failure(exc)
        return ItemOutcome(key=item.key, label=item.label, config=config,
                           result={"success": False, "message": msg}, success=False, message=msg)
    config["parameter_setup"] = parameter_setup(params)
    return ItemOutcome(key=item.key, label=item.label, config=config, result=result_to_dict(fit),
                       success=bool(fit.success), message=str(fit.message))


def item_seed(seed: int, index: int) -> np.random.SeedSequence:
    """The seed of draw ``index``: ``SeedSequence(seed).spawn(index + 1)[index]``, built directly.

    Parameters
    ----------
    seed : int
        Base seed (>= 0).
    index : int
        Draw (>= 0).

    Returns
    -------
    numpy.random.SeedSequence
        ``SeedSequence(seed, spawn_key=(index,))``.
    """
    return np.random.SeedSequence(seed, spawn_key=(index,))


def run_monte_carlo_item(item: MonteCarloItem) -> ItemOutcome:
    """Draw noise for draw ``item.index``, identify, and compare each interval with the truth.

    The noise of the channels with a standard deviation is drawn in the order x, v, a, f, each
    ``n`` standard normal numbers from ``default_rng(item_seed(seed, index))``.

    Parameters
    ----------
    item : MonteCarloItem

    Returns
    -------
    ItemOutcome
        ``result``: ``success``, ``message``, ``method``, ``seed`` (base and spawn key),
        ``cost``, ``nfev`` and per free parameter ``value``, ``stderr``, ``ci95`` (the interval at
        the fit's confidence), ``truth`` and ``covers``.
    """
    from ..record import from_arrays

    d = item.design
    config = {"batch": {"set": item.batch_set, "kind": "monte_carlo"}, "draw": item.index}
    seed_doc = {"base": d.seed, "spawn_key": [item.index]}
    try:
        rng = np.random.default_rng(item_seed(d.seed, item.index))
        n = d.t.size
        signals = {"x": d.clean["x"], "v": d.clean["v"], "a": d.clean["a"], "f": d.force}
        noisy = {}
        for ch in ("x", "v", "a", "f"):
            sd = float(d.noise.get(ch, 0.0))
            noisy[ch] = signals[ch] + sd * rng.standard_normal(n) if sd > 0 else signals[ch]
        rec = from_arrays(d.t, noisy["f"], noisy["x"], noisy["v"] if "v" in d.channels else None,
                          noisy["a"] if "a" in d.channels else None, name=item.label, source="monte_carlo")
        fit, _ = _identify(rec, item.fit)
    except Exception as exc:  # noqa: BLE001 - one draw's failure is stored; the batch goes on
        msg = _failure(exc)
        return ItemOutcome(key=item.key, label=item.label, config=config,
                           result={"success": False, "message": msg, "seed": seed_doc}, success=False, message=msg)
    params: dict[str, Any] = {}
    for e in fit.estimates:
        if not e.vary:
            continue
        truth = float(d.truth[e.name])
        lo, hi = float(e.ci[0]), float(e.ci[1])
        ok = math.isfinite(lo) and math.isfinite(hi)
        params[e.name] = {"value": float(e.value), "stderr": finite_or_none(e.stderr),
                          "ci95": [finite_or_none(lo), finite_or_none(hi)], "truth": truth, "covers": bool(ok and lo <= truth <= hi)}
    result = {"success": bool(fit.success), "message": str(fit.message), "method": fit.method, "seed": seed_doc,
              "cost": finite_or_none(fit.cost), "nfev": int(fit.nfev), "confidence": fit.options.confidence,
              "parameters": params}
    return ItemOutcome(key=item.key, label=item.label, config=config, result=result, success=bool(fit.success),
                       message=str(fit.message))


# ----------------------------------------------------------------------------- planning


def monte_carlo_design(mc: MonteCarloSpec, *, source: str = "[excitation]") -> MonteCarloDesign:
    """Build the excitation and simulate the true response once (``solve_ivp`` DOP853, rtol 1e-10).

    Parameters
    ----------
    mc : MonteCarloSpec
    source : str
        Where the excitation is written, for messages.

    Returns
    -------
    MonteCarloDesign

    Raises
    ------
    ModelSpecError
        Bad excitation settings (named) or a model that cannot be simulated.
    SimulationError
        The true model diverges under the excitation.
    """
    from ..simulate import simulate_reference
    from .spec import MAX_MC_SAMPLES

    if mc.excitation_file is not None:
        from ..guard import load_record_guarded

        rec = load_record_guarded(mc.excitation_file, input_only=True)
        t, force = np.asarray(rec.t, dtype=np.float64), np.asarray(rec.f, dtype=np.float64)
        if rec.unit("f") != "N":
            raise ModelSpecError(f"{source} `file`: the force must be in N; got {rec.unit('f')}")
    else:
        from ..excitation import make_excitation

        assert mc.excitation_kind is not None
        try:
            ex = make_excitation(mc.excitation_kind, mc.excitation_settings)
        except (ModelSpecError, TypeError, ValueError) as exc:
            raise ModelSpecError(f"{source}: {exc}") from None
        t, force = np.asarray(ex.t_s, dtype=np.float64), np.asarray(ex.force, dtype=np.float64)
    if t.size > MAX_MC_SAMPLES:
        raise ModelSpecError(f"{source}: {t.size} samples; a Monte Carlo record has at most {MAX_MC_SAMPLES}")
    truth_variant = Variant(label="truth", terms=mc.terms, custom=mc.custom, v_eps=mc.v_eps, gap=mc.gap)
    model = _build_model(truth_variant, "[model]")
    try:
        model.require_simulable()
    except ModelSpecError as exc:
        raise ModelSpecError(f"[model] `terms`: {exc}") from None
    ps = model.default_parameters()
    for name, value in mc.values.items():
        p = ps[name]
        if not p.lower <= value <= p.upper:
            raise ModelSpecError(f"[model] `values.{name}` = {value:g} lies outside [{p.lower:g}, {p.upper:g}]")
        ps = ps.update(name, value=value)
    clean = simulate_reference(model, t, force, ps.values, mc.x0, input_hold="cubic", rtol=1e-10,
                               atol=1e-14)
    if not clean.success or not all(np.all(np.isfinite(c)) for c in (clean.x, clean.v, clean.a)):
        raise SimulationError(f"the true model diverges under the excitation: {clean.message}")
    return MonteCarloDesign(t=t, force=force, clean={"x": clean.x, "v": clean.v, "a": clean.a},
                            channels=mc.channels, noise=dict(mc.noise), truth=ps.as_dict(), seed=mc.seed)


def _safe_name(text: str, fallback: str) -> str:
    name = _BAD_NAME_CHARS.sub("_", text).strip()[:90].strip()
    if not name or not name[0].isalnum():
        name = (fallback + " " + name).strip()[:90].strip()
    return name


def load_grid_records(spec: BatchSpec) -> tuple[tuple[Record, str], ...]:
    """Read the grid's record files with the isolated readers, in parallel; (record, sha256) per distinct record.

    Parameters
    ----------
    spec : BatchSpec
        A grid spec.

    Returns
    -------
    tuple of (Record, str)
        In file order; a file whose content (and provenance) equals an earlier one's is dropped.

    Raises
    ------
    DataValidationError
        A file that cannot be read (one line naming it).
    """
    from concurrent.futures import ThreadPoolExecutor

    from ..guard import load_record_guarded, parse_slots
    from ..store.studies import encode_record

    assert spec.grid is not None
    src = spec.grid.records

    def load(path: Any) -> Record:
        rec = load_record_guarded(path, columns=src.columns, units=src.units, resample=src.resample, fs=src.fs,
                                  rows=src.rows)
        if src.lowpass is not None:
            from ..signals import filter_record

            rec = filter_record(rec, src.lowpass)
        return rec

    with ThreadPoolExecutor(max_workers=max(1, parse_slots())) as pool:
        recs = list(pool.map(load, src.files))
    out: list[tuple[Record, str]] = []
    seen: set[str] = set()
    for rec in recs:
        sha = encode_record(rec).sha256
        if sha not in seen:
            seen.add(sha)
            out.append((rec, sha))
    return tuple(out)


def _identity(spec: BatchSpec, shas: Sequence[str]) -> str:
    import hashlib

    h = hashlib.sha256(spec.text.encode("utf-8"))
    for s in sorted(shas):
        h.update(b"\0" + s.encode("ascii"))
    return h.hexdigest()


def _latest_set(keys: frozenset[str]) -> tuple[int, str]:
    best = (0, "")
    for k in keys:
        m = _SPEC_KEY.fullmatch(k)
        if m and int(m.group(1)) > best[0]:
            best = (int(m.group(1)), m.group(2))
    return best


# ----------------------------------------------------------------------------- summaries


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


# ----------------------------------------------------------------------------- the batch


@dataclass(frozen=True, kw_only=True)
class _Plan:
    study_id: int | None
    study_name: str
    batch_set: int
    identity: str
    items: tuple[Any, ...]
    todo: tuple[Any, ...]
    records: tuple[tuple[Record, str, str], ...]   # (record, sha, name in the study) to add


def _plan(store: Store, owner: str, spec: BatchSpec, study_name: str, restart: bool) -> _Plan:
    from ..store.studies import list_records, open_study, run_item_keys

    try:
        study = open_study(store, owner, study_name)
    except DataValidationError:
        study = None
    keys: frozenset[str] = frozenset()
    stored: dict[str, str] = {}   # sha -> name in the study
    if study is not None:
        keys = run_item_keys(store, owner, study.id)
        stored = {r.sha256: r.name for r in list_records(store, owner, study.id)}
    if spec.grid is not None:
        loaded = load_grid_records(spec)
        identity = _identity(spec, [sha for _, sha in loaded])
    else:
        loaded = ()
        identity = _identity(spec, ())
    latest, latest_id = _latest_set(keys)
    if latest == 0:
        batch_set = 1
    elif latest_id == identity[:16]:
        batch_set = latest + 1 if restart else latest
    elif restart:
        batch_set = latest + 1
    else:
        what = "spec or its record files" if spec.grid is not None else "spec"
        raise DataValidationError(
            f"study {study_name!r} holds batch set {latest} of a different {what} (identity {latest_id}, now "
            f"{identity[:16]}); give `--restart` to start set {latest + 1} beside it, or another `--study`")
    items: list[Any] = []
    to_add: list[tuple[Record, str, str]] = []
    if spec.grid is not None:
        taken = {name: sha for sha, name in stored.items()}
        names: dict[str, str] = dict(stored)
        for rec, sha in loaded:
            if sha not in names:
                base = _safe_name(rec.name, "record")
                name, k = base, 1
                while name in taken:
                    k += 1
                    name = f"{base[:85]} ({k})"
                taken[name] = sha
                names[sha] = name
                to_add.append((rec, sha, name))
        for rec, sha in loaded:
            for v in spec.grid.variants:
                items.append(GridItem(key=f"s{batch_set}|rec={sha[:16]}|var={v.label}",
                                      label=_safe_name(f"{v.label} on {names[sha]}", "item")[:100],
                                      record_name=names[sha], record_sha256=sha, record=rec, variant=v,
                                      batch_set=batch_set))
    else:
        assert spec.monte_carlo is not None
        mc = spec.monte_carlo
        todo_idx = [i for i in range(mc.draws) if f"s{batch_set}|mc={i}" not in keys]
        design = monte_carlo_design(mc) if todo_idx else None
        for i in range(mc.draws):
            if design is None:
                break
            items.append(MonteCarloItem(key=f"s{batch_set}|mc={i}", label=f"mc {i}", index=i, design=design,
                                        fit=mc.fit, batch_set=batch_set))
    todo = tuple(it for it in items if it.key not in keys)
    check_work(len(todo), float(sum(it.record.n if isinstance(it, GridItem) else it.design.t.size for it in todo)),
               spec.source)
    return _Plan(study_id=study.id if study is not None else None, study_name=study_name, batch_set=batch_set,
                 identity=identity, items=tuple(items), todo=todo, records=tuple(to_add))


def _prepare_study(store: Store, owner: str, spec: BatchSpec, plan: _Plan, n_items: int) -> int:
    """Create the study when missing, add the new records, and store the set's spec run (once)."""
    from .._version import __version__
    from ..store.studies import add_records, add_run, create_study, run_item_keys

    notes = spec.description or f"Batch study ({spec.kind}) from {spec.source}."
    sid = plan.study_id
    if sid is None:
        sid = create_study(store, owner, plan.study_name, notes=notes).id
    if plan.records:
        add_records(store, owner, sid, {name: rec for rec, _, name in plan.records})
    key = f"s{plan.batch_set}|spec={plan.identity[:16]}"
    if key not in run_item_keys(store, owner, sid):
        config = {"batch": {"set": plan.batch_set, "kind": spec.kind, "spec_sha256": spec.sha256,
                            "identity": plan.identity, "source": spec.source, "n_items": n_items,
                            "nlid_version": __version__, "spec_toml": spec.text}}
        add_run(store, owner, sid, label=SPEC_LABEL, config=config,
                result={"success": True, "message": f"batch set {plan.batch_set}: {n_items} items"},
                success=True, item_key=key)
    return sid


def study_name(spec: BatchSpec, study: str | None = None) -> str:
    """The study a batch goes to: ``study``, else the spec's ``study``, else the spec file's stem (made a valid name).

    Parameters
    ----------
    spec : BatchSpec
    study : str or None
        The name asked for (``--study``).
    """
    return study if study is not None else (spec.study or _safe_name(spec.stem, "batch"))


#: Seconds of work a chunk aims at (items are stored chunk by chunk).
CHUNK_TARGET_S = 2.0
#: A chunk holds between 2 and 16 items per worker.
CHUNK_PER_WORKER = (2, 16)


def _next_chunk(elapsed_s: float, n: int, workers: int) -> int:
    """Items of the next chunk: about :data:`CHUNK_TARGET_S` of work, 2 to 16 items per worker.

    Larger chunks spend less time waiting for the slowest item of a chunk; smaller ones lose less
    work when the batch is killed. Fast items (tens of ms) get 16 per worker, slow ones (seconds) 2.
    """
    per_item = elapsed_s * workers / max(n, 1)
    lo, hi = CHUNK_PER_WORKER
    k = int(CHUNK_TARGET_S / per_item) if per_item > 0 else hi
    return workers * min(max(k, lo), hi)


def run_batch(
    store: Store,
    owner: str,
    spec: BatchSpec,
    *,
    study: str | None = None,
    restart: bool = False,
    scheduler: str | None = None,
    workers: int | None = None,
    serial: bool = False,
    progress: ProgressCallback | None = None,
    cancel: Callable[[], bool] | None = None,
    timeout_s: float = 10.0,
) -> BatchResult:
    """Run (or resume) a batch into a study of ``owner``.

    Parameters
    ----------
    store : Store
        The open study store.
    owner : str
        The engineer the study belongs to.
    spec : BatchSpec
    study : str or None
        Study name; default the spec's ``study``, else the spec file's stem. Created when missing.
    restart : bool
        Start a new run set even when the study's latest set is of another spec (or of this one).
    scheduler : str or None
        A Dask scheduler address; None computes on local processes.
    workers : int or None
        Local worker processes (default: one per core).
    serial : bool
        Compute in this process (no workers).
    progress : callable or None
        ``progress(BatchProgress)`` once before the first item (``computed = 0``, ``skipped`` the items
        found stored) and after every finished item.
    cancel : callable or None
        Polled between items; true stops the batch (:class:`SimulationError` ``"cancelled ..."``);
        the items stored so far stay.
    timeout_s : float, s
        Seconds to wait for the Dask scheduler.

    Returns
    -------
    BatchResult
        With the Monte Carlo summary or the grid rows of the whole set (resumed items included).

    Raises
    ------
    DataValidationError
        Bad names, unreadable record files, a changed spec without ``restart``.
    ModelSpecError
        Bad excitation or model.
    SimulationError
        The scheduler cannot be reached; cancelled.
    """
    from ..runners import runner as make_runner
    from ..store.studies import add_item_runs, validate_name, validate_owner

    validate_owner(owner)
    name = study_name(spec, study)
    validate_name(name, "study")
    plan = _plan(store, owner, spec, name, restart)
    n_items = len(plan.items) if plan.items else spec.n_items
    n_skipped = n_items - len(plan.todo)
    t0 = time.perf_counter()
    computed = failed = 0
    kind, n_workers = "none", 0
    if plan.todo:
        fn: Callable[[Any], ItemOutcome] = run_grid_item if spec.grid is not None else run_monte_carlo_item
        with make_runner(scheduler, workers=workers, serial=serial, timeout_s=timeout_s) as r:
            kind, n_workers = r.kind, r.workers
            sid = _prepare_study(store, owner, spec, plan, n_items)
            if progress is not None:
                progress(BatchProgress(done=n_skipped, total=n_items, skipped=n_skipped, computed=0, failed=0,
                                       elapsed_s=0.0, eta_s=math.nan))
            chunk = 2 * r.workers
            start = 0
            while start < len(plan.todo):
                part = plan.todo[start:start + chunk]
                start += len(part)
                base = computed
                t_chunk = time.perf_counter()

                def inner(_stage: str, fraction: float, _text: str, base: int = base, size: int = len(part)) -> None:
                    if progress is None:
                        return
                    k = int(round(fraction * size))
                    el = time.perf_counter() - t0
                    n = base + k
                    left = len(plan.todo) - n
                    progress(BatchProgress(done=n_skipped + n, total=n_items, skipped=n_skipped, computed=n,
                                           failed=failed, elapsed_s=el, eta_s=el / n * left if n else math.nan))

                outcomes = r.map(fn, part, progress=inner, cancel=cancel)
                chunk = _next_chunk(time.perf_counter() - t_chunk, len(part), r.workers)
                saved_now = set(add_item_runs(store, owner, sid, [
                    {"label": o.label, "config": {**o.config, "item_key": o.key}, "result": o.result,
                     "success": o.success, "item_key": o.key} for o in outcomes]))
                for o in outcomes:  # a key stored meanwhile by another run of the same batch keeps the first
                    if o.key in saved_now:
                        computed += 1
                        failed += 0 if o.success else 1
    else:
        sid = _prepare_study(store, owner, spec, plan, n_items)
    elapsed = time.perf_counter() - t0
    runs = _set_runs(store, owner, sid, plan.batch_set)
    n_failed = sum(1 for r in runs if not r.success)
    mc_summary = summarize_monte_carlo([r.result for r in runs]) if spec.monte_carlo is not None else None
    grid_rows = summarize_grid(runs) if spec.grid is not None else ()
    ok = len(runs) == n_items and n_failed == 0
    msg = (f"batch set {plan.batch_set} of study {name!r}: {len(runs)}/{n_items} items stored ({n_skipped} skipped "
           f"as already stored, {computed} computed), {n_failed} failed")
    return BatchResult(success=ok, message=msg, study_id=sid, study_name=name, owner=owner,
                       batch_set=plan.batch_set, kind=spec.kind, n_items=n_items, n_skipped=n_skipped,
                       n_computed=computed, n_failed=n_failed, elapsed_s=elapsed, runner=kind, workers=n_workers,
                       monte_carlo=mc_summary, grid=grid_rows)


def run_spec_text(
    url: str,
    owner: str,
    spec_text: str,
    *,
    study: str | None = None,
    restart: bool = False,
    progress: Callable[[str, float, str], None] | None = None,
) -> BatchResult:
    """Run (or resume) a Monte Carlo spec given as text, in this process, into the study database at ``url``.

    What the dashboard runs as a job (its worker process is the one worker; Cancel kills it and the items
    stored so far stay, so running the same spec again resumes). Specs that name files -- a grid's records,
    an excitation ``file`` -- are refused before the file system is looked at: whoever types the spec may
    not read the server's files.

    Parameters
    ----------
    url : str
        Study database URL (as :func:`nlid_core.store.db.open_store`).
    owner : str
        The engineer the study belongs to.
    spec_text : str
        The spec (TOML, ``kind = "monte_carlo"``; see ``docs/batch.md``).
    study : str or None
        Study name; default the spec's ``study``, else ``"batch"``.
    restart : bool
        Start a new run set (as :func:`run_batch`).
    progress : callable or None
        ``progress(stage, fraction, message)`` after every stored item.

    Returns
    -------
    BatchResult

    Raises
    ------
    ModelSpecError
        A spec that is not a valid Monte Carlo spec, or names a file.
    DataValidationError
        Bad study or owner name, a changed spec without ``restart``, a database that cannot be opened.
    SimulationError
        The true response cannot be simulated.
    """
    from .spec import parse_spec
    from ..store.db import open_store

    spec = parse_spec(spec_text, source="the batch spec", stem="batch", files=False)

    def report(p: BatchProgress) -> None:
        if progress is None:
            return
        left = "" if not math.isfinite(p.eta_s) else f", about {p.eta_s:.0f} s left"
        before = f" ({p.skipped} stored before)" if p.skipped else ""
        progress("", p.done / p.total if p.total else 1.0,
                 f"{p.done} of {p.total} draws stored{before}, {p.failed} failed{left}")

    with open_store(url) as store:
        return run_batch(store, owner, spec, study=study, restart=restart, serial=True, progress=report)
