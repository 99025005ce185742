"""``python -m nlid_core studies ...``, ``identify --study NAME`` and ``python -m nlid_core health``.

Studies live in the study store (:mod:`nlid_core.store`): the database of
``--database URL``, else ``NLID_DATABASE_URL``, else the SQLite file in
``NLID_DATA_DIR``. Every command acts as one engineer, ``--owner``, else
``NLID_LOCAL_USER``, else ``local`` (the dashboard's local mode uses the same
rule). The CLI is not a security boundary: whoever can run it with the
database URL can pass any ``--owner``; sign-in is the dashboard's.

A study is named by its name; a study another engineer shared with you by
``OWNER/NAME`` as well (or by its name alone when that is unambiguous). Read
commands (``show``, ``runs``, ``compare``, ``export``) accept shared studies;
the others act on your own studies only.

``identify --study NAME`` saves the records the identification used (its
data files and its ``--validate`` files, each under its file's stem; a
different record under a name the study already uses is saved as
``NAME (2)``, the same record is not saved twice) and one run: ``config``
holds every option of the command line except file paths and output options
(``--json``, ``--quiet``, ``--study``, ``--database``, ``--owner``), plus the
files' base names, the records' names in the study and the parameter set-up
handed to the estimator; ``result`` is the JSON document of ``--json``. A fit
that ran but failed is saved too, marked failed. The store is opened before
the identification starts, so an unreachable database fails at once.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DataValidationError, NlidError
from ..store.owners import DEFAULT_LOCAL_USER, LOCAL_USER_ENV, local_owner
from .common import COMMAND_HELP

if TYPE_CHECKING:
    from ..record import Record
    from ..store.db import Store
    from ..store.studies import Study

__all__ = [
    "LOCAL_USER_ENV",
    "DEFAULT_LOCAL_USER",
    "CONNECT_TIMEOUT_S",
    "default_owner",
    "StudyTarget",
    "add_study_options",
    "study_target",
    "identify_config",
    "save_run",
    "save_identify",
    "save_identify_mdof",
    "add_studies_parser",
    "run_studies",
    "add_health_parser",
    "run_health",
]

#: Bound on connecting to a PostgreSQL study database (s; libpq ``connect_timeout``, unless the URL sets one).
CONNECT_TIMEOUT_S = 10.0
#: Options of ``identify`` that are not saved in a run's config (paths, output, where to save).
_NOT_SAVED = frozenset({"command", "data", "validate", "json", "quiet", "study", "database", "owner", "model",
                        "records", "stages", "handler"})
#: Options of ``identify --model`` saved in its config (the others are the single-DOF path's).
_MDOF_OPTIONS = frozenset({"units", "resample", "fs", "rows", "validate_rows", "held", "static", "n_init"})
_MODEL_TEXT_LIMIT = 256 * 1024
_BAD_NAME_CHARS = re.compile(r"[^\w .+(),=#-]+")


def default_owner() -> str:
    """The owner of ``NLID_LOCAL_USER`` (else ``"local"``), named as the dashboard's local mode names it."""
    return local_owner(os.environ)


# ----------------------------------------------------------------------------- options and the store


def _add_store_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--database", metavar="URL",
                        help="study database (default: NLID_DATABASE_URL, else the SQLite file in NLID_DATA_DIR)")
    parser.add_argument("--owner", metavar="ENGINEER",
                        help=f"act as this engineer (default: {LOCAL_USER_ENV}, else {DEFAULT_LOCAL_USER!r})")


def add_study_options(identify: argparse.ArgumentParser) -> None:
    """Add ``--study NAME``, ``--database URL`` and ``--owner ENGINEER`` to ``identify``."""
    identify.add_argument("--study", metavar="NAME",
                          help="save the records and the run into this study (created when missing)")
    _add_store_options(identify)


def _owner(args: argparse.Namespace) -> str:
    from ..store.studies import validate_owner

    owner = args.owner if args.owner is not None else default_owner()
    try:
        return validate_owner(owner)
    except DataValidationError as exc:
        raise DataValidationError(str(exc).replace("`owner`", "`--owner`" if args.owner else
                                                   f"`--owner` (from {LOCAL_USER_ENV})")) from None


def _db_error(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _open(url: str | None) -> Store:
    """The study store; an unreachable or unusable database is one :class:`NlidError` line."""
    import sqlalchemy as sa

    from ..health import database_url_with_timeout
    from ..store.db import default_url, open_store

    raw = url if url is not None else default_url()
    try:
        return open_store(database_url_with_timeout(raw, CONNECT_TIMEOUT_S))
    except sa.exc.SQLAlchemyError as exc:
        shown = _hidden(raw)
        raise NlidError(f"cannot open the study database {shown} (`--database`): {_db_error(exc)}") from None
    except OSError as exc:
        raise NlidError(f"cannot open the study database (`--database`): {exc.strerror or exc}") from None


def _hidden(url: str) -> str:
    import sqlalchemy as sa

    try:
        return sa.make_url(url).render_as_string(hide_password=True)
    except sa.exc.ArgumentError:
        return repr(url[:100])


def _with_store(url: str | None, action: Callable[[Store], Any]) -> Any:
    """Run ``action`` on an open store, closing it after; database errors become one :class:`NlidError` line."""
    import sqlalchemy as sa

    store = _open(url)
    try:
        return action(store)
    except sa.exc.SQLAlchemyError as exc:
        raise NlidError(f"study database {store.url}: {_db_error(exc)}") from None
    finally:
        store.close()


# ----------------------------------------------------------------------------- identify --study


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


# ----------------------------------------------------------------------------- studies


def add_studies_parser(sub: argparse._SubParsersAction[Any]) -> None:
    """Add ``studies list|show|runs|compare|export|import|rename|duplicate|delete|share|unshare``."""
    st = sub.add_parser("studies", help=COMMAND_HELP["studies"],
                        description="Saved studies in the study database. NAME is one of your studies, or "
                                    "OWNER/NAME a study shared with you (read commands only).")
    cmds = st.add_subparsers(dest="studies_command", required=True, parser_class=type(st))

    def cmd(name: str, help_text: str) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = cmds.add_parser(name, help=help_text)
        return p

    cmd("list", "your studies and the ones shared with you")
    cmd("show", "a study: notes, records, number of runs, who it is shared with").add_argument("name", metavar="NAME")
    cmd("runs", "the runs of a study").add_argument("name", metavar="NAME")
    c = cmd("compare", "the parameters of a study's runs side by side")
    c.add_argument("name", metavar="NAME")
    c.add_argument("--runs", metavar="ID,ID,...", help="only these runs (ids from `studies runs`)")
    e = cmd("export", "write a study as one file (zip: Parquet and JSON)")
    e.add_argument("name", metavar="NAME")
    e.add_argument("--out", required=True, metavar="FILE.zip")
    i = cmd("import", "import a study file (checked completely before anything is written)")
    i.add_argument("file", metavar="FILE.zip")
    i.add_argument("--name", metavar="NEW", help="name of the new study (default: the name in the file)")
    r = cmd("rename", "rename one of your studies")
    r.add_argument("name", metavar="OLD")
    r.add_argument("new_name", metavar="NEW")
    d = cmd("duplicate", "copy a study (records shared, runs copied)")
    d.add_argument("name", metavar="NAME")
    d.add_argument("new_name", metavar="NEW")
    x = cmd("delete", "delete one of your studies with its runs")
    x.add_argument("name", metavar="NAME")
    x.add_argument("--confirm", required=True, metavar="NAME", help="repeat the study's name")
    for verb, what in (("share", "let ENGINEER read one of your studies"), ("unshare", "stop sharing a study")):
        s = cmd(verb, what)
        s.add_argument("name", metavar="NAME")
        s.add_argument("grantee", metavar="ENGINEER")
    for p in cmds.choices.values():
        _add_store_options(p)
        p.add_argument("--json", metavar="OUT", help="also write the answer as JSON")


def _study_doc(s: Study, user: str) -> dict[str, Any]:
    return {"id": s.id, "name": s.name, "owner": s.owner, "shared_with_you": s.owner != user,
            "created": s.created.isoformat(), "updated": s.updated.isoformat(), "notes": s.notes}


def _ref(s: Study, user: str) -> str:
    return s.name if s.owner == user else f"{s.owner}/{s.name}"


def _readable(store: Store, user: str, ref: str) -> Study:
    """The study ``ref`` (NAME or OWNER/NAME) that ``user`` may read."""
    from ..store import studies as S

    owner, sep, name = ref.rpartition("/")
    if sep:
        S.validate_owner(owner)
        S.validate_name(name, "NAME")
        found = [s for s in S.list_studies(store, user) if s.owner == owner and s.name == name]
        if not found:
            raise DataValidationError(f"no study {ref!r} is yours or shared with {user!r} (`NAME`)")
        return found[0]
    S.validate_name(ref, "NAME")
    try:
        return S.open_study(store, user, ref)
    except DataValidationError:
        pass
    found = [s for s in S.list_studies(store, user) if s.name == ref and s.owner != user]
    if len(found) > 1:
        raise DataValidationError(f"several engineers share a study named {ref!r} with you: "
                                  f"{', '.join(_ref(s, user) for s in found)}; name one as OWNER/NAME (`NAME`)")
    if not found:
        raise DataValidationError(f"{user!r} has no study named {ref!r}, and none is shared under that name (`NAME`)")
    return found[0]


def _own(store: Store, user: str, ref: str) -> Study:
    """The study ``ref`` of ``user`` (writes are the owner's only)."""
    from ..store import studies as S

    if "/" not in ref:
        S.validate_name(ref, "NAME")
        try:
            return S.open_study(store, user, ref)
        except DataValidationError:
            pass
    try:
        other = _readable(store, user, ref)
    except DataValidationError:
        raise DataValidationError(f"{user!r} has no study named {ref!r} (`NAME`)") from None
    if other.owner == user:
        return other
    raise DataValidationError(f"study {_ref(other, user)!r} is shared with you by {other.owner!r}; only its owner "
                              "may change it (`NAME`; `duplicate` it to work on a copy of your own)")


def _when(t: _dt.datetime) -> str:
    return t.astimezone(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _num(v: Any) -> str:
    return f"{v:.6g}" if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else "—"


def _run_ids(spec: str | None) -> list[int] | None:
    if spec is None:
        return None
    out: list[int] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part.isdigit() or len(part) > 12:
            raise NlidError(f"`--runs` takes run ids separated by commas (see `studies runs`); cannot read {part!r:.40}")
        out.append(int(part))
    if not out:
        raise NlidError("`--runs` names no run")
    return out


def _write_atomic(path: Path, data: bytes, option: str) -> None:
    if path.is_dir():
        raise NlidError(f"`{option}` {str(path)!r:.200} is a directory")
    tmp = path.with_name(f".{path.name}.part")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise NlidError(f"cannot write `{option}` {path.name!r:.200}: {exc.strerror or exc}") from None


def _cmd_list(store: Store, user: str, args: argparse.Namespace) -> tuple[str, Any]:
    from ..store import studies as S

    found = S.list_studies(store, user)
    lines = [f"studies of {user} in {store.url}: {len(found)}"]
    for s in found:
        who = "" if s.owner == user else f"  (shared by {s.owner})"
        lines.append(f"  {_ref(s, user):40s} updated {_when(s.updated)}{who}")
    return "\n".join(lines), [_study_doc(s, user) for s in found]


def _cmd_show(store: Store, user: str, args: argparse.Namespace) -> tuple[str, Any]:
    from ..store import studies as S

    st = _readable(store, user, args.name)
    recs = S.list_records(store, user, st.id)
    n_runs = len(S.list_runs(store, user, st.id))
    shares = list(S.list_shares(store, user, st.id)) if st.owner == user else []
    lines = [f"study {_ref(st, user)} (id {st.id}, owner {st.owner})",
             f"  created {_when(st.created)}, updated {_when(st.updated)}", f"  runs: {n_runs}",
             f"  records: {len(recs)}"]
    for r in recs:
        lines.append(f"    {r.name:30s} {r.n_samples} samples at {r.fs_hz:.6g} Hz; channels {','.join(r.channels)}")
    if st.owner == user:
        lines.append(f"  shared with: {', '.join(shares) if shares else 'nobody'}")
    if st.notes:
        lines += ["  notes:", *("    " + ln for ln in st.notes.splitlines()[:50])]
    doc = {**_study_doc(st, user), "runs": n_runs, "shares": shares,
           "records": [{"name": r.name, "record_name": r.record_name, "sha256": r.sha256, "n_samples": r.n_samples,
                        "channels": list(r.channels), "fs_hz": r.fs_hz} for r in recs]}
    return "\n".join(lines), doc


def _cmd_runs(store: Store, user: str, args: argparse.Namespace) -> tuple[str, Any]:
    from ..store import studies as S

    st = _readable(store, user, args.name)
    found = S.list_runs(store, user, st.id)
    lines = [f"runs of study {_ref(st, user)}: {len(found)}",
             f"  {'id':>6s}  {'created':20s}  {'ok':3s}  {'cost':>11s}  label"]
    docs = []
    for r in found:
        metrics = r.result.get("metrics")
        cost = metrics.get("cost") if isinstance(metrics, Mapping) else None
        lines.append(f"  {r.id:6d}  {_when(r.created):20s}  {'yes' if r.success else 'no':3s}  {_num(cost):>11s}"
                     f"  {r.label}")
        docs.append({"id": r.id, "label": r.label, "created": r.created.isoformat(), "success": r.success,
                     "cost": cost, "item_key": r.item_key, "config": r.config})
    return "\n".join(lines), docs


def _cmd_compare(store: Store, user: str, args: argparse.Namespace) -> tuple[str, Any]:
    from ..store import studies as S

    st = _readable(store, user, args.name)
    frame = S.compare_runs(store, user, st.id, _run_ids(args.runs))
    import pandas as pd

    with pd.option_context("display.width", 200, "display.max_columns", 40):
        table = frame.to_string(float_format=lambda v: f"{v:.6g}") if len(frame) else "  (no runs)"
    doc = [{"run": int(i), **{str(k): v for k, v in row.items()}}
           for i, row in zip(frame.index.tolist(), frame.to_dict(orient="records"))]
    return f"runs of study {_ref(st, user)} side by side\n{table}", doc


def _cmd_export(store: Store, user: str, args: argparse.Namespace) -> tuple[str, Any]:
    from ..store.archive import export_study

    st = _readable(store, user, args.name)
    data = export_study(store, user, st.id)
    out = Path(args.out)
    _write_atomic(out, data, "--out")
    return (f"wrote study {_ref(st, user)} to {out.name} ({len(data)} bytes)",
            {"study": _study_doc(st, user), "file": out.name, "bytes": len(data)})


def _cmd_import(store: Store, user: str, args: argparse.Namespace) -> tuple[str, Any]:
    from ..store.archive import MAX_ARCHIVE_BYTES, import_study

    path = Path(args.file)
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise NlidError(f"`FILE` {path.name!r:.200} is not a file")
        if size > MAX_ARCHIVE_BYTES:
            raise NlidError(f"`FILE` {path.name!r:.200} is {size} bytes; study files of at most {MAX_ARCHIVE_BYTES}"
                            " bytes are accepted")
        data = path.read_bytes()
    except OSError as exc:
        raise NlidError(f"cannot read `FILE` {path.name!r:.200}: {exc.strerror or exc}") from None
    try:
        st = import_study(store, user, data, name=args.name)
    except DataValidationError as exc:  # name the command's arguments, not the function's
        raise DataValidationError(str(exc).replace("`data`", f"`FILE` {path.name!r:.100}").replace(
            "`name`", "`--name`")) from None
    return f"imported {path.name} as study {st.name} (id {st.id})", _study_doc(st, user)


def _cmd_rename(store: Store, user: str, args: argparse.Namespace) -> tuple[str, Any]:
    from ..store import studies as S

    st = S.rename_study(store, user, _own(store, user, args.name).id, args.new_name)
    return f"renamed study {args.name} to {st.name}", _study_doc(st, user)


def _cmd_duplicate(store: Store, user: str, args: argparse.Namespace) -> tuple[str, Any]:
    from ..store import studies as S

    src = _readable(store, user, args.name)
    if src.owner != user:
        raise DataValidationError(f"study {_ref(src, user)!r} is shared with you; export it and import the file to "
                                  "get a copy of your own (`NAME`)")
    st = S.duplicate_study(store, user, src.id, args.new_name)
    return f"copied study {args.name} to {st.name} (id {st.id})", _study_doc(st, user)


def _cmd_delete(store: Store, user: str, args: argparse.Namespace) -> tuple[str, Any]:
    from ..store import studies as S

    st = _own(store, user, args.name)
    S.delete_study(store, user, st.id, confirm=args.confirm)
    return f"deleted study {st.name} with its runs", {"deleted": _study_doc(st, user)}


def _cmd_share(store: Store, user: str, args: argparse.Namespace) -> tuple[str, Any]:
    from ..store import studies as S

    try:
        S.validate_owner(args.grantee)
    except DataValidationError as exc:
        raise DataValidationError(str(exc).replace("`owner`", "`ENGINEER`")) from None
    st = _own(store, user, args.name)
    if args.studies_command == "share":
        S.share_study(store, user, st.id, args.grantee)
        verb = f"shared study {st.name} with {args.grantee}"
    else:
        S.unshare_study(store, user, st.id, args.grantee)
        verb = f"study {st.name} is no longer shared with {args.grantee}"
    shares = list(S.list_shares(store, user, st.id))
    return f"{verb}; shared with: {', '.join(shares) if shares else 'nobody'}", {"study": st.name, "shares": shares}


_COMMANDS: dict[str, Callable[[Store, str, argparse.Namespace], tuple[str, Any]]] = {
    "list": _cmd_list, "show": _cmd_show, "runs": _cmd_runs, "compare": _cmd_compare, "export": _cmd_export,
    "import": _cmd_import, "rename": _cmd_rename, "duplicate": _cmd_duplicate, "delete": _cmd_delete,
    "share": _cmd_share, "unshare": _cmd_share,
}


def _json_text(doc: Any) -> str:
    from ..store.studies import to_json

    return json.dumps(json.loads(to_json(doc, "--json")), indent=2, ensure_ascii=False)


def run_studies(args: argparse.Namespace) -> str:
    """Run a ``studies`` command; return the text to print (errors raise :class:`NlidError`)."""
    user = _owner(args)
    command = _COMMANDS[args.studies_command]
    text, doc = _with_store(args.database, lambda store: command(store, user, args))
    if args.json:
        _write_atomic(Path(args.json), _json_text(doc).encode("utf-8"), "--json")
    return str(text)


# ----------------------------------------------------------------------------- health


def add_health_parser(sub: argparse._SubParsersAction[Any]) -> None:
    """Add ``health [--database URL] [--url URL] [--timeout S]``."""
    from ..health import DEFAULT_TIMEOUT_S

    h = sub.add_parser("health", help=COMMAND_HELP["health"],
                       description="Opens the study database (migrating it to this version's schema if needed), "
                                   "checks its revision and runs SELECT 1; with --url also fetches the dashboard's "
                                   "/_stcore/health. Prints one line; exit status 0 healthy, 1 unhealthy.")
    h.add_argument("--database", metavar="URL",
                   help="study database (default: NLID_DATABASE_URL, else the SQLite file in NLID_DATA_DIR)")
    h.add_argument("--url", metavar="URL", help="also check the dashboard at this address, e.g. http://localhost:8501")
    h.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="S",
                   help=f"time bound of each check in seconds (default {DEFAULT_TIMEOUT_S:g})")


def run_health(args: argparse.Namespace) -> tuple[int, str]:
    """``health``: (exit status 0 or 1, the one line to print)."""
    from ..health import check_health

    try:
        report = check_health(args.database, args.url, timeout_s=args.timeout)
    except DataValidationError as exc:  # a bad --url or --timeout: unhealthy as well, for the container runtime
        return 1, f"unhealthy: {str(exc).replace('`url`', '`--url`').replace('`timeout_s`', '`--timeout`')}"
    return (0 if report.success else 1), report.message
