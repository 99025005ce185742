"""``python -m nlid_core friction identify``: staged LuGre identification from the command line."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from ..errors import NlidError
from ..jsonsafe import json_safe
from .common import COMMAND_HELP, share_options

__all__ = ["add_friction_parser", "run_friction", "format_friction_report", "steady_outcome"]

#: Options of ``identify`` that ``friction identify`` takes as they are (loading the records).
SHARED_OPTIONS = ("columns", "units", "scale", "fs", "resample", "rows")


def add_friction_parser(sub: argparse._SubParsersAction[Any], identify: argparse.ArgumentParser) -> None:
    """Add ``friction identify``; its loading options are ``identify``'s own."""
    fr = sub.add_parser("friction", help=COMMAND_HELP["friction"])
    fsub = fr.add_subparsers(dest="friction_command", required=True, parser_class=type(fr))
    fi = fsub.add_parser(
        "identify", help="identify LuGre friction in stages: steady curve, pre-sliding, optional joint polish",
        description="Stage 1 finds the constant-velocity plateaus of the velocity-staircase records (--steady:"
                    " columns t, f, x, v; f the drive force, v measured) and fits Fc, Fs, vs, sigma2 to the"
                    " steady friction curve; stage 2 fits sigma0, sigma1 (and m0 unless fixed) to the"
                    " pre-sliding records (--presliding: t, f, x, below breakaway, from rest) by output error with"
                    " the stage-1 values fixed; --polish refits everything jointly.")
    fi.add_argument("--steady", action="append", required=True, metavar="FILE",
                    help="velocity-staircase record (repeatable)")
    fi.add_argument("--presliding", action="append", default=[], metavar="FILE",
                    help="pre-sliding record below breakaway (repeatable)")
    fi.add_argument("--fix", metavar="NAME=VALUE,...",
                    help="held parameters among m0,sigma0,sigma1,sigma2,Fc,Fs,vs (SI); m0 is the known moving mass")
    fi.add_argument("--polish", action="store_true", help="stage 3: joint fit of every free parameter")
    fi.add_argument("--min-plateau", type=float, default=0.2, metavar="S",
                    help="shortest accepted plateau after settling (s, default 0.2)")
    fi.add_argument("--json", metavar="OUT", help="write the result as JSON")
    fi.add_argument("--quiet", action="store_true", help="print nothing but errors")
    share_options(fi, identify, SHARED_OPTIONS)


def _fmt(v: float) -> str:
    return f"{v:.6g}" if math.isfinite(v) else "-"


def format_friction_report(result: Any) -> str:
    """Text report: parameters, stages with what each fixed and estimated, plateaus, the steady curves, verdict."""
    from ..friction.staged import FrictionResult
    from ..friction.steady import CURVES, undetermined

    assert isinstance(result, FrictionResult)
    lines = [f"{'success' if result.success else 'FAILED'}: {result.message}"]
    partial = steady_outcome(result)[1]
    if partial:
        lines.append(partial)
    lines += ["",
             f"{'parameter':10s} {'value':>13s} {'stderr':>11s}   {int(100 * result.confidence)} % interval"
             f"{'':14s} unit       flags"]
    for e in result.estimates:
        lines.append(f"{e.name:10s} {_fmt(e.value):>13s} {_fmt(e.stderr):>11s}   "
                     f"[{_fmt(e.ci[0])}, {_fmt(e.ci[1])}]".ljust(58) + f" {e.unit:10s} {','.join(e.flags)}")
    for s in result.stages:
        lines += ["", f"stage: {s.name} ({s.time_s:.2f} s) — {s.message}",
                  f"  estimated: {', '.join(s.estimated) or '-'}",
                  "  fixed: " + (", ".join(f"{k}={v:.6g} ({src})" for k, (v, src) in s.fixed.items()) or "-"),
                  f"  why: {s.why}"]
        lines += [f"  {n}" for n in s.notes]
    if result.curves:
        lines += ["", "steady friction curves (stage 1, through the plateau points):"]
        for fit in result.curves.values():
            why = undetermined(fit)
            values = ", ".join(f"{n} {_fmt(v)} ± {_fmt(e)} {u}" for n, v, e, u in
                               zip(fit.names, fit.values, fit.stderr, fit.units, strict=True))
            lines.append(f"  {CURVES[fit.curve].description}: {values}; χ²/dof {_fmt(fit.chi2 / max(fit.dof, 1))}"
                         + (f" — NOT DETERMINED: {why}" if why else ""))
    if result.verdict:
        lines += ["", result.verdict]
    if result.warnings:
        lines += ["", "warnings:"] + [f"  {w}" for w in result.warnings]
    return "\n".join(lines)


def steady_outcome(result: Any) -> tuple[bool, str]:
    """Whether a failed staged fit still has a determined steady curve (a partial result), and a line saying which
    curve the plateaus determine and why the Stribeck one is not (empty when there is nothing to add)."""
    from ..friction.steady import undetermined

    if result.success or not result.curves:
        return False, ""
    stribeck, simple = result.curves.get("stribeck"), result.curves.get("coulomb-viscous")
    why = undetermined(stribeck) if stribeck is not None else "not fitted"
    if why is None and stribeck is not None:
        return True, "PARTIAL: the steady Stribeck curve is determined (below); the later stages are not"
    if simple is None or undetermined(simple) is not None:
        return False, ""
    values = ", ".join(f"{n} = {_fmt(v)} ± {_fmt(e)} {u}" for n, v, e, u in
                       zip(simple.names, simple.values, simple.stderr, simple.units, strict=True))
    return True, (f"PARTIAL: the plateaus determine Coulomb + viscous friction ({values}); the Stribeck curve is"
                  f" not determined: {why}")


def run_friction(args: argparse.Namespace) -> tuple[int, Any]:
    """Run ``friction identify``: (exit status: 0 on success, 4 when a stage failed but a steady friction curve
    is determined, 1 when nothing is; the FrictionResult)."""
    from ..modeltext import parse_values
    from ..friction.staged import FrictionOptions, identify_friction
    from ..guard import load_records_guarded

    fixed = parse_values(args.fix, "--fix")
    if not args.min_plateau > 0:
        raise NlidError(f"`--min-plateau` must be positive, got {args.min_plateau}")
    options = FrictionOptions(fixed=fixed, polish=args.polish, min_duration_s=args.min_plateau)
    steady = load_records_guarded(args.steady, columns=args.columns, units=args.units, resample=args.resample,
                                  fs=args.fs, rows=args.rows)
    pre = load_records_guarded(args.presliding, columns=args.columns, units=args.units, resample=args.resample,
                               fs=args.fs) if args.presliding else ()
    result = identify_friction(steady, pre, options)
    if args.json:
        try:
            Path(args.json).write_text(json.dumps(json_safe(result.to_dict()), indent=2, allow_nan=False))
        except OSError as exc:
            raise NlidError(f"cannot write `{args.json}`: {exc.strerror}") from None
    return (0 if result.success else 4 if steady_outcome(result)[0] else 1), result


