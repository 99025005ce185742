"""The command line's parser: one subcommand per command, built only for the command being run (so a
command imports only what it uses), with argument types that refuse bad numbers, rates and mappings in
one line."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from ..errors import NlidError
from .common import COMMAND_HELP

__all__ = ["FS_RANGE_HZ", "MAX_STEPS", "UsageError", "build_parser", "command_of"]


#: Sampling rates accepted by ``--fs`` (Hz): the sampling intervals a record accepts (1 ns to 1e6 s).
FS_RANGE_HZ = (1e-6, 1e9)


#: Most frequencies of a stepped sine.
MAX_STEPS = 10_000


class UsageError(Exception):
    """A command line argparse refused (its message names the command and points to --help)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message} (see --help)")


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def _positive(text: str) -> float:
    value = _number(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text!r}")
    return value


def _nonnegative(text: str) -> float:
    value = _number(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text!r}")
    return value


def _rate(text: str) -> float:
    value = _number(text)
    lo, hi = FS_RANGE_HZ
    if not lo <= value <= hi:
        raise argparse.ArgumentTypeError(f"must be a sampling rate between {lo:g} and {hi:g} Hz, got {text!r}")
    return value


def _columns_spec(text: str) -> dict[str, str]:
    """``--columns`` as a channel -> column mapping; a bad channel name is a usage error naming the option."""
    from ..io import parse_columns_spec

    try:
        return parse_columns_spec(text)
    except NlidError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _units_spec(text: str) -> dict[str, str]:
    """``--units`` as a channel -> unit mapping; a bad channel or unit is a usage error naming the option."""
    from ..io import parse_units_spec

    try:
        return parse_units_spec(text)
    except NlidError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _scale_spec(text: str) -> dict[str, str]:
    """``--scale`` as a channel -> factor-to-SI mapping (written as ``--units`` takes it)."""
    from ..io import parse_scale_spec

    try:
        return parse_scale_spec(text)
    except NlidError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text!r}")
    return value


def command_of(argv: Sequence[str] | None) -> str | None:
    """The command named in ``argv`` (its first word that is not an option), or None."""
    for word in sys.argv[1:] if argv is None else argv:
        if not word.startswith("-"):
            return word
    return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The CLI's parser, with the arguments of the command ``argv`` names (every command when None is
    named, e.g. for ``--help``, lists with its one-line help only).

    Building only the named command's arguments keeps start-up light: each command's module (and what
    it imports: pandas, sqlalchemy, the estimators) is imported only when that command runs.
    """
    command = command_of(argv)
    prog = "nlid" if Path(sys.argv[0]).name == "nlid" else "python -m nlid_core"
    p = _Parser(prog=prog, description="Identify nonlinear single-DOF mechanical systems.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    if command not in COMMAND_HELP:
        for name, text in COMMAND_HELP.items():
            sub.add_parser(name, help=text)
        return p
    ident = _add_identify(sub) if command in _USE_IDENTIFY else None
    for name, text in COMMAND_HELP.items():
        if name == "identify":
            if ident is None:
                sub.add_parser(name, help=text)
        elif name == command:
            _BUILDERS[name](sub, ident)
        else:
            sub.add_parser(name, help=text)
    return p


def _add_identify(sub: argparse._SubParsersAction[Any]) -> argparse.ArgumentParser:
    from .mdof import add_mdof_options
    from .model import add_model_options
    from .store_access import add_study_options
    from ..estimate import INITIAL_STATES, METHODS
    from ..models import DEFAULT_TERMS, TERMS
    from ..simulate import INPUT_HOLDS

    ident: argparse.ArgumentParser = sub.add_parser("identify", help=COMMAND_HELP["identify"])
    ident.add_argument("data", nargs="*", help="record files (CSV, Parquet, Excel, MAT); several are fitted jointly")
    ident.add_argument("--columns", type=_columns_spec,
                       help="column mapping, e.g. t=time,f=force,x=disp; several DOFs: t=time,f1=F,x1=X1,x2=X2"
                            " (default: columns t,f,x,v,a, or f1,x1,x2,... by name)")
    ident.add_argument("--units", type=_units_spec,
                       help="units of the file's columns, e.g. x=mm,f=kN or x2=mm (converted to SI)")
    ident.add_argument("--closed-loop", metavar="KEY=VALUE,...",
                       help="fit inside a discrete position controller (as simulate --closed-loop: kp, kv, gain,"
                            " limit, ...), driven by --reference: the simulated position and applied force against"
                            " the measured ones; starts from equation error")
    ident.add_argument("--reference", metavar="COLUMN",
                       help="with --closed-loop: the file's column of the position reference")
    ident.add_argument("--scale", type=_scale_spec,
                       help="multiply a channel by a factor that gives it in a unit, e.g. f=35.15N (a drive's"
                            " gain turns its voltage into a force); instead of --units for that channel")
    ident.add_argument("--terms", default=",".join(DEFAULT_TERMS),
                       help=f"model terms from {','.join(TERMS)} (default {','.join(DEFAULT_TERMS)})")
    ident.add_argument("--method", default="two-stage", choices=METHODS)
    ident.add_argument("--outputs", default="x", help="output-error channels among x,v,a (measured only); default x")
    ident.add_argument("--initial-state", default="auto", choices=INITIAL_STATES,
                       help="initial state per record: estimated, at rest, first sample, or auto (rest when the"
                            " record starts at rest, else estimated)")
    ident.add_argument("--input-hold", default="cubic", choices=INPUT_HOLDS,
                       help="force reconstruction between samples (zoh: held over each sample, as a controller's"
                            " output; equation error then balances the mean of the values held either side)")
    ident.add_argument("--sample-step", type=_count, default=1, help="use every k-th sample in the residual")
    ident.add_argument("--force-threshold", type=_nonnegative, default=0.0,
                       help="equation error: drop samples with |f| below this fraction of max|f|")
    ident.add_argument("--v-eps", type=_positive,
                       help="velocity scale of the Coulomb term fc (m/s, default 1e-3; the start value of v_eps)")
    ident.add_argument("--gap", type=_nonnegative, help="dead-zone half-width of the kg term (m, default 0; value of gap)")
    add_model_options(ident)
    add_mdof_options(ident, identify=True)
    ident.add_argument("--resample", action="store_true", help="resample irregularly sampled records to a uniform grid")
    ident.add_argument("--fs", type=_rate,
                       help=f"sampling rate (Hz) for files without a time column ({FS_RANGE_HZ[0]:g} to"
                            f" {FS_RANGE_HZ[1]:g})")
    ident.add_argument("--rows", metavar="START:STOP", help="use only these data rows of each DATA file")
    ident.add_argument("--validate-rows", metavar="START:STOP", help="use only these data rows of each --validate file")
    ident.add_argument("--lowpass", type=_positive, metavar="HZ",
                       help="zero-phase low-pass filter every channel at this cut-off before identifying")
    ident.add_argument("--differentiator", default="savgol", choices=("savgol", "spectral", "gradient"),
                       help="how missing velocity and acceleration are derived (equation error)")
    ident.add_argument("--validate", action="append", default=[], metavar="FILE",
                       help="validation record (may be repeated); its first --n-init samples set the initial state")
    ident.add_argument("--n-init", type=_count, default=50, help="validation samples used for the initial state")
    ident.add_argument("--json", metavar="OUT", help="write the result as JSON")
    ident.add_argument("--quiet", action="store_true", help="print nothing but errors")
    add_study_options(ident)
    return ident


def _add_example(sub: argparse._SubParsersAction[Any], _ident: argparse.ArgumentParser | None) -> None:
    from ..examples import EXAMPLES
    from ..friction.experiments import FRICTION_EXAMPLES

    ex = sub.add_parser("example", help=COMMAND_HELP["example"],
                        description="Chirp-driven single-DOF systems (" + ", ".join(sorted(EXAMPLES)) + "); "
                                    "simulated friction experiments with a LuGre truth ("
                                    + ", ".join(FRICTION_EXAMPLES) + ": --truth takes the LuGre parameters and"
                                    " m0); and the Bouc-Wen benchmark's estimation data (bouc-wen).")
    ex.add_argument("name", choices=sorted(EXAMPLES) + list(FRICTION_EXAMPLES) + ["bouc-wen"],
                    help="example system")
    ex.add_argument("--out", required=True, help="output file (.csv or .parquet)")
    ex.add_argument("--seed", type=_count, help="noise RNG seed")
    ex.add_argument("--amplitude", type=_nonnegative, help="chirp amplitude (N)")
    ex.add_argument("--f0", type=_nonnegative, help="chirp start frequency (Hz)")
    ex.add_argument("--f1", type=_positive, help="chirp end frequency (Hz)")
    ex.add_argument("--duration", type=_positive, help="record length (s)")
    ex.add_argument("--fs", type=_rate, help="sampling rate (Hz)")
    ex.add_argument("--truth", metavar="NAME=VALUE,...",
                    help="true coefficients instead of the example's, e.g. m0=1,c1=0.8,k1=1500,k3=-2e5 (SI)")
    ex.add_argument("--noise", metavar="CH=SD,...", help="noise standard deviation per channel, e.g. x=1e-4,v=1e-3")
    ex.add_argument("--measured", metavar="x[,v,a]", help="response channels written to the file")


def _add_excitation(sub: argparse._SubParsersAction[Any], _ident: argparse.ArgumentParser | None) -> None:
    exc = sub.add_parser("excitation", help=COMMAND_HELP["excitation"])
    exc.add_argument("kind", choices=("linear-chirp", "log-chirp", "multisine", "stepped-sine"))
    exc.add_argument("--out", required=True, help="output CSV file")
    exc.add_argument("--f0", type=_nonnegative, default=0.5, help="start / lowest frequency (Hz)")
    exc.add_argument("--f1", type=_positive, default=10.0, help="end / highest frequency (Hz)")
    exc.add_argument("--amplitude", type=_nonnegative, default=10.0, help="peak force (N); rms for the multisine")
    exc.add_argument("--duration", type=_positive, default=12.0, help="length (s)")
    exc.add_argument("--fs", type=_rate, default=500.0, help="sampling rate (Hz)")
    exc.add_argument("--steps", type=_count, default=8, help=f"frequencies of the stepped sine (2 to {MAX_STEPS})")


def _add_design(sub: argparse._SubParsersAction[Any], _ident: argparse.ArgumentParser | None) -> None:
    des = sub.add_parser("design", help=COMMAND_HELP["design"])
    des.add_argument("--truth", required=True, metavar="NAME=VALUE,...", help="prior model, e.g. m0=2,c1=0.5,k1=800,k3=2e4")
    des.add_argument("--noise", type=_positive, required=True, help="displacement noise standard deviation (m)")
    des.add_argument("--amplitude", type=_positive, default=10.0, help="chirp amplitude (N)")
    des.add_argument("--f0", type=_nonnegative, default=0.5, help="chirp start frequency (Hz)")
    des.add_argument("--f1", type=_positive, default=5.0, help="chirp end frequency (Hz)")
    des.add_argument("--duration", type=_positive, default=12.0, help="test length (s)")
    des.add_argument("--fs", type=_rate, default=500.0, help="sampling rate (Hz)")
    des.add_argument("--suggest", action="store_true",
                     help="also search amplitudes x1/3, x2/3, x1 and bands up to f1/2, f1, 1.5 f1 for the best test")
    des.add_argument("--json", metavar="OUT", help="write the prediction(s) as JSON")


def _add_terms(sub: argparse._SubParsersAction[Any], _ident: argparse.ArgumentParser | None) -> None:
    terms = sub.add_parser("terms", help=COMMAND_HELP["terms"])
    terms.add_argument("--json", action="store_true", help="print the table as JSON")


def _add_simulate(sub: argparse._SubParsersAction[Any], ident: argparse.ArgumentParser | None) -> None:
    from .simulate import add_simulate_parser

    assert ident is not None
    add_simulate_parser(sub, ident)


def _add_friction(sub: argparse._SubParsersAction[Any], ident: argparse.ArgumentParser | None) -> None:
    from .friction import add_friction_parser

    assert ident is not None
    add_friction_parser(sub, ident)


def _add_experiments(sub: argparse._SubParsersAction[Any], _ident: argparse.ArgumentParser | None) -> None:
    from .mdof import add_experiments_parser

    add_experiments_parser(sub)


def _add_mimo(sub: argparse._SubParsersAction[Any], ident: argparse.ArgumentParser | None) -> None:
    from .mdof import add_mimo_parser

    assert ident is not None
    add_mimo_parser(sub, ident)


def _add_split(sub: argparse._SubParsersAction[Any], ident: argparse.ArgumentParser | None) -> None:
    from .split import add_split_parser

    assert ident is not None
    add_split_parser(sub, ident)


def _add_pendulum(sub: argparse._SubParsersAction[Any], _ident: argparse.ArgumentParser | None) -> None:
    from .pendulum import add_pendulum_parser

    add_pendulum_parser(sub)


def _add_batch(sub: argparse._SubParsersAction[Any], _ident: argparse.ArgumentParser | None) -> None:
    from .batch import add_batch_parser

    add_batch_parser(sub)


def _add_nonlinearity(sub: argparse._SubParsersAction[Any], ident: argparse.ArgumentParser | None) -> None:
    from .evidence import add_evidence_parser

    assert ident is not None
    add_evidence_parser(sub, ident)


def _add_studies(sub: argparse._SubParsersAction[Any], _ident: argparse.ArgumentParser | None) -> None:
    from .studies import add_studies_parser

    add_studies_parser(sub)


def _add_health(sub: argparse._SubParsersAction[Any], _ident: argparse.ArgumentParser | None) -> None:
    from .studies import add_health_parser

    add_health_parser(sub)


#: How each command's arguments are added (identify's by :func:`_add_identify`).
_BUILDERS: dict[str, Callable[[argparse._SubParsersAction[Any], argparse.ArgumentParser | None], None]] = {
    "example": _add_example, "excitation": _add_excitation, "design": _add_design, "terms": _add_terms,
    "simulate": _add_simulate, "friction": _add_friction, "experiments": _add_experiments, "mimo": _add_mimo,
    "split": _add_split, "pendulum": _add_pendulum, "batch": _add_batch, "nonlinearity": _add_nonlinearity,
    "studies": _add_studies, "health": _add_health,
}


#: Commands that take some of identify's options as they are.
_USE_IDENTIFY = frozenset({"identify", "simulate", "friction", "mimo", "split", "nonlinearity"})
