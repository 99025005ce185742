"""``python -m nlid_core simulate``: a model driven by a recorded force, written as CSV.

See :data:`LAYOUT` for the file written.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import NlidError
from ..models import TermModel
from ..params import ParameterSet
from ..record import Record
from .common import COMMAND_HELP, share_options

__all__ = ["LAYOUT", "SHARED_OPTIONS", "SimulatedRun", "add_simulate_parser", "closed_loop_run", "simulation_parameters",
           "run_simulation", "write_run"]

FloatArray = NDArray[np.float64]

#: The output file, as the command's help states it.
LAYOUT = """The output CSV has one row per input row and one column per channel, in this order: time t,
the input f, the states x, v and every internal state by its name (z of lugre, ...), then the
acceleration a. Each header is the channel followed by its unit in brackets: "t [s]", "f [N]",
"x [m]", "v [m/s]", "z [m]", "a [m/s^2]" (the form the loaders read, so the file can be given to
identify). Numbers have 17 significant digits, which reproduces every float exactly. Nothing is
written when the simulation fails (exit status 1)."""
#: Options of ``identify`` that ``simulate`` takes as they are (loading the input).
SHARED_OPTIONS = ("columns", "units", "scale", "fs", "resample", "rows")


def add_simulate_parser(sub: argparse._SubParsersAction[Any], identify: argparse.ArgumentParser) -> None:
    """Add the ``simulate`` command; its loading options are ``identify``'s own (one definition).

    Parameters
    ----------
    sub : argparse subparsers
        The CLI's commands.
    identify : argparse.ArgumentParser
        The ``identify`` parser, whose :data:`SHARED_OPTIONS` are added as they are.
    """
    from ..simulate import INPUT_HOLDS

    sim = sub.add_parser("simulate", help=COMMAND_HELP["simulate"],
                         description="Simulate the model driven by the force of INPUT (which needs t, or --fs, and"
                                     " f; the loading options are identify's). " + " ".join(LAYOUT.split()))
    sim.add_argument("input", help="record file (CSV, Parquet, Excel, MAT) with the force")
    sim.add_argument("--terms", help="model terms (see the `terms` command), e.g. m0,c1,k1,k3 (or --model)")
    sim.add_argument("--params", metavar="NAME=VALUE,...",
                     help="parameter values, SI (any finite value; the others take their defaults, see `terms`)")
    sim.add_argument("--custom", action="append", default=[], metavar="NAME=EXPR",
                     help="a term typed as its force, e.g. asym=ka*x*abs(x) (repeatable; as for identify)")
    sim.add_argument("--initial-state", metavar="NAME=VALUE,...",
                     help="initial x, v and internal states by name (default: at rest, internal states at their"
                          " steady value)")
    sim.add_argument("--method", default="auto", choices=("auto", "rk4", "sdirk"),
                     help="integrator (auto: SDIRK4 when RK4 would be unstable)")
    sim.add_argument("--input-hold", default="cubic", choices=INPUT_HOLDS, help="force reconstruction between samples")
    sim.add_argument("--closed-loop", metavar="KEY=VALUE,...",
                     help="simulate inside a discrete position controller driven by --reference instead of by the"
                          " recorded force: kp (1/s), kv (controller units per m/s), gain (force per controller"
                          " unit), optional ki, limit (saturation), delay (samples, default 1), filter (default 0.5);"
                          " e.g. kp=160.18,kv=243.45,gain=35.15,limit=10 for the EMPS drive axis")
    sim.add_argument("--reference", metavar="COLUMN", help="with --closed-loop: the file's column of the position"
                                                          " reference (in the units of x)")
    sim.add_argument("--pulses", metavar="COLUMN", help="with --closed-loop: the file's column of an additive force on"
                                                       " the model (in the SI force unit, N)")
    sim.add_argument("--out", required=True, help="output CSV file")
    sim.add_argument("--quiet", action="store_true", help="print nothing but errors")
    share_options(sim, identify, SHARED_OPTIONS)
    from .mdof import add_mdof_options

    add_mdof_options(sim, identify=False)


@dataclass(frozen=True, kw_only=True)
class SimulatedRun:
    """A simulation as the columns of the output file.

    Attributes
    ----------
    columns : mapping of str to (n,) ndarray
        Header (channel and unit) -> values, in file order.
    success : bool
    message : str
    method : str
        The integrator used.
    """

    columns: Mapping[str, FloatArray]
    success: bool
    message: str
    method: str


def simulation_parameters(model: TermModel, values: Mapping[str, float], *, force_unit: str = "N",
                          x_unit: str = "m") -> ParameterSet:
    """The model's default parameters with ``values`` set; any finite value is taken (bounds are
    for estimation, and are widened to hold it).

    Parameters
    ----------
    model : TermModel
        The model.
    values : mapping of str to float
        ``--params``.
    force_unit, x_unit : str
        The record's units.

    Raises
    ------
    ModelSpecError
        An unknown name (listing the model's parameters).
    """
    from ..modeltext import check_names

    check_names(list(values), model.param_names, "--params")
    ps = model.default_parameters(force_unit=force_unit, x_unit=x_unit)
    for name, v in values.items():
        p = ps[name]
        ps = ps.update(name, value=v, lower=min(p.lower, v), upper=max(p.upper, v))
    return ps


def run_simulation(model: TermModel, record: Record, params: ParameterSet, initial: Mapping[str, float], *,
                   input_hold: str = "cubic", method: str = "auto") -> SimulatedRun:
    """Simulate ``model`` driven by the force of ``record``.

    With no internal state in ``initial`` this is :func:`nlid_core.simulate.simulate` (internal
    states start at their steady value for the initial velocity); otherwise the full initial
    state goes to :func:`nlid_core.dynamics.integrate.integrate`, with the same divergence limit.

    Parameters
    ----------
    model : TermModel
        Must have an inertia term.
    record : Record
        Gives ``t`` and ``f`` (and the units).
    params : ParameterSet
        Every parameter of the model.
    initial : mapping of str to float
        ``--initial-state``: values of ``x``, ``v`` and internal states by name (others at rest /
        steady).
    input_hold : {"cubic", "foh", "zoh"}
        Force reconstruction between samples.
    method : {"auto", "rk4", "sdirk"}
        Integrator.

    Raises
    ------
    ModelSpecError
        A model that cannot be simulated, unknown state names (listing the valid ones).
    """
    from ..modeltext import check_names
    from ..simulate import simulate
    from ..terms.units import ACCELERATION, format_unit

    model.require_simulable()
    check_names(list(initial), model.state_names, "--initial-state", "states")
    t, f = record.t, record.f
    fu, xu = record.unit("f"), record.unit("x")
    x0 = (initial.get("x", 0.0), initial.get("v", 0.0))
    internal = [n for n in model.internal_state_names if n in initial]
    states: dict[str, FloatArray]
    if not internal:
        res = simulate(model, t, f, params, x0=x0, input_hold=input_hold, method=method)
        states = {"x": res.x, "v": res.v, **res.states}
        acc, success, message, used = res.a, res.success, res.message, res.method
    else:
        from ..dynamics.integrate import integrate

        theta = params.values
        y0 = model.initial_state(x0, theta)
        for k, name in enumerate(model.state_names):
            if name in initial:
                y0[k] = initial[name]
        limits = np.full(model.n_states, np.inf)
        limits[0] = 1e6 * (1.0 + abs(x0[0]))
        tr = integrate(model, t, f, theta, y0, input_hold=input_hold, method=method, limits=limits)
        states = {n: tr.output(n) for n in model.state_names}
        acc, success, message, used = tr.output("a"), tr.success, tr.message, tr.method
    units = {"t": record.unit("t"), "f": fu, **model.state_units(fu, xu), "a": format_unit(ACCELERATION, fu, xu)}
    columns = {"t": t, "f": f, **states, "a": acc}
    return SimulatedRun(columns={f"{n} [{units[n]}]": np.asarray(v, dtype=np.float64) for n, v in columns.items()},
                        success=bool(success), message=str(message), method=str(used))


def write_run(run: SimulatedRun, out: str) -> None:
    """Write ``run`` as CSV (see the module notes for the layout).

    Parameters
    ----------
    run : SimulatedRun
        The columns.
    out : str
        Output path.

    Raises
    ------
    NlidError
        The file cannot be written.
    """
    import pandas as pd

    try:
        pd.DataFrame(dict(run.columns)).to_csv(out, index=False, float_format="%.17g")
    except OSError as exc:
        raise NlidError(f"cannot write `{out}`: {exc.strerror}") from None



def closed_loop_run(model: TermModel, record: Record, reference: Record, pulses: Record | None, params: ParameterSet,
                    spec: str) -> tuple[SimulatedRun, str]:
    """``model`` inside the loop of ``spec`` (:func:`nlid_core.closed_loop.parse_loop`), driven by the displacement
    of ``reference`` (the reference column loaded as ``x``) and the force of ``pulses``; the columns to write
    and a line with the benchmark's relative errors against ``record``'s measured displacement and force."""
    from ..closed_loop import check_in_loop, parse_loop
    from ..terms.units import ACCELERATION, format_unit

    check = check_in_loop(model, params, record, reference.x, parse_loop(spec),
                          pulses=None if pulses is None else pulses.f)
    run = check.run
    fu, xu = record.unit("f"), record.unit("x")
    units = {"t": record.unit("t"), "r": xu, "f": fu, "u": "controller", **model.state_units(fu, xu),
             "a": format_unit(ACCELERATION, fu, xu)}
    columns = {"t": run.t, "r": run.reference, "f": run.force, "u": run.command, "x": run.x, "v": run.v, **run.states,
               "a": run.a}
    out = SimulatedRun(columns={f"{n} [{units[n]}]": np.asarray(v, dtype=np.float64) for n, v in columns.items()},
                       success=run.success, message=run.message, method=run.method)
    line = check.summary()
    return out, line
