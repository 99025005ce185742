"""Command-line interface: ``python -m nlid_core ...``.

Commands ``identify``, ``simulate`` (:mod:`nlid_core.cli.simulate`), ``split`` (:mod:`nlid_core.cli.split`),
``friction identify`` (:mod:`nlid_core.cli.friction`), ``pendulum simulate|identify|interval``
(:mod:`nlid_core.cli.pendulum`), ``batch`` (:mod:`nlid_core.cli.batch`), ``nonlinearity``
(:mod:`nlid_core.cli.evidence`), ``studies`` and ``health`` (:mod:`nlid_core.cli.studies`;
``identify --study NAME`` saves into a study), ``terms``,
``example``, ``excitation``, ``design``; model and parameter
options in :mod:`nlid_core.cli.model` (read by :mod:`nlid_core.modeltext`).

Exit status: 0 success; 1 the identification or simulation ran but failed
(diverged, did not converge, or ``identify``'s model explains a record worse
than its mean: the report or the error line says why); 4 ``identify`` ran but
its result is untrustworthy (:mod:`nlid_core.verdict`: a parameter at a bound
or undetermined, a physical order broken); 2 bad
input or usage (one line on stderr, no traceback); 3 an internal error (one
line; set ``NLID_DEBUG=1`` for the traceback); 130 interrupted (Ctrl-C); 141
the reader of the output stopped early (``nlid terms | head``), quietly, as a
command killed by SIGPIPE.

Whatever a file holds, an error is reported as one line of printable
characters of at most ``MESSAGE_CHARS`` characters: terminal escape
sequences and control characters are removed, line breaks folded, and a
longer message is cut with an ellipsis. Nothing else is written to stderr:
warnings raised while a command runs (numpy overflow, a reader's
complaints) are listed, counted, in the report's and the JSON's
``warnings`` instead.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import unicodedata
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import NlidError
from .common import names_of
from .parser import MAX_STEPS, UsageError, build_parser, command_of

if TYPE_CHECKING:
    from .simulate import SimulatedRun

__all__ = ["main", "one_line", "MESSAGE_CHARS"]

#: Longest error line the CLI prints (longer messages are cut with an ellipsis).
MESSAGE_CHARS = 300
#: Most samples ``example``, ``excitation`` and ``design`` generate (duration x sampling rate).
MAX_GENERATED_SAMPLES = 2_000_000
# ANSI/VT escape sequences: CSI (ESC [ or the 8-bit CSI), OSC (ESC ] ... BEL or ST), other two-byte ESC codes
_ESCAPES = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x1b[ -~]?")


def one_line(text: object, limit: int = MESSAGE_CHARS) -> str:
    """``text`` as one line of printable characters of at most ``limit`` characters.

    Terminal escape sequences are removed, line breaks, tabs and other
    separators become spaces (runs of them one space), other control and
    format characters (bidirectional overrides, zero-width characters,
    undecodable bytes) are dropped, and a longer text is cut with ``…``.

    Parameters
    ----------
    text : object
        Message (converted with ``str``).
    limit : int
        Longest result, at least 2.
    """
    out = " ".join(_printable(str(text)).split())
    if len(out) > limit:
        out = out[: max(limit - 1, 1)].rstrip() + "…"
    return out


def _printable(text: str) -> str:
    """``text`` without escape sequences and control characters; whitespace and separators become spaces."""
    kept = []
    for ch in _ESCAPES.sub("", text):
        if ch.isprintable():
            kept.append(ch)
        elif ch.isspace() or unicodedata.category(ch) in ("Zs", "Zl", "Zp"):
            kept.append(" ")
    return "".join(kept)


def _print_report(text: str) -> None:
    """Print a multi-line text on stdout, each line free of terminal escapes (file and column names are user data)."""
    print("\n".join(_printable(line) for line in text.split("\n")))


def _check_length(duration: float | None, fs: float | None, defaults: tuple[float, float] = (12.0, 500.0)) -> None:
    """Refuse ``--duration`` x ``--fs`` beyond ``MAX_GENERATED_SAMPLES`` (before anything is allocated)."""
    d = defaults[0] if duration is None else duration
    rate = defaults[1] if fs is None else fs
    if d * rate > MAX_GENERATED_SAMPLES:
        raise NlidError(f"`--duration` x `--fs` = {d:g} s x {rate:g} Hz would be {d * rate:.3g} samples; at most"
                        f" {MAX_GENERATED_SAMPLES:,} are generated")


#: Commands that read record files (a reader is started ahead for them).
_READS_FILES = frozenset({"identify", "simulate", "split", "friction", "nonlinearity", "mimo"})


def _numbers(spec: str, option: str) -> dict[str, float]:
    """``"a=1,b=2e3"`` -> {"a": 1.0, "b": 2000.0}; raises NlidError naming the option."""
    out: dict[str, float] = {}
    for part in names_of(spec):
        name, sep, value = part.partition("=")
        try:
            if not sep or not name.strip():
                raise ValueError
            out[name.strip()] = float(value)
        except ValueError:
            raise NlidError(f"`{option}` takes NAME=NUMBER pairs separated by commas; cannot read {part!r}") from None
    return out


def _identify(args: argparse.Namespace) -> int:
    from .mdof import check_no_mdof_flags, single_dof_route
    from .model import fit_single

    route = None
    if args.model:
        route = single_dof_route(args)
        if route is None:
            return _identify_mdof(args)
    else:
        check_no_mdof_flags(args)
    files = route[1] if route is not None else list(args.data)
    if not files:
        raise UsageError("identify: give at least one DATA file" if route is None
                         else "identify --model: give DATA files or --records MANIFEST")
    from .save import save_identify, save_identify_mdof, study_target

    from ..report import format_report, result_to_dict
    from ..verdict import judge

    target = study_target(args)  # checked (and the database opened) before the fit
    fit, validations, records, val_records, setup = fit_single(args, files, route[0] if route else None,
                                                               None if args.quiet else _emit_now)
    doc = {**result_to_dict(fit, validations), "parameter_setup": setup}
    text = format_report(fit, validations)
    if route is not None:
        form = route[0]
        model_file = form.source.name
        text = (f"model file `{model_file}`: one DOF on connections to ground, fitted by the single-DOF estimators as"
                f" --terms {form.terms} (model file name = name below: {form.mapping_text()})\n" + text)
        doc["model_file"] = {"name": model_file, "parameters": {file: own for own, file in form.names.items()}}
    _report_and_json(args, text, doc)
    if target is not None:
        saved = (save_identify(target, args, records, val_records, doc) if route is None
                 else save_identify_mdof(target, args, doc))
        if not args.quiet:
            _print_report(saved)
    return judge(fit, validations).exit_status


def _identify_mdof(args: argparse.Namespace) -> int:
    from .mdof import run_identify_mdof

    if not args.data and not args.records:
        raise UsageError("identify --model: give DATA files or --records MANIFEST")
    from .save import save_identify_mdof, study_target

    target = study_target(args)
    status, text, doc = run_identify_mdof(args)
    _report_and_json(args, text, doc)
    if target is not None:
        saved = save_identify_mdof(target, args, doc)
        if not args.quiet:
            _print_report(saved)
    return status


def _report_and_json(args: argparse.Namespace, text: str, doc: dict[str, object]) -> None:
    """Print ``text`` (unless ``--quiet``) and write ``doc`` to ``--json`` (non-finite numbers refused)."""
    if not args.quiet:
        _print_report(text)
    if args.json:
        try:
            Path(args.json).write_text(json.dumps(doc, indent=2, allow_nan=False))
        except OSError as exc:
            raise NlidError(f"cannot write `{args.json}`: {exc.strerror}") from None


def _mimo(args: argparse.Namespace) -> int:
    from .mdof import run_mimo

    text, doc = run_mimo(args)
    _report_and_json(args, text, doc)
    return 0


def _experiments(args: argparse.Namespace) -> int:
    from .mdof import run_experiments

    text = run_experiments(args)
    if not args.quiet:
        _print_report(text)
    return 0


def _other_example(args: argparse.Namespace) -> object:
    """A friction experiment or the Bouc-Wen benchmark's estimation record (the options they take)."""
    chirp = {"--amplitude": args.amplitude, "--f0": args.f0, "--f1": args.f1, "--measured": args.measured}
    given = [k for k, v in chirp.items() if v is not None]
    if given:
        raise NlidError(f"`{args.name}` is not a chirp example: {', '.join(given)} do not apply")
    if args.name == "bouc-wen":
        from ..hysteresis import benchmark_estimation_records

        if args.truth or args.duration is not None or args.fs is not None:
            raise NlidError("`bouc-wen` follows the benchmark's rules: --truth, --duration and --fs do not apply")
        noise = _numbers(args.noise, "--noise") if args.noise else {}
        bad = sorted(set(noise) - {"x"})
        if bad:
            raise NlidError(f"`--noise` of `bouc-wen` takes x only, got {', '.join(bad)}")
        from ..hysteresis.benchmark import NOISE_M

        return benchmark_estimation_records(seed=0 if args.seed is None else args.seed,
                                            noise_m=noise.get("x", NOISE_M))[0]
    from ..friction.experiments import FRICTION_EXAMPLES, friction_example

    overrides: dict[str, object] = {}
    if args.truth:
        for k, v in _numbers(args.truth, "--truth").items():
            overrides["mass" if k == "m0" else k] = v
    if args.noise:
        overrides["noise"] = _numbers(args.noise, "--noise")
    if args.fs is not None:
        overrides["fs_hz"] = args.fs
    if args.duration is not None:
        import inspect

        if "duration_s" not in inspect.signature(FRICTION_EXAMPLES[args.name].generator).parameters:
            raise NlidError(f"`--duration` does not apply to `{args.name}` (its length follows from its design)")
        overrides["duration_s"] = args.duration
    _check_length(args.duration, args.fs, (60.0, 2000.0) if args.duration is not None else (1.0, 2000.0))
    return friction_example(args.name, overrides=overrides, seed=args.seed).record


def _example(args: argparse.Namespace) -> int:
    from ..examples import make_example
    from ..io import write_record

    from ..examples import EXAMPLES as CHIRP_EXAMPLES

    if args.name not in CHIRP_EXAMPLES:
        rec = _other_example(args)
        from ..record import Record

        assert isinstance(rec, Record)
        try:
            path = write_record(rec, args.out)
        except OSError as exc:
            raise NlidError(f"cannot write `{args.out}`: {exc.strerror}") from None
        truth = ", ".join(f"{k}={v:g}" for k, v in rec.meta.get("true_parameters", {}).items())
        _print_report(f"wrote {path} ({rec.n} samples, {rec.fs:.6g} Hz; channels {','.join(rec.channels)};"
                      f" truth {truth})")
        return 0

    overrides: dict[str, object] = {k: v for k, v in {
        "seed": args.seed, "amplitude_n": args.amplitude, "f0_hz": args.f0, "f1_hz": args.f1,
        "duration_s": args.duration, "fs_hz": args.fs,
    }.items() if v is not None}
    if args.truth:
        overrides["terms"] = _numbers(args.truth, "--truth")
    if args.noise:
        overrides["noise"] = _numbers(args.noise, "--noise")
    if args.measured:
        overrides["measured"] = names_of(args.measured)
    from ..examples import EXAMPLES

    spec = EXAMPLES[args.name]
    _check_length(args.duration, args.fs, (spec.duration_s, spec.fs_hz))
    rec = make_example(args.name, overrides=overrides)
    try:
        path = write_record(rec, args.out)
    except OSError as exc:
        raise NlidError(f"cannot write `{args.out}`: {exc.strerror}") from None
    truth = ", ".join(f"{k}={v:g}" for k, v in rec.meta["true_parameters"].items())
    _print_report(f"wrote {path} ({rec.n} samples, {rec.fs:.6g} Hz; channels {','.join(rec.channels)};"
                  f" truth {truth})")
    return 0


def _excitation(args: argparse.Namespace) -> int:
    from .. import excitation as ex

    _check_length(args.duration, args.fs)
    common = {"duration_s": args.duration, "fs_hz": args.fs}
    if args.kind == "linear-chirp":
        sig = ex.linear_chirp(args.f0, args.f1, amplitude_n=args.amplitude, **common)
    elif args.kind == "log-chirp":
        sig = ex.log_chirp(args.f0, args.f1, amplitude_n=args.amplitude, **common)
    elif args.kind == "multisine":
        sig = ex.schroeder_multisine(args.f0, args.f1, amplitude_n=args.amplitude, **common)
    else:
        if not 2 <= args.steps <= MAX_STEPS:
            raise NlidError(f"`--steps` must be between 2 and {MAX_STEPS}, got {args.steps}")
        freqs = [args.f0 + (args.f1 - args.f0) * k / (args.steps - 1) for k in range(args.steps)]
        sig = ex.stepped_sine(freqs, amplitude_n=args.amplitude, dwell_s=args.duration / args.steps, fs_hz=args.fs)
    try:
        sig.to_frame().to_csv(args.out, index=False, float_format="%.10g")
    except OSError as exc:
        raise NlidError(f"cannot write `{args.out}`: {exc.strerror}") from None
    _print_report(f"wrote {args.out}: {sig.kind}, {sig.n_samples} samples at {sig.fs_hz:g} Hz, peak {sig.peak:.4g}"
                  f" N, rms {sig.rms:.4g} N, crest factor {sig.crest_factor:.2f}")
    return 0


def _design(args: argparse.Namespace) -> int:
    from ..analysis import chirp_design, predict_uncertainty, suggest_design

    _check_length(args.duration, args.fs)
    truth = _numbers(args.truth, "--truth")
    terms = list(truth)
    t, f = chirp_design(args.amplitude, args.f0, args.f1, args.duration, args.fs)
    pred = predict_uncertainty(terms, truth, t, f, noise_sd=args.noise,
                               label=f"chirp {args.amplitude:g} N {args.f0:g}-{args.f1:g} Hz")
    rows = [pred]
    if args.suggest:
        bands = [(args.f0, args.f1 / 2), (args.f0, args.f1), (args.f0, 1.5 * args.f1)]
        bands = [b for b in bands if b[1] > b[0] and b[1] < args.fs / 2]
        sug = suggest_design(terms, truth, noise_sd=args.noise, duration_s=args.duration, fs_hz=args.fs,
                             amplitudes=(args.amplitude / 3, 2 * args.amplitude / 3, args.amplitude), bands=bands)
        rows = list(sug.table)
    print("predicted relative standard errors [%] (Cramér-Rao bound at the prior model)")
    print(f"  {'design':34s} " + " ".join(f"{n:>8s}" for n in terms) + "   worst")
    for r in rows:
        if r.success:
            print(f"  {r.label:34s} " + " ".join(f"{100 * r.rse(n):8.3g}" for n in terms)
                  + f"   {r.worst_parameter}")
        else:
            print(f"  {r.label:34s} diverges: {r.message}")
    if args.suggest:
        if sug.success and sug.best is not None:
            print(f"best: {sug.best.label} (worst parameter {sug.best.worst_parameter},"
                  f" {100 * sug.best.max_rel_stderr:.3g} %)")
        else:
            print(f"no usable design: {sug.message}")
    if args.json:
        doc = [{"design": r.label, "success": r.success, "message": r.message,
                "rel_stderr": {n: float(v) for n, v in zip(r.names, r.rel_stderr)} if r.success else None}
               for r in rows]
        try:
            Path(args.json).write_text(json.dumps(doc, indent=2, allow_nan=False))
        except (OSError, ValueError) as exc:
            raise NlidError(f"cannot write `{args.json}`: {exc}") from None
    return 0 if pred.success else 1


def _terms(args: argparse.Namespace) -> int:
    from ..modeltext import format_terms, terms_document

    if args.json:
        print(json.dumps(terms_document(), indent=2, allow_nan=False, ensure_ascii=False))
    else:
        _print_report(format_terms())
    return 0


def _simulate(args: argparse.Namespace) -> int:
    from ..modeltext import build_model, parse_values
    from .simulate import SimulatedRun, run_simulation, simulation_parameters, write_run
    from ..guard import load_record_guarded

    if args.model:
        from .mdof import run_simulate_mdof

        if args.terms or args.custom or args.columns:
            raise UsageError("simulate --model: the model file gives the terms and the columns; drop --terms,"
                              " --custom and --columns")
        message, columns = run_simulate_mdof(args)
        write_run(SimulatedRun(columns=columns, success=True, message=message, method="rk4"), args.out)
        if not args.quiet:
            _print_report(f"wrote {args.out}: {columns['t [s]'].size} rows, columns {', '.join(columns)}; {message}")
        return 0
    if not args.terms:
        raise UsageError("simulate: give --terms (or --model MODEL_FILE)")
    if args.held:
        raise UsageError("simulate: --held needs --model MODEL_FILE")
    if bool(args.closed_loop) != bool(args.reference) or (args.pulses and not args.closed_loop):
        raise UsageError("simulate: --closed-loop needs --reference COLUMN (the position reference), and --reference"
                         " and --pulses need --closed-loop")
    if args.closed_loop:
        return _simulate_closed_loop(args)
    model = build_model(args.terms, args.custom)
    model.require_simulable()
    values, initial = parse_values(args.params, "--params"), parse_values(args.initial_state, "--initial-state")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nothing but the error line goes to stderr
        rec = load_record_guarded(args.input, columns=args.columns, units=args.units, resample=args.resample,
                                  fs=args.fs, rows=args.rows, input_only=True)
        params = simulation_parameters(model, values, force_unit=rec.unit("f"), x_unit=rec.unit("x"))
        run = run_simulation(model, rec, params, initial, input_hold=args.input_hold, method=args.method)
    return _written(args, run, rec.n)


def _written(args: argparse.Namespace, run: SimulatedRun, rows: int, note: str = "") -> int:
    """Write a simulation's columns (nothing when it failed: exit 1 and one line) and say what was written."""
    from .simulate import write_run

    if not run.success:
        _error(f"error: simulation failed: {run.message}")
        return 1
    write_run(run, args.out)
    if not args.quiet:
        _print_report(f"wrote {args.out}: {rows} rows, columns {', '.join(run.columns)}; {run.method}{note}")
    return 0


def _simulate_closed_loop(args: argparse.Namespace) -> int:
    from ..guard import load_record_guarded
    from ..modeltext import build_model, parse_values
    from .simulate import closed_loop_run, simulation_parameters

    if args.initial_state:
        raise UsageError("simulate --closed-loop: the loop starts at the record's first position, at rest; drop"
                         " --initial-state")
    model = build_model(args.terms, args.custom)
    model.require_simulable()
    values = parse_values(args.params, "--params")
    columns = dict(args.columns or {})
    load = {"units": args.units, "resample": args.resample, "fs": args.fs, "rows": args.rows, "input_only": True}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nothing but the error line goes to stderr
        rec = load_record_guarded(args.input, columns=columns or None, **load)
        ref = load_record_guarded(args.input, columns={**columns, "x": args.reference}, **load)
        pulses = None
        if args.pulses:
            si_force = {**load, "units": {k: v for k, v in (args.units or {}).items() if k != "f"} or None}
            pulses = load_record_guarded(args.input, columns={**columns, "f": args.pulses}, **si_force)
        params = simulation_parameters(model, values, force_unit=rec.unit("f"), x_unit=rec.unit("x"))
        run, line = closed_loop_run(model, rec, ref, pulses, params, args.closed_loop)
    return _written(args, run, rec.n, "\n" + line)


def _nonlinearity(args: argparse.Namespace) -> int:
    from .evidence import run_evidence

    status, report = run_evidence(args)
    _print_report(report)
    return status


def _friction(args: argparse.Namespace) -> int:
    from .friction import format_friction_report, run_friction

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nothing but the error line goes to stderr
        status, result = run_friction(args)
    if not args.quiet:
        _print_report(format_friction_report(result))
    if status == 1:
        _error(f"error: {result.message}")
    elif status:
        _error(f"partial result: {result.message}")
    return status


def _pendulum(args: argparse.Namespace) -> int:
    from .pendulum import run_pendulum

    status, report = run_pendulum(args)
    if not args.quiet:
        _print_report(report)
    return status


def _emit_now(line: str) -> None:
    """A progress line, shown as it comes (also through a pipe)."""
    _print_report(line)
    sys.stdout.flush()


def _batch(args: argparse.Namespace) -> int:
    from .batch import run_batch

    return run_batch(args, emit=_emit_now)


def _studies(args: argparse.Namespace) -> int:
    from .studies import run_studies

    _print_report(run_studies(args))
    return 0


def _health(args: argparse.Namespace) -> int:
    from .studies import run_health

    status, line = run_health(args)
    if status:
        _error(line)
    else:
        print(one_line(line))
    return status


def _split_command(args: argparse.Namespace) -> int:
    from .split import run_split

    lines = run_split(args)
    if not args.quiet:
        _print_report("\n".join(lines))
    return 0


def command() -> int:
    """The ``nlid`` command: what ``python -m nlid_core`` runs (allocator tuned for a one-shot process)."""
    from ..allocator import tune_for_command

    tune_for_command()
    return main()


def _merge_scale(args: argparse.Namespace) -> None:
    """``--scale`` is a factor to SI per channel: given to the loaders with ``--units`` (one channel, one of them)."""
    scale = getattr(args, "scale", None)
    if not scale:
        return
    units = dict(getattr(args, "units", None) or {})
    both = sorted(set(scale) & set(units))
    if both:
        raise UsageError(f"--scale and --units both give `{both[0]}`: --scale already sets its unit")
    args.units = {**units, **scale}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status.

    Parameters
    ----------
    argv : sequence of str or None
        Arguments after the program name; ``sys.argv[1:]`` when None.
    """
    try:
        with warnings.catch_warnings(record=True) as caught:
            # nothing but the one error line goes to stderr: warnings of the commands that do not report them
            # (example, excitation, design) end up here and are dropped
            warnings.simplefilter("always")
            if command_of(argv) in _READS_FILES:
                from ..guard import prestart_reader

                prestart_reader(keep=False)  # the file reader's imports overlap with this process's
            args = build_parser(argv).parse_args(argv)
            _merge_scale(args)
            handler = {"identify": _identify, "example": _example, "terms": _terms, "excitation": _excitation,
                       "design": _design, "simulate": _simulate, "friction": _friction, "split": _split_command, "experiments": _experiments, "mimo": _mimo,
                       "nonlinearity": _nonlinearity, "pendulum": _pendulum, "batch": _batch, "studies": _studies,
                       "health": _health}[args.command]
            status = handler(args)
        del caught
        return status
    except UsageError as exc:
        _error(str(exc))
        return 2
    except NlidError as exc:
        _error(f"error: {exc}")
        return 2
    except KeyboardInterrupt as exc:
        _error(f"interrupted{': ' + str(exc) if str(exc) else ''}")
        return 130
    except BrokenPipeError:
        # the reader went away: nothing more can be written (and the interpreter's final flush must not fail)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except SystemError as exc:  # Ctrl-C inside compiled code surfaces as a SystemError raised from it
        if isinstance(exc.__cause__ or exc.__context__, KeyboardInterrupt):
            _error("interrupted")
            return 130
        if os.environ.get("NLID_DEBUG"):
            raise
        _error(f"internal error: {type(exc).__name__}: {exc}")
        return 3
    except Exception as exc:  # noqa: BLE001 - the CLI never shows a traceback
        if os.environ.get("NLID_DEBUG"):
            raise
        _error(f"internal error: {type(exc).__name__}: {exc}")
        return 3


def _error(message: str) -> None:
    """Print ``message`` on stderr as one sanitised line (see :func:`one_line`)."""
    try:
        print(one_line(message), file=sys.stderr)
    except (OSError, ValueError):  # pragma: no cover - stderr closed
        pass
