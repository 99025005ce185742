"""``identify --study``: the run of an identification saved in a study with its records (each stored once,
renamed where a name is taken) and the options that reproduce it."""

from __future__ import annotations

import argparse
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DataValidationError, NlidError
from .store_access import _hidden, _owner, _with_store

if TYPE_CHECKING:
    from ..record import Record
    from ..store.db import Store

__all__ = ["StudyTarget", "study_target", "identify_config", "save_run", "save_identify", "save_identify_mdof"]


#: Options of ``identify`` that are not saved in a run's config (paths, output, where to save).
_NOT_SAVED = frozenset({"command", "data", "validate", "json", "quiet", "study", "database", "owner", "model",
                        "records", "stages", "handler"})


#: Options of ``identify --model`` saved in its config (the others are the single-DOF path's).
_MDOF_OPTIONS = frozenset({"units", "scale", "resample", "fs", "rows", "validate_rows", "held", "static", "n_init"})


_MODEL_TEXT_LIMIT = 256 * 1024


_BAD_NAME_CHARS = re.compile(r"[^\w .+(),=#-]+")


@dataclass(frozen=True, kw_only=True)
class StudyTarget:
    """Where ``identify --study`` saves: a checked study name, owner and database URL.

    Attributes
    ----------
    name, owner : str
    url : str or None
        ``--database`` (None: the default URL).
    shown_url : str
        The URL with any password hidden.
    """

    name: str
    owner: str
    url: str | None
    shown_url: str


def study_target(args: argparse.Namespace) -> StudyTarget | None:
    """The target of ``--study`` (None without it), checked before any work: name, owner, and the database opens.

    Raises
    ------
    NlidError
        A bad ``--study`` name or ``--owner``, a database that cannot be
        opened; ``--database``/``--owner`` without ``--study``.
    """
    if args.study is None:
        given = [flag for flag, v in (("--database", args.database), ("--owner", args.owner)) if v is not None]
        if given:
            raise NlidError(f"{' and '.join(given)}: only with `--study NAME`")
        return None
    from ..store.studies import validate_name

    validate_name(args.study, "--study")
    owner = _owner(args)
    from ..store.db import default_url

    _with_store(args.database, lambda s: None)
    shown = _hidden(args.database if args.database is not None else default_url())
    return StudyTarget(name=args.study, owner=owner, url=args.database, shown_url=shown)


def _safe_name(text: str, fallback: str) -> str:
    """``text`` made a valid study/record/run name (bad characters to ``_``, at most 90 characters)."""
    name = _BAD_NAME_CHARS.sub("_", text).strip()[:90].strip()
    if not name or not name[0].isalnum():
        name = (fallback + " " + name).strip()[:90].strip()
    return name


def _plain(value: Any) -> Any:
    """Option values as JSON: tuples and mappings to lists and dicts, infinities to None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return str(value)


def identify_config(args: argparse.Namespace, *, files: Sequence[str], records: Sequence[str],
                    validation_records: Sequence[str] = (), extra: Mapping[str, Any] | None = None,
                    only: frozenset[str] | None = None) -> dict[str, Any]:
    """What an ``identify`` run asked for, as saved in its run's config (see the module docstring).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.
    files : sequence of str
        The data and validation files (base names are kept, directories dropped).
    records, validation_records : sequence of str
        Names of the fitted and the validation records inside the study.
    extra : mapping or None
        Added as they are (e.g. ``parameter_setup``).
    only : frozenset of str or None
        Save only these options (default: every option but paths and output).
    """
    from .._version import __version__

    options = {k: _plain(v) for k, v in sorted(vars(args).items())
               if k not in _NOT_SAVED and (only is None or k in only)}
    doc: dict[str, Any] = {
        "command": "identify",
        "nlid_version": __version__,
        "options": options,
        "files": [Path(f).name for f in files],
        "records": list(records),
        "validation_records": list(validation_records),
    }
    doc.update(extra or {})
    return doc


def _place_records(existing: Mapping[str, str], recs: Sequence[Record]) -> tuple[dict[str, Record], list[str]]:
    """Names inside the study for ``recs``: (records to add by name, the name of every record in order).

    A record whose name the study uses for the same content keeps that name
    and is not added again; for other content the name gets `` (2)``, `` (3)``...
    """
    from ..store.studies import encode_record

    taken = dict(existing)
    new: dict[str, Record] = {}
    names: list[str] = []
    for rec in recs:
        sha = encode_record(rec).sha256
        base = _safe_name(rec.name, "record")
        name, k = base, 1
        while name in taken and taken[name] != sha:
            k += 1
            name = f"{base[:85]} ({k})"
        if name not in taken:
            taken[name] = sha
            new[name] = rec
        names.append(name)
    return new, names


def save_run(target: StudyTarget, *, label: str, records: Sequence[Record],
             config_for: Callable[[list[str]], dict[str, Any]], result: Mapping[str, Any], success: bool) -> str:
    """Save ``records`` and one run into the target study (created when missing); return the line to print.

    Parameters
    ----------
    target : StudyTarget
    label : str
        The run's label (made a valid name).
    records : sequence of Record
        Every record the run used, in order.
    config_for : callable
        Given the records' names inside the study (in the order of
        ``records``), returns the run's config.
    result : mapping
        The run's result document.
    success : bool

    Returns
    -------
    str
        ``"saved run <id> to study <name> (<url>)"``.

    Notes
    -----
    The records and the run are written in one transaction (a new study
    with them, or an existing one gaining them): a crash leaves both or
    neither.
    """
    from ..store import studies as S

    run_label = _safe_name(label, "run")

    def save(store: Store) -> int:
        for attempt in range(2):
            try:
                study = S.open_study(store, target.owner, target.name)
            except DataValidationError:
                study = None
            if study is None:
                new, names = _place_records({}, records)
                try:
                    created = S.create_study(store, target.owner, target.name, records=new, runs=[{
                        "label": run_label, "config": config_for(names), "result": result, "success": success}])
                except DataValidationError:
                    if attempt == 0:  # created meanwhile by another process: save into it
                        continue
                    raise
                return S.list_runs(store, target.owner, created.id)[-1].id
            existing = {r.name: r.sha256 for r in S.list_records(store, target.owner, study.id)}
            new, names = _place_records(existing, records)
            run = S.add_run(store, target.owner, study.id, label=run_label, config=config_for(names),
                            result=result, success=success, records=new)
            return run.id
        raise AssertionError("unreachable")  # pragma: no cover

    run_id = _with_store(target.url, save)
    return f"saved run {run_id} to study {target.name} ({target.shown_url})"


def save_identify(target: StudyTarget, args: argparse.Namespace, records: Sequence[Record],
                  validation_records: Sequence[Record], doc: Mapping[str, Any]) -> str:
    """Save an ``identify`` run (single DOF): its records, its config and ``doc`` (the ``--json`` document).

    Returns
    -------
    str
        The line to print (see :func:`save_run`).
    """
    n = len(records)

    def config_for(names: list[str]) -> dict[str, Any]:
        return identify_config(args, files=[*args.data, *args.validate], records=names[:n],
                               validation_records=names[n:],
                               extra={"parameter_setup": doc.get("parameter_setup", {})})

    return save_run(target, label=f"identify {args.method} ({args.terms})", records=[*records, *validation_records],
                    config_for=config_for, result=doc, success=bool(doc.get("success", False)))


def save_identify_mdof(target: StudyTarget, args: argparse.Namespace, doc: Mapping[str, Any]) -> str:
    """Save an ``identify --model`` run: the files read again as plain records, the model file's text, ``doc``.

    The multi-DOF path converts its records for the model; the plain records
    saved here are the same files read again (with the model file's column
    mapping) in the guarded reader.
    """
    from .mdof import _manifest
    from ..guard import load_records_guarded
    from ..mdof.data import column_spec
    from ..mdof.modelfile import load_model

    model = load_model(args.model)
    spec = column_spec(model)
    paths = [str(p) for p, _, _ in _manifest(args.records)] if args.records else list(args.data)
    recs = load_records_guarded(paths, columns=spec, units=args.units, resample=args.resample, fs=args.fs,
                                rows=args.rows)
    vals = load_records_guarded(args.validate, columns=spec, units=args.units, resample=args.resample, fs=args.fs,
                                rows=args.validate_rows) if args.validate else ()
    model_path = Path(args.model)
    text = model_path.read_text(encoding="utf-8") if model_path.stat().st_size <= _MODEL_TEXT_LIMIT else None
    stages = args.stages if args.stages in ("default", "none") else Path(args.stages).name

    def config_for(names: list[str]) -> dict[str, Any]:
        return identify_config(args, files=[*paths, *args.validate], records=names[:len(recs)],
                               validation_records=names[len(recs):], only=_MDOF_OPTIONS,
                               extra={"model_file": model_path.name, "model_toml": text, "stages": stages})

    return save_run(target, label=f"identify --model {model.name}", records=[*recs, *vals], config_for=config_for,
                    result=doc, success=bool(doc.get("success", False)))
