"""``python -m nlid_core nonlinearity``: the nonlinearity evidence of one record from the command line.

Prints the verdict (:func:`nlid_core.nonlinearity.evidence_summary`), the best linear approximation's
layout and its distortion and noise levels, the detection lines and the output-error term check;
``--bla-csv`` writes the BLA table (one row per line of the period, the columns of
:meth:`nlid_core.nonlinearity.BLA.to_columns`).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
from pathlib import Path
from typing import Any

from .common import COMMAND_HELP, share_options

__all__ = ["add_evidence_parser", "run_evidence", "format_evidence_report"]

#: Options of ``identify`` that ``nonlinearity`` takes as they are (loading the record).
SHARED_OPTIONS = ("columns", "units", "scale", "fs", "resample", "rows")


def add_evidence_parser(sub: argparse._SubParsersAction[Any], identify: argparse.ArgumentParser) -> None:
    """Add ``nonlinearity``; its loading options are ``identify``'s own."""
    nl = sub.add_parser(
        "nonlinearity", help=COMMAND_HELP["nonlinearity"],
        description="Reads one record (force f and displacement x at least), finds the period and the"
                    " realisations of a multisine excitation (or cuts a random one into segments), computes the"
                    " best linear approximation with its noise and nonlinear-distortion levels, the output at"
                    " unexcited odd and even lines, a fast output-error check of which nonlinear terms the record"
                    " needs, and prints the verdict.")
    nl.add_argument("data", help="record file (CSV, Parquet, Excel, MAT)")
    nl.add_argument("--period", type=int, metavar="SAMPLES", help="samples per period (default: found from f)")
    nl.add_argument("--transient", type=int, metavar="SAMPLES",
                    help="samples skipped at the start of each realisation (default: found)")
    nl.add_argument("--segments", type=int, default=8, help="segments when the force does not repeat (default 8)")
    nl.add_argument("--bla-csv", metavar="OUT", help="write the BLA table (one row per line) as CSV")
    nl.add_argument("--no-output-check", action="store_true", help="skip the output-error term check")
    nl.add_argument("--json", metavar="OUT", help="write the verdict and the BLA levels as JSON")
    share_options(nl, identify, SHARED_OPTIONS)


def _db(v: float) -> str:
    return f"{v:.1f} dB" if math.isfinite(v) else "-"


def format_evidence_report(record: str, summary: tuple[str, ...], b: Any, oe: Any) -> str:
    """Text report: verdict lines, BLA layout and levels, detection lines, output-error steps."""
    lines = [f"nonlinearity evidence of {record}", ""]
    lines += [f"- {s}" for s in summary]
    if b is not None:
        s = b.stats()
        lines += ["", f"best linear approximation: {b.layout.describe(b.fs)}"]
        lines += [f"  {n}" for n in b.layout.notes]
        lo, hi = b.band_hz
        lines.append(f"  excited lines: {int(s['n_lines'])} ({lo:.4g}-{hi:.4g} Hz, {b.input_kind})")
        lines.append(f"  medians re |G|: total {_db(s['total_re_g_db'])}, noise {_db(s['noise_re_g_db'])},"
                     f" distortion {_db(s['distortion_re_g_db'])}; total over noise {_db(s['total_over_noise_db'])}")
        if b.detection is not None:
            lines.append(f"  {'unexcited lines':38s} {'count':>6s} {'above noise':>12s}  significant")
            for c in b.detection.classes:
                lines.append(f"  {c.name:38s} {c.n_lines:6d} {_db(c.above_noise_db):>12s}  "
                             f"{'yes' if c.significant else 'no'}")
    if oe is not None and oe.success:
        lines += ["", f"output-error check ({oe.basis} RMSE, unit {oe.unit}; {oe.elapsed_s:.1f} s):"]
        kept = {p.label for p in oe.path}
        for st in oe.steps:
            if not st.success:
                lines.append(f"  {st.label:36s} {'failed':>12s}  ({st.message})")
                continue
            rmse = st.rmse_val if math.isfinite(st.rmse_val) else st.rmse_fit
            lines.append(f"  {st.label:36s} {rmse:12.4g}  {'kept' if st.label in kept else ''}")
    return "\n".join(lines)


def run_evidence(args: argparse.Namespace) -> tuple[int, str]:
    """Run ``nonlinearity``: (exit status 0, the report); errors raise ``NlidError``."""
    from ..guard import load_record_guarded
    from ..nonlinearity import bla, evidence_summary, term_check
    from ..signals import derive_missing

    rec = load_record_guarded(args.data, columns=args.columns, units=args.units, resample=args.resample,
                              fs=args.fs, rows=args.rows)
    full = derive_missing(rec) if rec.v is None or rec.a is None else rec
    b = bla(full, period=args.period, transient=args.transient, n_segments=args.segments)
    oe = None if args.no_output_check else term_check(full)
    summary = evidence_summary(full, broadband=b, output_check=oe, run_output_check=False)
    if args.bla_csv:
        cols = b.to_columns()
        with Path(args.bla_csv).open("w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow([f"{k} [{_unit_of(k, b)}]" if _unit_of(k, b) else k for k in cols])
            for row in zip(*cols.values()):
                writer.writerow([_cell(v) for v in row])
    if args.json:
        s = b.stats()
        payload = {"record": rec.name, "summary": list(summary), "layout": b.layout.describe(b.fs),
                   "input_kind": b.input_kind, "nonlinear": b.nonlinear,
                   "levels_db": {k: (v if math.isfinite(v) else None) for k, v in s.items()},
                   "output_check": None if oe is None else {"selected": list(oe.selected),
                                                            "findings": list(oe.findings())}}
        Path(args.json).write_text(json.dumps(payload, indent=2, allow_nan=False), encoding="utf-8")
    return 0, format_evidence_report(rec.name, summary, b, oe)


def _unit_of(key: str, b: Any) -> str:
    if key.startswith("g_real") or key.startswith("g_imag"):
        return str(b.unit)
    if key.endswith("_db"):
        return f"dB re 1 {b.y_unit if key.startswith('output') else b.unit}"
    return {"freq_hz": "", "phase_deg": ""}.get(key, "")


def _cell(v: Any) -> str:
    if isinstance(v, (bool,)) or type(v).__name__ == "bool_":
        return "1" if bool(v) else "0"
    f = float(v)
    return f"{f:.9g}" if math.isfinite(f) else ""
