"""The runs of a study: one computation's configuration, result and success, added one at a time or as
the items of a batch (each at most once, by its item key), listed and compared side by side."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from ..errors import DataValidationError
from ..record import Record
from .db import Store
from .encoding import to_json, validate_name, validate_owner
from .rows import Run, _insert_records, _now, _prepare_records, _readable_row, _run_from_row, _study_row, _touch
from .schema import MAX_ITEM_KEY_LENGTH, records, runs

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["validate_item_key", "add_run", "update_run_result", "add_item_runs", "run_item_keys", "list_runs",
           "compare_runs"]


@dataclass(frozen=True, kw_only=True)
class _RunRow:
    label: str
    config_json: str
    result_json: str
    success: bool
    created: _dt.datetime
    item_key: str | None = None


def validate_item_key(item_key: str | None) -> str | None:
    """``item_key`` checked: None, or 1–200 printable characters."""
    if item_key is None:
        return None
    if not isinstance(item_key, str) or not 0 < len(item_key) <= MAX_ITEM_KEY_LENGTH or not item_key.isprintable():
        raise DataValidationError(
            f"`item_key` must be 1-{MAX_ITEM_KEY_LENGTH} printable characters; got {item_key!r:.80}")
    return item_key


def _prepare_run(label: str, config: Mapping[str, Any], result: Any, success: bool | None,
                 created: _dt.datetime | None = None, item_key: str | None = None) -> _RunRow:
    validate_name(label, "label")
    validate_item_key(item_key)
    if not isinstance(config, Mapping):
        raise DataValidationError(f"`config` must be a mapping; got {type(config).__name__}")
    from ..estimate import FitResult

    if isinstance(result, FitResult):
        from ..report import result_to_dict

        doc = result_to_dict(result)
        ok = bool(result.success) if success is None else bool(success)
    elif isinstance(result, Mapping):
        doc = dict(result)
        ok = bool(doc.get("success", False)) if success is None else bool(success)
    else:
        raise DataValidationError(f"`result` must be a FitResult or a mapping; got {type(result).__name__}")
    return _RunRow(label=label, config_json=to_json(dict(config), "config"), result_json=to_json(doc, "result"),
                   success=ok, created=created or _now(), item_key=item_key)


def _insert_run(conn: sa.Connection, owner: str, study_id: int, run: _RunRow) -> int:
    res = conn.execute(sa.insert(runs).values(
        study_id=study_id, owner=owner, created=run.created, label=run.label, config_json=run.config_json,
        result_json=run.result_json, success=run.success, item_key=run.item_key))
    pk = res.inserted_primary_key
    assert pk is not None
    return int(pk[0])


def _insert_runs(conn: sa.Connection, owner: str, study_id: int, rows: Sequence[_RunRow]) -> None:
    """Insert many runs in one statement per batch of 1000 (an executemany: an archive of 1e5 runs is
    imported in seconds, not one round trip per run)."""
    for start in range(0, len(rows), 1000):
        conn.execute(sa.insert(runs), [
            {"study_id": study_id, "owner": owner, "created": r.created, "label": r.label, "config_json": r.config_json,
             "result_json": r.result_json, "success": r.success, "item_key": r.item_key}
            for r in rows[start:start + 1000]])


def add_run(store: Store, owner: str, study_id: int, *, label: str, config: Mapping[str, Any],
            result: Any, success: bool | None = None, item_key: str | None = None,
            records: Mapping[str, Record] | Sequence[Record] | None = None) -> Run:
    """Save a run of a study.

    Parameters
    ----------
    label : str
        A name for the run (validated like study names; need not be unique).
    config : mapping
        What was run (terms, options, record names, ...); JSON-serialisable.
    result : FitResult or mapping
        A :class:`~nlid_core.estimate.FitResult` is written with
        :func:`nlid_core.report.result_to_dict`; a mapping as it is.
    success : bool or None
        Default: the result's ``success``.
    item_key : str or None
        The batch item this run computed: at most one run per key and study
        (:func:`run_item_keys` lists them, so a resumed batch skips them).
    records : mapping of str to Record, sequence of Record, or None
        Records to add to the study with the run, in the same transaction
        (names must be new in the study, as for :func:`add_records`): a
        crash leaves either both or neither.

    Returns
    -------
    Run

    Raises
    ------
    DataValidationError
        Not the owner's study; a bad label or key; ``item_key`` already
        used in the study (nothing is written then).
    """
    validate_owner(owner)
    row = _prepare_run(label, config, result, success, item_key=item_key)
    named = _prepare_records(records)
    with store.write() as conn:
        st = _study_row(conn, owner, study_id)
        _insert_records(conn, owner, st.id, named)
        if item_key is not None and conn.execute(sa.select(runs.c.id).where(
                runs.c.study_id == st.id, runs.c.item_key == item_key)).first() is not None:
            raise DataValidationError(f"study {st.name!r} already has a run for `item_key` {item_key!r:.80}")
        rid = _insert_run(conn, owner, st.id, row)
        _touch(conn, st.id)
        new = conn.execute(sa.select(runs).where(runs.c.id == rid)).one()
    return _run_from_row(new)


def update_run_result(store: Store, owner: str, study_id: int, run_id: int, result: Any) -> Run:
    """Replace a saved run's result document (e.g. with the validations made since it was saved); its label,
    configuration and success stay.

    Raises
    ------
    DataValidationError
        Not the owner's study, or no such run in it.
    """
    validate_owner(owner)
    old = next((r for r in list_runs(store, owner, study_id) if r.id == run_id), None)
    if old is None:
        raise DataValidationError(f"study #{study_id} has no run #{run_id}")
    row = _prepare_run(old.label, old.config, result, old.success)
    with store.write() as conn:
        st = _study_row(conn, owner, study_id)
        conn.execute(sa.update(runs).where(runs.c.id == run_id, runs.c.study_id == st.id)
                     .values(result_json=row.result_json))
        _touch(conn, st.id)
        new = conn.execute(sa.select(runs).where(runs.c.id == run_id)).one()
    return _run_from_row(new)


def add_item_runs(store: Store, owner: str, study_id: int, items: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """Save the runs of several batch items in one transaction; a key the study already holds is skipped.

    One transaction (one disk sync) for a whole chunk of a batch instead of one per item; a crash leaves
    all of the chunk's runs or none.

    Parameters
    ----------
    items : sequence of mapping
        Each with the keywords of :func:`add_run`: ``label``, ``config``, ``result``, ``item_key``
        (required here) and optionally ``success``.

    Returns
    -------
    tuple of str
        The item keys saved now (those already in the study, e.g. stored meanwhile by another run of the
        same batch, are left as they are and not listed).

    Raises
    ------
    DataValidationError
        Not the owner's study; a bad label or key, a missing ``item_key``, a key given twice (nothing is
        written then).
    """
    validate_owner(owner)
    rows: list[_RunRow] = []
    for i, item in enumerate(items):
        key = item.get("item_key")
        if key is None:
            raise DataValidationError(f"item {i}: `item_key` is required")
        rows.append(_prepare_run(item["label"], item["config"], item["result"], item.get("success"), item_key=key))
    keys = [r.item_key for r in rows]
    if len(set(keys)) != len(keys):
        raise DataValidationError("an `item_key` is given twice")
    if not rows:
        return ()
    for attempt in (0, 1):
        try:
            with store.write() as conn:
                st = _study_row(conn, owner, study_id)
                held = set(conn.execute(sa.select(runs.c.item_key).where(
                    runs.c.study_id == st.id, runs.c.item_key.in_(keys))).scalars().all())
                new = [r for r in rows if r.item_key not in held]
                for r in new:
                    _insert_run(conn, owner, st.id, r)
                if new:
                    _touch(conn, st.id)
            return tuple(str(r.item_key) for r in new)
        except sa.exc.IntegrityError:  # another writer stored one of the keys between the check and the insert
            if attempt:
                raise
    raise AssertionError("unreachable")


def run_item_keys(store: Store, owner: str, study_id: int) -> frozenset[str]:
    """The item keys of a study's runs (the batch items already computed)."""
    validate_owner(owner)
    with store.read() as conn:
        st = _readable_row(conn, owner, study_id)
        keys = conn.execute(sa.select(runs.c.item_key).where(runs.c.study_id == st.id,
                                                             runs.c.item_key.is_not(None))).scalars().all()
    return frozenset(str(k) for k in keys)


def list_runs(store: Store, owner: str, study_id: int) -> tuple[Run, ...]:
    """The runs of a study, oldest first."""
    validate_owner(owner)
    with store.read() as conn:
        st = _readable_row(conn, owner, study_id)
        rows = conn.execute(sa.select(runs).where(runs.c.study_id == st.id, runs.c.owner == st.owner)
                            .order_by(runs.c.id)).all()
    return tuple(_run_from_row(r) for r in rows)


def compare_runs(store: Store, owner: str, study_id: int, run_ids: Sequence[int] | None = None) -> pd.DataFrame:
    """Parameters per run side by side.

    Returns
    -------
    pandas.DataFrame
        Indexed by run id; columns ``label``, ``success``, ``cost`` and then
        one column per parameter value (``result["parameters"][name]["value"]``,
        NaN where a run lacks it) and ``<name> stderr``.
    """
    import pandas as pd

    all_runs = list_runs(store, owner, study_id)
    if run_ids is not None:
        wanted = list(run_ids)
        known = {r.id for r in all_runs}
        missing = [i for i in wanted if i not in known]
        if missing:
            raise DataValidationError(f"`run_ids` names runs not in the study: {missing}")
        all_runs = tuple(r for r in all_runs if r.id in set(wanted))
    rows: list[dict[str, Any]] = []
    names: dict[str, None] = {}
    for r in all_runs:
        params = r.result.get("parameters", {})
        row: dict[str, Any] = {"label": r.label, "success": r.success,
                               "cost": _num(r.result.get("metrics", {}).get("cost"))}
        if isinstance(params, Mapping):
            for pname, p in params.items():
                names.setdefault(str(pname))
                p = p if isinstance(p, Mapping) else {}
                row[str(pname)] = _num(p.get("value"))
                row[f"{pname} stderr"] = _num(p.get("stderr"))
        rows.append(row)
    cols = ["label", "success", "cost"] + [c for n in names for c in (n, f"{n} stderr")]
    return pd.DataFrame(rows, index=pd.Index([r.id for r in all_runs], name="run"), columns=cols)


def _num(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else float("nan")
