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
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DataValidationError, NlidError
from ..store.owners import DEFAULT_LOCAL_USER, LOCAL_USER_ENV
from .common import COMMAND_HELP
from .save import StudyTarget, identify_config, save_identify, save_identify_mdof, save_run, study_target
from .store_access import CONNECT_TIMEOUT_S, _add_store_options, _owner, _with_store, add_study_options, default_owner

if TYPE_CHECKING:
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


# ----------------------------------------------------------------------------- options and the store


# ----------------------------------------------------------------------------- identify --study


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
