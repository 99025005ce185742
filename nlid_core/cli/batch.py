"""``python -m nlid_core batch SPEC.toml``: many identifications from one spec, stored in a study, resumable.

The spec format is :mod:`nlid_core.batch.spec` (complete examples in ``docs/batch.md``). Results go to the
study ``--study`` (default: the spec's ``study``, else the spec file's stem) of ``--owner`` (default as for
``studies``: ``NLID_LOCAL_USER``, else ``local``) in the database ``--database`` (default
``NLID_DATABASE_URL``, else the SQLite file). Progress lines go to stdout (at most one a second, and the
last); stderr carries only the CLI's one error line. Running the same command again resumes: stored items
are skipped. Exit status 0 when every item of the set is stored and succeeded, 1 when some item failed (its
run is stored with the message), 2 bad input (spec, files, names, unreachable scheduler or database), 130
interrupted (the items stored so far stay).
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import NlidError, SimulationError
from .common import COMMAND_HELP

__all__ = ["MAX_GRID_ROWS", "add_batch_parser", "run_batch", "format_progress", "format_summary"]

#: Grid items listed in the printed summary (the JSON lists all).
MAX_GRID_ROWS = 40


def add_batch_parser(sub: argparse._SubParsersAction[Any]) -> None:
    """Add ``batch SPEC.toml`` and its options."""
    b = sub.add_parser("batch", help=COMMAND_HELP["batch"],
                       description="Runs every item of a batch spec (TOML; see docs/batch.md) and stores each"
                                   " finished item as a run of a study. Running the same command again skips the"
                                   " items already stored.")
    b.add_argument("spec", metavar="SPEC.toml", help="the batch spec (paths inside are relative to it)")
    b.add_argument("--study", metavar="NAME", help="study to store into (default: the spec's `study`, else the"
                                                    " spec file's stem); created when missing")
    b.add_argument("--owner", metavar="ENGINEER", help="act as this engineer (default: NLID_LOCAL_USER, else"
                                                        " 'local')")
    b.add_argument("--database", metavar="URL", help="study database (default: NLID_DATABASE_URL, else the SQLite"
                                                      " file in NLID_DATA_DIR)")
    b.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler address, e.g. tcp://host:8786 (default:"
                                                          " local processes)")
    b.add_argument("--workers", type=_workers, metavar="N", help="local worker processes (default: one per core)")
    b.add_argument("--restart", action="store_true",
                   help="start a new run set in the study (needed when the spec or its records changed since the"
                        " study's batch started); earlier runs are kept")
    b.add_argument("--allow-outside", action="store_true",
                   help="let the spec's file patterns read files outside the spec's folder (refused by default)")
    b.add_argument("--json", metavar="OUT", help="write the summary as JSON")
    b.add_argument("--quiet", action="store_true", help="print nothing but errors")


def _workers(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= value <= 1024:
        raise argparse.ArgumentTypeError(f"must be between 1 and 1024, got {text!r}")
    return value


def _duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "?"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def format_progress(p: Any) -> str:
    """``[  37/1000]  3.7 %  elapsed 12 s  eta 5 min`` for a :class:`~nlid_core.batch.BatchProgress`."""
    width = len(str(p.total))
    pct = 100.0 * p.done / p.total if p.total else 100.0
    failed = f"  {p.failed} failed" if p.failed else ""
    return (f"[{p.done:>{width}}/{p.total}] {pct:5.1f} %  elapsed {_duration(p.elapsed_s)}  eta "
            f"{_duration(p.eta_s)}{failed}")


def _g(v: float, digits: int = 6) -> str:
    return f"{v:.{digits}g}" if math.isfinite(v) else "-"


def format_summary(result: Any) -> str:
    """The summary printed at the end: the set, the counts, and the Monte Carlo table or the grid rows."""
    lines = [result.message,
             f"study {result.study_name!r} (id {result.study_id}, owner {result.owner}); runner {result.runner}"
             + (f" ({result.workers} workers)" if result.workers else "") + f"; {result.elapsed_s:.1f} s"]
    mc = result.monte_carlo
    if mc is not None:
        lines.append(f"Monte Carlo: {mc.n_ok} of {mc.n_draws} draws identified")
        if mc.parameters:
            nominal = mc.parameters[0].nominal
            lines.append(f"  {'param':8s} {'truth':>12s} {'mean':>12s} {'bias':>11s} {'spread':>11s} "
                         f"{'mean se':>11s} {'coverage':>17s}  {'band (exact intervals)':>22s}")
            for p in mc.parameters:
                cov = f"{100 * p.coverage:.1f} ± {100 * p.coverage_se:.1f} %" if math.isfinite(p.coverage) else "-"
                band = f"{100 * p.band[0]:.1f}-{100 * p.band[1]:.1f} %" if math.isfinite(p.band[0]) else "-"
                flag = "" if p.within_band else "  outside"
                lines.append(f"  {p.name:8s} {_g(p.truth):>12s} {_g(p.mean):>12s} {_g(p.bias, 3):>11s} "
                             f"{_g(p.spread, 3):>11s} {_g(p.mean_stderr, 3):>11s} {cov:>17s}  {band:>22s}{flag}")
            lines.append(f"  coverage: fraction of the {100 * nominal:g} % intervals holding the truth (± its "
                         "binomial standard error)")
    for row in result.grid[:MAX_GRID_ROWS]:
        status = "ok" if row.success else "FAILED"
        if row.success:
            vals = ", ".join(f"{k}={_g(v, 5)}±{_g(row.stderr.get(k, math.nan), 2)}" for k, v in row.values.items())
            lines.append(f"  {row.variant:16s} {row.record[:32]:32s} {status:6s} cost {_g(row.cost, 4)}  {vals}")
        else:
            lines.append(f"  {row.variant:16s} {row.record[:32]:32s} {status:6s} {row.message[:120]}")
    if len(result.grid) > MAX_GRID_ROWS:
        lines.append(f"  ... and {len(result.grid) - MAX_GRID_ROWS} more items (all of them: --json OUT, or "
                     f"`studies compare`)")
    return "\n".join(lines)


def _printer(quiet: bool, emit: Callable[[str], None]) -> Callable[[Any], None]:
    """A progress callback printing at most one line a second (and the last item's)."""
    last = [-math.inf]

    def show(p: Any) -> None:
        now = time.monotonic()
        if quiet:
            return
        if p.computed == 0:
            if p.skipped:
                emit(f"resuming: skipping {p.skipped} of {p.total} items already stored in the study")
            return
        if now - last[0] >= 1.0 or p.done == p.total:
            last[0] = now
            emit(format_progress(p))

    return show


def _stopped(store: Any, owner: str, name: str) -> str:
    """The line printed after Ctrl-C: what the study holds now."""
    from ..batch import batch_status
    from ..store.studies import open_study

    try:
        st = batch_status(store, owner, open_study(store, owner, name).id)
    except Exception:  # noqa: BLE001 - interrupted before the study existed, or the database went away
        return "interrupted before any item was stored"
    return (f"interrupted: {st.n_done} of {st.n_items} items of set {st.batch_set} stored in study {name!r}; "
            "run the same command to resume")


@contextmanager
def _interrupt_flag() -> Iterator[threading.Event]:
    """Ctrl-C raises KeyboardInterrupt as usual and also sets the returned flag, which the batch polls
    between items: an interrupt that lands while Python runs a finaliser or a callback is reported there
    and dropped, and without the flag the batch would then run to its end."""
    flag = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield flag
        return

    def handler(_signum: int, _frame: Any) -> None:
        flag.set()
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield flag
    finally:
        signal.signal(signal.SIGINT, previous)


def run_batch(args: argparse.Namespace, emit: Callable[[str], None] | None = None) -> int:
    """Run ``batch`` for parsed ``args``; returns the exit status (errors raise :class:`NlidError`).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.
    emit : callable or None
        Prints one line on stdout (the CLI's printer); default: nothing is printed.
    """
    import sqlalchemy as sa

    from .studies import LOCAL_USER_ENV, default_owner
    from ..batch import load_spec
    from ..batch import run_batch as run
    from ..batch.run import study_name
    from ..store.db import open_store
    from ..store.studies import validate_owner

    out = emit or (lambda _line: None)
    owner = args.owner if args.owner is not None else default_owner()
    try:
        validate_owner(owner)
    except NlidError as exc:
        where = "`--owner`" if args.owner is not None else f"`--owner` (from {LOCAL_USER_ENV})"
        raise NlidError(str(exc).replace("`owner`", where)) from None
    if args.study is not None:
        from ..store.studies import validate_name

        validate_name(args.study, "--study")
    spec = load_spec(args.spec, outside=bool(getattr(args, "allow_outside", False)))
    try:
        store = open_store(args.database)
    except sa.exc.SQLAlchemyError as exc:
        orig = getattr(exc, "orig", None)
        raise NlidError(f"cannot open the study database (`--database`): {orig or exc}") from None
    try:
        if not args.quiet:
            out(f"batch {spec.kind} from {Path(args.spec).name}: {spec.n_items} items; study database {store.url}")
        with _interrupt_flag() as interrupted:
            try:
                res = run(store, owner, spec, study=args.study, restart=args.restart, scheduler=args.scheduler,
                          workers=args.workers, progress=_printer(args.quiet, out), cancel=interrupted.is_set)
            except SimulationError:
                if not interrupted.is_set():
                    raise
                raise KeyboardInterrupt from None  # the interrupt, seen through the cancel flag
    except KeyboardInterrupt:
        if not args.quiet:
            out(_stopped(store, owner, study_name(spec, args.study)))
        raise
    except sa.exc.SQLAlchemyError as exc:
        orig = getattr(exc, "orig", None)
        raise NlidError(f"study database {store.url}: {orig or exc}") from None
    finally:
        store.close()
    if not args.quiet:
        out(format_summary(res))
    if args.json:
        try:
            Path(args.json).write_text(json.dumps(res.to_dict(), indent=2, allow_nan=False))
        except OSError as exc:
            raise NlidError(f"cannot write `{args.json}`: {exc.strerror}") from None
    return 0 if res.success else 1
