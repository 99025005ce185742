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
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import DataValidationError
from .items import (
    GridItem, ItemOutcome, MonteCarloDesign, MonteCarloItem, _safe_name, item_seed, load_grid_records,
    monte_carlo_design, run_grid_item, run_monte_carlo_item
)
from .spec import BatchSpec, check_work
from .summary import (
    SPEC_LABEL, BatchStatus, GridRow, MonteCarloSummary, ParameterCoverage, _latest_set, _set_runs, batch_status,
    summarize_grid, summarize_monte_carlo
)

if TYPE_CHECKING:
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


ProgressCallback = Callable[["BatchProgress"], None]


# ----------------------------------------------------------------------------- items and outcomes


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


# ----------------------------------------------------------------------------- computing one item


# ----------------------------------------------------------------------------- planning


def _identity(spec: BatchSpec, shas: Sequence[str]) -> str:
    import hashlib

    h = hashlib.sha256(spec.text.encode("utf-8"))
    for s in sorted(shas):
        h.update(b"\0" + s.encode("ascii"))
    return h.hexdigest()


# ----------------------------------------------------------------------------- summaries


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
