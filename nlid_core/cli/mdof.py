"""The CLI's multi-DOF side: ``identify`` and ``simulate`` with ``--model MODEL_FILE``, and ``experiments``.

``identify DATA... --model MODEL_FILE`` loads each file with the model file's column mapping (``[inputs]`` and
``[outputs]``), marks static load-case records (``--static NAME``) and held DOFs (``--held NAME=DOF,DOF``) — or reads
all of that from a records manifest (``--records MANIFEST.toml``, written by ``experiments``) — and runs the stage
plan (``--stages PLAN.toml``; ``default``, the seed's four steps, stages without matching records skipped; ``none``,
every parameter at once). The JSON has the single-DOF result's keys where they mean the same thing (``parameters``
with value, stderr, ci95, unit, vary; ``metrics.channels``; ``diagnostics``) plus ``stages`` with each stage's report.

``simulate INPUT --model MODEL_FILE`` simulates the model from the file's inputs (from rest at the static equilibrium
under the first inputs) and writes t and every DOF's position and velocity. ``experiments --model MODEL_FILE | --preset
NAME --out DIR`` writes the standard simulated experiments, the model file and the manifest.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DataValidationError, ModelSpecError, NlidError
from ..jsonsafe import finite_or_none
from .common import COMMAND_HELP

__all__ = ["add_experiments_parser", "add_mdof_options", "add_mimo_parser", "run_experiments", "run_identify_mdof", "run_mimo",
           "run_simulate_mdof", "single_dof_route"]

#: ``identify`` options that describe a model, which a model file describes itself ([parameters], typed terms).
_MODEL_OPTIONS = (("--custom", "custom"), ("--start", "start"), ("--fix", "fix"), ("--bounds", "bounds"),
                  ("--free", "free"), ("--v-eps", "v_eps"), ("--gap", "gap"), ("--columns", "columns"))


def add_mdof_options(parser: argparse.ArgumentParser, *, identify: bool) -> None:
    """Add ``--model`` (and, for identify, the records' roles and the stage plan) to a command."""
    parser.add_argument("--model", metavar="MODEL_FILE",
                        help="a multi-DOF model file (TOML, see the README): its [inputs]/[outputs] map the columns;"
                             " one DOF joined to ground is fitted as its --terms model (single-DOF estimators)")
    parser.add_argument("--held", action="append", default=[], metavar="RECORD=DOF,DOF",
                        help="with --model: DOFs the rig held in a record (repeatable)")
    if identify:
        parser.add_argument("--static", action="append", default=[], metavar="RECORD",
                            help="with --model: a record of static load cases, one per row (repeatable)")
        parser.add_argument("--records", metavar="MANIFEST",
                            help="with --model: a records manifest (TOML [[record]] tables with file, static, held)"
                                 " instead of DATA files")
        parser.add_argument("--stages", metavar="PLAN", default="default",
                            help="with --model: stage plan file (TOML [[stage]] tables), `default` (static → small →"
                                 " sweeps → joint, stages without records skipped) or `none` (all at once)")


def add_experiments_parser(sub: argparse._SubParsersAction[Any]) -> None:
    """Add the ``experiments`` command (simulated multi-DOF experiments with a known answer)."""
    ex = sub.add_parser("experiments", help=COMMAND_HELP["experiments"])
    src = ex.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", metavar="MODEL_FILE", help="the true model (its values are the truth)")
    src.add_argument("--preset", choices=("chain", "platform"), help="a preset model with its default values")
    ex.add_argument("--masses", type=int, default=3, help="number of masses of the chain preset")
    ex.add_argument("--level", type=float, default=1.0, help="load level (1: about 2 mm static deflection)")
    ex.add_argument("--noise", type=float, default=0.005, help="output noise as a fraction of each output's range")
    ex.add_argument("--fs", type=float, default=500.0, help="sampling rate, Hz")
    ex.add_argument("--duration", type=float, default=10.0, help="duration of each dynamic record, s")
    ex.add_argument("--seed", type=int, default=0)
    ex.add_argument("--out", required=True, help="output folder")
    ex.add_argument("--quiet", action="store_true")


def add_mimo_parser(sub: argparse._SubParsersAction[Any], identify: argparse.ArgumentParser) -> None:
    """Add the ``mimo`` command: evidence across the channels of a multi-DOF model's records."""
    from .common import share_options

    mi = sub.add_parser("mimo", help=COMMAND_HELP["mimo"])
    mi.add_argument("data", nargs="*", help="record files, read with the model file's column mapping")
    mi.add_argument("--json", metavar="OUT", help="write the findings, the coupling table and the FRF matrix as JSON")
    share_options(mi, identify, ("units", "scale", "fs", "resample", "rows"))
    add_mdof_options(mi, identify=True)
    mi.add_argument("--quiet", action="store_true", help="print nothing but errors")


def run_mimo(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """``mimo``: (text, JSON document)."""
    from ..mdof.evidence import record_evidence

    if not args.model:
        raise ModelSpecError("mimo needs --model MODEL_FILE (its [inputs] and [outputs] map the channels)")
    if not args.data and not args.records:
        raise ModelSpecError("mimo: give DATA files or --records MANIFEST")
    model = _model(args.model)
    ev = record_evidence(model, load_mdof_records(model, args))
    doc: dict[str, Any] = {"summary": list(ev.summary)}
    lines = list(ev.summary)
    if ev.coupling is not None:
        frame = ev.coupling.to_frame()
        doc["coupling"] = json.loads(frame.to_json(orient="records"))
        lines += ["", "coupling (output, input, contribution relative to the main input):"]
        lines += [f"  {r.output:6s} {r.input:6s} {r.relative_percent:8.3g} %" for r in frame.itertuples()]
    if ev.frf is not None:
        f = ev.frf
        doc["frf"] = {"freq_hz": f.freq_hz.tolist(), "inputs": list(f.input_names), "outputs": list(f.output_names),
                      "units": [list(u) for u in f.units],
                      "magnitude": [[[finite_or_none(v) for v in np.abs(f.H[:, i, j])] for j in range(len(f.input_names))]
                                    for i in range(len(f.output_names))],
                      "coherence_multiple": [[finite_or_none(v) for v in f.coherence_multiple[:, i]]
                                             for i in range(len(f.output_names))],
                      "valid": [[f.valid[:, i, j].tolist() for j in range(len(f.input_names))]
                                for i in range(len(f.output_names))]}
    doc["level_drift"] = [json.loads(d.to_frame().to_json(orient="records")) for d in ev.drifts]
    return "\n".join(lines), doc


def _model(path: str) -> Any:
    from ..mdof.modelfile import load_model

    return load_model(path)


def _held(specs: Sequence[str]) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for s in specs:
        name, sep, dofs = s.partition("=")
        if not sep or not name.strip():
            raise ModelSpecError(f"--held `{s}` must be RECORD=DOF,DOF")
        out[name.strip()] = tuple(d.strip() for d in dofs.split(",") if d.strip())
    return out


def _manifest(path: str) -> list[tuple[Path, bool, tuple[str, ...]]]:
    p = Path(path)
    from ..mdof.stages import toml_tables

    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataValidationError(f"cannot read the records manifest {p.name}: {exc}") from None
    rows = toml_tables(text, "record", f"records manifest {p.name}", DataValidationError)
    out = []
    for k, r in enumerate(rows):
        if not isinstance(r, dict) or not isinstance(r.get("file"), str):
            raise DataValidationError(f"records manifest {p.name}, [[record]] #{k + 1}: needs `file`")
        held = r.get("held", [])
        if not isinstance(held, list) or not all(isinstance(h, str) for h in held):
            raise DataValidationError(f"records manifest {p.name}, [[record]] #{k + 1}: `held` must be a list of DOFs")
        out.append((p.parent / r["file"], bool(r.get("static", False)), tuple(held)))
    return out


def single_dof_route(args: argparse.Namespace) -> tuple[Any, list[str]] | None:
    """``identify --model`` of a one-DOF model file on dynamic records: its single-DOF form and the files to fit.

    Such a run is the single-DOF identification of ``--terms`` (the same estimators, report and JSON); None
    when the run needs the staged multi-DOF fit: several DOFs, a rigid body, gravity or shared parameters
    (:func:`nlid_core.mdof.single.single_dof_form`), static load cases, held DOFs or a stage plan file.

    Raises
    ------
    ModelSpecError
        Options that describe a model given with ``--model`` (its file does).
    """
    from ..mdof.single import single_dof_form

    given = [flag for flag, key in _MODEL_OPTIONS if getattr(args, key, None)]
    if given:
        raise ModelSpecError(f"with --model the model file sets the terms, start values, bounds and column mapping;"
                             f" drop {', '.join(given)}")
    if args.static or args.held or args.stages not in ("default", "none"):
        return None
    form = single_dof_form(_model(args.model))
    if isinstance(form, str):
        return None
    if not args.records:
        return form, list(args.data)
    entries = _manifest(args.records)
    if any(static or held for _, static, held in entries):
        return None
    return form, [str(p) for p, _, _ in entries]


def load_mdof_records(model: Any, args: argparse.Namespace) -> list[Any]:
    """The command's records as the model sees them (files loaded in the guarded worker)."""
    from ..guard import load_record_guarded
    from ..mdof.data import column_spec, from_record

    if getattr(args, "columns", None):
        raise ModelSpecError("with --model the model file's [inputs] and [outputs] map the columns; drop --columns")
    spec = column_spec(model)
    if getattr(args, "records", None):
        entries = _manifest(args.records)
    else:
        held = _held(args.held)
        statics = set(getattr(args, "static", []))
        entries = [(Path(d), Path(d).stem in statics, held.get(Path(d).stem, ())) for d in args.data]
    out = []
    for path, static, held_dofs in entries:
        rec = load_record_guarded(path, columns=spec, units=args.units, resample=args.resample, fs=args.fs,
                                  rows=args.rows)
        out.append(from_record(model, rec, held=held_dofs, static=static))
    names = [r.name for r in out]
    unknown = (set(_held(args.held)) | set(getattr(args, "static", []))) - set(names)
    if unknown and not getattr(args, "records", None):
        raise ModelSpecError(f"--held/--static name records that were not loaded: {sorted(unknown)} (records: {names})")
    return out


def _plan(model: Any, spec: str) -> Any:
    from ..mdof.stages import Stage, StagePlan, default_plan, parse_plan

    if spec == "default":
        return default_plan(model)
    if spec == "none":
        return StagePlan(stages=(Stage(name="one-shot", records=("*",), free=("*",),
                                       note="every parameter on every record at once"),))
    p = Path(spec)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelSpecError(f"cannot read the stage plan {p.name}: {exc}") from None
    return parse_plan(text, source=f"stage plan {p.name}")


def run_identify_mdof(args: argparse.Namespace) -> tuple[int, str, dict[str, Any]]:
    """``identify --model``: (exit status, text report, JSON document)."""
    from ..guard import load_record_guarded
    from ..mdof.data import column_spec, from_record
    from ..mdof.report import format_staged, staged_to_dict
    from ..mdof.stages import run_stages
    from ..mdof.validation import validate_record

    model = _model(args.model)
    records = load_mdof_records(model, args)
    plan = _plan(model, args.stages)
    staged = run_stages(model, records, plan, model.parameters())
    validations = []
    if args.validate:
        held = _held(args.held)
        for v in args.validate:
            rec = load_record_guarded(v, columns=column_spec(model), units=args.units, resample=args.resample,
                                      fs=args.fs, rows=args.validate_rows)
            validations.append(validate_record(model, from_record(model, rec, held=held.get(rec.name, ())),
                                               staged.parameters))
    # a final fit that does not reproduce its records is not a success, whatever the solver said
    reproduced = staged.final is None or not staged.final.misfit
    return ((0 if staged.success and reproduced else 1), format_staged(model, staged, validations),
            staged_to_dict(model, staged, validations))


def run_simulate_mdof(args: argparse.Namespace) -> tuple[str, dict[str, np.ndarray]]:
    """``simulate --model``: (message, columns of the output file)."""
    from ..modeltext import parse_values
    from ..errors import SimulationError
    from ..guard import load_record_guarded
    from ..mdof.experiments import run

    model = _model(args.model)
    values = parse_values(args.params, "--params") if args.params else {}
    theta = model.parameters(values).values
    spec = ",".join(f"f{k + 1}={col}" for k, (_, col) in enumerate(model.inputs))
    if not spec:
        raise ModelSpecError("the model file maps no [inputs] to file columns")
    rec = load_record_guarded(args.input, columns=spec, units=args.units, resample=args.resample, fs=args.fs,
                              rows=args.rows, input_only=True)
    u = np.column_stack([np.asarray(rec.f if k == 0 else rec.extra_channels[f"f{k + 1}"]) for k in range(len(model.inputs))])
    held = _held(args.held).get(rec.name, ())
    try:
        res = run(model, np.asarray(rec.t), u, theta, held=held)
    except SimulationError as exc:
        raise NlidError(str(exc)) from None
    cols: dict[str, np.ndarray] = {"t [s]": np.asarray(rec.t)}
    for i, d in enumerate(model.dof_names):
        cols[f"{d} [{model.dof_unit(d)}]"] = res.q[:, i]
    for i, d in enumerate(model.dof_names):
        cols[f"{d}_dot [{model.dof_unit(d)}/s]"] = res.qd[:, i]
    return res.message, cols


def run_experiments(args: argparse.Namespace) -> str:
    """``experiments``: write the records, the model file and the manifest; the summary text."""
    from ..mdof.data import to_frame
    from ..mdof.experiments import experiment_set
    from ..mdof.modelfile import dump_model
    from ..mdof.presets import chain, platform

    if args.model:
        model = _model(args.model)
    elif args.preset == "chain":
        model = chain(args.masses)
    else:
        model = platform()
    for name, v in (("--level", args.level), ("--noise", args.noise), ("--fs", args.fs), ("--duration", args.duration)):
        if not (math.isfinite(v) and v > 0) and not (name == "--noise" and v == 0):
            raise ModelSpecError(f"`{name}` must be a positive number, got {v}")
    records = experiment_set(model, level=args.level, noise=args.noise, fs=args.fs, duration=args.duration,
                             rng=args.seed)
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / "model.toml").write_text(dump_model(model), encoding="utf-8")
        manifest = []
        for r in records:
            to_frame(model, r).to_csv(out / f"{r.name}.csv", index=False)
            entry = [f'[[record]]', f'file = "{r.name}.csv"']
            if r.static:
                entry.append("static = true")
            if r.held:
                entry.append("held = [" + ", ".join(f'"{h}"' for h in r.held) + "]")
            manifest.append("\n".join(entry))
        (out / "records.toml").write_text("\n\n".join(manifest) + "\n", encoding="utf-8")
        noise = {r.name: r.meta.get("noise", {}) for r in records}
        (out / "truth.json").write_text(json.dumps({"parameters": dict(zip(model.param_names,
                                                                           model.parameters().values.tolist(), strict=True)),
                                                    "noise": noise}, indent=2), encoding="utf-8")
    except OSError as exc:
        raise NlidError(f"cannot write into `{args.out}`: {exc.strerror}") from None
    return (f"wrote {len(records)} records ({', '.join(r.name for r in records)}), model.toml (the truth), records.toml"
            f" and truth.json into {out}")


def check_no_mdof_flags(args: argparse.Namespace) -> None:
    """Refuse the multi-DOF flags without ``--model``."""
    used = [flag for flag, value in (("--held", getattr(args, "held", [])), ("--static", getattr(args, "static", [])),
                                     ("--records", getattr(args, "records", None))) if value]
    if used:
        raise ModelSpecError(f"{', '.join(used)} need --model MODEL_FILE")

