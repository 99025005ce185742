"""``python -m nlid_core pendulum simulate|identify|interval``: the flexible double pendulum of seed 002."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from ..errors import ModelSpecError, NlidError
from .common import COMMAND_HELP

__all__ = ["add_pendulum_parser", "run_pendulum"]


def _model_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("model (defaults: the paper's preset)")
    g.add_argument("--E-ab", dest="e_ab", type=float, metavar="PA", help="Young's modulus of rod AB (default 2e7 Pa)")
    g.add_argument("--E-oa", dest="e_oa", type=float, metavar="PA", help="Young's modulus of rod OA (default 2e8 Pa)")
    g.add_argument("--height", type=float, metavar="M",
                   help="in-plane section height of both rods (default 0.4 m, which reproduces the paper's table)")
    g.add_argument("--dt", type=float, metavar="S", help="generalized-alpha time step (default 5e-4 s)")
    g.add_argument("--rho-inf", dest="rho_inf", type=float, metavar="R",
                   help="generalized-alpha spectral radius at infinite frequency, 0..1 (default 0.9)")


def add_pendulum_parser(sub: argparse._SubParsersAction[Any]) -> None:
    """Add ``pendulum simulate``, ``pendulum identify`` and ``pendulum interval``."""
    pe = sub.add_parser("pendulum", help=COMMAND_HELP["pendulum"])
    ps = pe.add_subparsers(dest="pendulum_command", required=True, parser_class=type(pe))

    s = ps.add_parser("simulate", help="simulate the pendulum released from rest; write t, x_B, y_B",
                      description="Releases the planar ANCF double pendulum (OA 1 m, 2 elements; AB 2 m, 4 elements)"
                                  " from rest at angles theta1, theta2 below the horizontal and writes the tip B's"
                                  " position at multiples of --dt-out.")
    s.add_argument("--theta1", type=float, required=True, metavar="RAD", help="angle of OA below the horizontal")
    s.add_argument("--theta2", type=float, required=True, metavar="RAD", help="angle of AB below the horizontal")
    s.add_argument("--t-end", dest="t_end", type=float, default=2.0, metavar="S", help="duration (default 2.0 s)")
    s.add_argument("--dt-out", dest="dt_out", type=float, default=0.05, metavar="S",
                   help="output row spacing (default 0.05 s)")
    s.add_argument("--rigid", action="store_true", help="the rigid-body limit instead of the flexible model")
    s.add_argument("--out", required=True, metavar="OUT.csv", help="CSV with columns t, x_B, y_B (m)")
    s.add_argument("--quiet", action="store_true", help="print nothing but errors")
    _model_options(s)

    i = ps.add_parser("identify", help="release angles (and E of AB) from a tip trajectory",
                      description="Least squares with exact sensitivities of the time integrator (--method lsq)"
                                  " or a particle swarm on a trajectory surrogate (--method pso); standard errors"
                                  " and 95 %% intervals from the final Jacobian.")
    i.add_argument("traj", metavar="TRAJ.csv", help="CSV with columns t, x_B, y_B (rows uniformly spaced from 0)")
    i.add_argument("--free", default="theta1,theta2", metavar="NAMES",
                   help="parameters to estimate among theta1,theta2,E_ab,E_oa (default theta1,theta2)")
    i.add_argument("--fix", metavar="NAME=VALUE,...", help="held values (rad, Pa)")
    i.add_argument("--method", choices=("lsq", "pso"), default="lsq", help="default lsq")
    i.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler for the surrogate runs of --method pso")
    i.add_argument("--json", metavar="OUT", help="write parameters (value, stderr, ci95) as JSON")
    i.add_argument("--quiet", action="store_true", help="print nothing but errors")
    _model_options(i)

    v = ps.add_parser("interval", help="input intervals from response bounds (surrogate + particle swarm)",
                      description="Recovers the intervals (lower, upper, mid, radius) of the free inputs from the"
                                  " bounds of the tip response: a first estimate by least squares on the bounds'"
                                  " mid-line, one Chebyshev surrogate over a search domain around it (its runs in"
                                  " parallel: local processes, or a Dask cluster with --scheduler), and the"
                                  " standard (pso) or improved (ipso) particle swarm; --method both compares them.")
    v.add_argument("bounds", metavar="BOUNDS.csv", help="CSV with columns t, x_B_min, x_B_max, y_B_min, y_B_max")
    v.add_argument("--free", default="theta1,theta2", metavar="NAMES",
                   help="uncertain inputs among theta1,theta2,E_ab,E_oa (default theta1,theta2)")
    v.add_argument("--fix", metavar="NAME=VALUE,...", help="exactly known inputs (rad, Pa)")
    v.add_argument("--method", choices=("ipso", "pso", "both"), default="ipso", help="default ipso")
    v.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler address (default: local processes)")
    v.add_argument("--workers", type=int, metavar="N", help="local worker processes (default: one per core)")
    v.add_argument("--order", type=int, default=4, help="surrogate order (default 4)")
    v.add_argument("--kind", choices=("total", "tensor"), default="total", help="surrogate basis (default total)")
    v.add_argument("--population", type=int, default=40, help="swarm size (default 40)")
    v.add_argument("--iterations", type=int, default=100, help="swarm iterations (default 100)")
    v.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    v.add_argument("--json", metavar="OUT", help="write the intervals, fitness, forward runs and time as JSON")
    v.add_argument("--quiet", action="store_true", help="print nothing but errors")
    _model_options(v)


def _names(text: str) -> tuple[str, ...]:
    return tuple(n.strip() for n in text.split(",") if n.strip())


def _fixed(text: str | None) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        name, sep, value = item.partition("=")
        try:
            v = float(value)
        except ValueError:
            v = math.nan
        if not sep or not math.isfinite(v):
            raise ModelSpecError(f"--fix: expected NAME=VALUE with a finite number, got {item.strip()!r}")
        out[name.strip()] = v
    return out


def _model(args: argparse.Namespace) -> tuple[Any, Any]:
    from dataclasses import replace

    from ..multibody.pendulum import PendulumSpec, SolverSettings

    changes = {k: getattr(args, a) for k, a in (("e_ab", "e_ab"), ("e_oa", "e_oa"), ("height", "height"))
               if getattr(args, a) is not None}
    spec = replace(PendulumSpec(), **changes)
    sc = {k: getattr(args, k) for k in ("dt", "rho_inf") if getattr(args, k) is not None}
    return spec, replace(SolverSettings(), **sc)


def _write_json(path: str | None, doc: dict[str, Any]) -> None:
    if not path:
        return
    try:
        Path(path).write_text(json.dumps(doc, indent=2, allow_nan=False))
    except OSError as exc:
        raise NlidError(f"cannot write `{path}`: {exc.strerror}") from None


def _runner(args: argparse.Namespace) -> Any:
    from ..runners import runner

    return runner(getattr(args, "scheduler", None), workers=getattr(args, "workers", None))


def _simulate(args: argparse.Namespace) -> tuple[int, str]:
    from ..multibody.pendulum import simulate, simulate_rigid

    spec, settings = _model(args)
    if args.rigid:
        run = simulate_rigid(args.theta1, args.theta2, spec=spec, t_end=args.t_end, dt_out=args.dt_out)
    else:
        run = simulate(args.theta1, args.theta2, spec=spec, t_end=args.t_end, dt_out=args.dt_out, settings=settings)
    if not run.success:
        raise NlidError(f"the simulation failed: {run.message}")
    try:
        run.to_frame().to_csv(args.out, index=False, float_format="%.10g")
    except OSError as exc:
        raise NlidError(f"cannot write `{args.out}`: {exc.strerror}") from None
    return 0, (f"{run.model} pendulum released at theta1 = {args.theta1:.6g} rad, theta2 = {args.theta2:.6g} rad:"
               f" {run.t.size} rows to {args.out} (tip at t = {run.t[-1]:.4g} s: x_B = {run.x_b[-1]:.6g} m,"
               f" y_B = {run.y_b[-1]:.6g} m; {run.elapsed_s:.2f} s)")


def _identify(args: argparse.Namespace) -> tuple[int, str]:
    from ..multibody.files import read_trajectory
    from ..multibody.inverse import identify_trajectory

    spec, settings = _model(args)
    t, x, y = read_trajectory(args.traj)
    kw: dict[str, Any] = {}
    if args.method == "pso":
        kw["runner"] = _runner(args)
    fit = identify_trajectory(t, x, y, free=_names(args.free), fixed=_fixed(args.fix), spec=spec, settings=settings,
                              method=args.method, **kw)
    if "runner" in kw and hasattr(kw["runner"], "close"):
        kw["runner"].close()
    _write_json(args.json, fit.to_dict())
    lines = [f"{'converged' if fit.success else 'NOT CONVERGED'} ({fit.method}): {fit.message}",
             f"{'parameter':10s} {'value':>14s} {'stderr':>11s}   95 % interval",
             *[f"{p.name:10s} {p.value:14.8g} {p.stderr:11.3g}   [{p.ci[0]:.8g}, {p.ci[1]:.8g}] {p.unit}"
               for p in fit.parameters],
             f"tip misfit {1e3 * fit.rms_m:.3g} mm rms over {t.size} rows; {fit.forward_runs} forward runs,"
             f" {fit.elapsed_s:.1f} s; condition number {fit.condition_number:.3g}"]
    return (0 if fit.success else 1), "\n".join(lines)


def _interval(args: argparse.Namespace) -> tuple[int, str]:
    from ..multibody.files import read_bounds
    from ..multibody.interval import compare_swarms, interval_inverse

    spec, settings = _model(args)
    bounds = read_bounds(args.bounds)
    common: dict[str, Any] = {"free": _names(args.free), "fixed": _fixed(args.fix), "spec": spec,
                              "settings": settings, "order": args.order, "kind": args.kind,
                              "population": args.population, "iterations": args.iterations, "seed": args.seed}
    with _runner(args) as run_obj:
        if args.method == "both":
            results = list(compare_swarms(bounds, runner=run_obj, **common))
        else:
            results = [interval_inverse(bounds, method=args.method, runner=run_obj, **common)]
    main = results[-1]
    doc = main.to_dict()
    if len(results) > 1:
        doc["comparison"] = {r.method: r.to_dict() for r in results}
    _write_json(args.json, doc)
    lines = [f"first estimate and surrogate: {main.forward_runs} forward runs (order {main.surrogate.order},"
             f" {main.surrogate.kind}, held-out error {1e3 * main.surrogate_holdout_rms:.3g} mm rms)"]
    for r in results:
        lines.append(f"{r.method}: fitness {r.fitness:.4g} m², {r.swarm.evaluations} fitness evaluations,"
                     f" {r.swarm.elapsed_s:.1f} s swarm, {r.elapsed_s:.1f} s in all"
                     + ("" if r.success else f" — {r.message}"))
        for iv in r.intervals:
            lines.append(f"  {iv.name:7s} [{iv.lower:.6g}, {iv.upper:.6g}] = {iv.mid:.6g} ± {iv.radius:.4g} "
                         f"{'rad' if iv.name.startswith('theta') else 'Pa'}")
    return (0 if main.success else 1), "\n".join(lines)


def run_pendulum(args: argparse.Namespace) -> tuple[int, str]:
    """Run ``pendulum <command>``: (exit status, report); errors raise ``NlidError``."""
    return {"simulate": _simulate, "identify": _identify, "interval": _interval}[args.pendulum_command](args)
