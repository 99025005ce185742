"""The items of a batch and their computation: a grid item (one record, one variant) and a Monte Carlo draw,
each run by a deterministic function that a runner can send to a worker process; the Monte Carlo design
(the true response computed once) and the records a grid reads."""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ..errors import DataValidationError, ModelSpecError, SimulationError
from ..jsonsafe import finite_or_none
from .spec import BatchSpec, MonteCarloSpec
from .variants import Variant, _build_model, variant_parameters

if TYPE_CHECKING:
    from ..record import Record

FloatArray = NDArray[np.float64]

__all__ = ["ITEM_CPU_ENV", "GridItem", "MonteCarloDesign", "MonteCarloItem", "ItemOutcome", "run_grid_item",
           "item_seed", "run_monte_carlo_item", "monte_carlo_design", "load_grid_records"]


#: CPU seconds one item may take (see :func:`nlid_core.limits.budget`).
ITEM_CPU_ENV = "NLID_BATCH_ITEM_CPU_S"


_BAD_NAME_CHARS = re.compile(r"[^\w .+(),=#-]+")


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


def _float(v: Any) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan


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
