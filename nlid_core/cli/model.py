"""The model options of the command line (``--custom``, ``--start``, ``--fix``, ``--bounds``, ``--free``), whose text
is read by :mod:`nlid_core.modeltext`, and the single-DOF identification of ``identify`` they set up."""

from __future__ import annotations

import argparse
import dataclasses
import warnings
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["add_model_options", "fit_single"]


def add_model_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--custom``, ``--start``, ``--fix``, ``--bounds`` and ``--free`` to ``identify``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The ``identify`` parser.
    """
    parser.add_argument("--custom", action="append", default=[], metavar="NAME=EXPR",
                        help="a term typed as its force in x, v, a and parameter names, e.g. asym=ka*x*abs(x)"
                             " (repeatable; added to --terms when not listed there; parsed, never evaluated)")
    parser.add_argument("--start", metavar="NAME=VALUE,...",
                        help="start values, e.g. k1=1500,k3=-2e5 (inside the bounds; two-stage replaces those of"
                             " the parameters the equation error solves for)")
    parser.add_argument("--fix", metavar="NAME=VALUE,...",
                        help="hold these parameters at these values (inside their default bounds; nothing else"
                             " changes)")
    parser.add_argument("--bounds", metavar="NAME=LO:HI,...",
                        help="bounds, e.g. k1=0:,m0=0.5:2 (an empty side is infinite; the start value is clipped"
                             " into them)")
    parser.add_argument("--free", metavar="NAME,...",
                        help="estimate parameters that are held fixed by default (settings such as v_eps and gap,"
                             " see the `terms` command), e.g. --free v_eps --bounds v_eps=1e-4:1e-1")


def _validate_minima(fit: Any, val_records: Sequence[Any], n_init: int) -> Any:
    """``fit`` with each distinct minimum from other starts validated on the held-out records (the report's
    table of minima then shows how each predicts)."""
    from ..validation import validate

    if not val_records or not any(m.distinct for m in fit.minima):
        return fit
    minima = []
    for m in fit.minima:
        if m.distinct:
            runs = [validate(m.fit, r, n_init=n_init) for r in val_records]
            m = dataclasses.replace(m, validation_fit={f"{v.record} {c.channel}": c.fit_percent
                                                       for v in runs if v.success for c in v.metrics})
        minima.append(m)
    return dataclasses.replace(fit, minima=tuple(minima))


def _fit_in_loop(args: argparse.Namespace, files: Sequence[str], columns: Any, records: Sequence[Any], model: Any,
                 params: Any, options: Any, progress: Any) -> Any:
    """``identify --closed-loop``: the equation-error estimate (unless the method is output error from given
    starts), then output error inside the loop driven by the ``--reference`` column."""
    from ..closed_loop import identify_in_loop, parse_loop
    from ..errors import ModelSpecError
    from ..guard import load_record_guarded

    if len(records) != 1 or args.validate:
        raise ModelSpecError("identify --closed-loop fits one record; validate in the loop with simulate"
                             " --closed-loop")
    if not args.reference:
        raise ModelSpecError("identify --closed-loop needs --reference COLUMN (the position reference)")
    loop = parse_loop(args.closed_loop)
    ref = load_record_guarded(files[0], columns={**dict(columns or {}), "x": args.reference}, units=args.units,
                              resample=args.resample, fs=args.fs, rows=args.rows, input_only=True)
    return identify_in_loop(records[0], model, params, ref.x, loop, options, progress=progress)


def fit_single(args: argparse.Namespace, files: Sequence[str], form: Any, emit: Callable[[str], None] | None = None
               ) -> tuple[Any, list[Any], Any, list[Any], dict[str, Any]]:
    """The single-DOF identification of ``files``: (fit, validations, records, validation records, parameter setup).

    ``form`` is a one-DOF model file's single-DOF form (its model, start values and column mapping), or None for
    the model of ``--terms`` and the options. ``emit`` prints the progress of a long fit (a line a second).
    """
    from ..modeltext import (build_model, build_parameters, model_settings, parameter_setup, parse_bounds,
                             parse_names, parse_values)
    from ..estimate import FitOptions, WarningTally, identify
    from ..guard import load_record_guarded, load_records_guarded
    from ..validation import validate
    from .common import names_of, progress_printer, stop_on_interrupt

    # Files are parsed in an isolated, limited worker process (nlid_core.guard): a reader that crashes or
    # exhausts its limits ends only the worker and gives a one-line DataValidationError.
    # Anything warned on the way (an overflow outside identify) goes into the report's warnings, never onto
    # stderr; identify and validate count their own floating-point problems.
    start, fix = parse_values(args.start, "--start"), parse_values(args.fix, "--fix")
    bounds, free = parse_bounds(args.bounds), parse_names(args.free, "--free")
    if form is None:
        settings = model_settings(args.v_eps, args.gap, {**start, **fix})
        model, columns = build_model(args.terms, args.custom, settings), args.columns
    else:
        from ..mdof.data import column_spec

        model, columns = form.model, column_spec(form.source)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        records = load_records_guarded(files, columns=columns, units=args.units, resample=args.resample, fs=args.fs,
                                       rows=args.rows)
        if args.lowpass is not None:
            from ..signals import filter_record

            records = tuple(filter_record(r, args.lowpass) for r in records)
        units = {"force_unit": records[0].unit("f"), "x_unit": records[0].unit("x")}
        params = (build_parameters(model, **units, start=start, fix=fix, bounds=bounds, free=free) if form is None
                  else form.parameters(**units))
        options = FitOptions(
            method=args.method, outputs=names_of(args.outputs), initial_state=args.initial_state,
            input_hold=args.input_hold, sample_step=args.sample_step, force_threshold=args.force_threshold,
            differentiator=args.differentiator,
        )
        val_records = [
            load_record_guarded(v, columns=columns, units=args.units, resample=args.resample, fs=args.fs,
                                rows=args.validate_rows)
            for v in args.validate
        ]
        # the same file's other rows are held out: named by their rows, so the report does not take them for
        # the fitted record
        fitted_names = {r.name for r in records}
        val_records = [dataclasses.replace(r, name=f"{r.name}[{args.validate_rows}]")
                       if r.name in fitted_names and args.validate_rows and args.validate_rows != args.rows else r
                       for r in val_records]
        with stop_on_interrupt() as stop:
            if args.closed_loop:
                fit = _fit_in_loop(args, files, columns, records, model, params, options,
                                   progress_printer(emit, stop=stop))
            else:
                fit = identify(records, model, params=params, options=options,
                               progress=progress_printer(emit, stop=stop), explore=True)
        validations = []
        if fit.success and model.can_simulate:
            validations = [validate(fit, r, n_init=args.n_init) for r in val_records]
            fit = _validate_minima(fit, val_records, args.n_init)
    notes = []
    if val_records and not validations:
        notes.append("validation not run: " + ("the identification failed" if not fit.success
                                               else "the model has no m0, so it cannot be simulated"))
    tally = WarningTally()
    for entry in caught:
        tally.record(entry)
    if notes or tally:
        fit = dataclasses.replace(fit, warnings=(*fit.warnings, *notes, *tally.lines()))
    return fit, validations, records, val_records, parameter_setup(params)
