"""Batch specifications: the TOML file ``python -m nlid_core batch`` runs, parsed and bounded.

Two kinds (``docs/batch.md`` has complete examples):

``kind = "grid"``
    Records (``[records] files``: paths relative to the spec file, globs
    allowed, read by the isolated readers of :mod:`nlid_core.guard`) times
    model variants (``[[variant]]``: label, terms, method and the options of
    ``identify``). One item = one identification of one record with one
    variant.
``kind = "monte_carlo"``
    A true model (``[model]``), an excitation (``[excitation]``: a generator
    of :mod:`nlid_core.excitation` or a force file), measurement noise
    (``[measurement]``), the fit (``[fit]``: the keys of a variant), ``draws``
    and a base ``seed``. Item ``i`` adds noise drawn from
    ``SeedSequence(seed, spawn_key=(i,))`` (the ``i``-th child of
    ``SeedSequence(seed).spawn``) to the true response and identifies.

Everything is checked here, before any work starts: the file's size, the
number of files, variants and draws, the length of every string, the type of
every value, unknown keys. Every error is a
:class:`~nlid_core.errors.ModelSpecError` (or
:class:`~nlid_core.errors.DataValidationError` for files) whose message names
the table and key, e.g. ``[[variant]] #2 `method```.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DataValidationError, ModelSpecError
from ..tomlfile import read_toml
from .fields import MAX_LABEL, MAX_STRING, _integer, _number, _string, _strings, _table, _unknown, _values
from .sources import MAX_FILES, RecordSource, _Walk, _records
from .variants import Variant, _build_model, _variant, check_variant, variant_parameters

__all__ = [
    "KINDS",
    "MAX_SPEC_BYTES",
    "MAX_FILES",
    "MAX_VARIANTS",
    "MAX_ITEMS",
    "MAX_STRING",
    "MAX_LABEL",
    "MAX_MC_SAMPLES",
    "Variant",
    "RecordSource",
    "GridSpec",
    "MonteCarloSpec",
    "BatchSpec",
    "parse_spec",
    "load_spec",
    "check_variant",
    "variant_parameters",
]

#: Kinds of batch.
KINDS: tuple[str, ...] = ("grid", "monte_carlo")
#: Largest spec file (bytes).
MAX_SPEC_BYTES = 256_000
#: Most items x samples of one batch (see :func:`nlid_core.limits.budget`).
MAX_SAMPLES_ENV = "NLID_BATCH_MAX_SAMPLES"
#: Most variants of a grid.
MAX_VARIANTS = 64
#: Most items of a batch (records x variants, or draws).
MAX_ITEMS = 100_000
#: Most samples of a Monte Carlo record (each item receives the true response).
MAX_MC_SAMPLES = 200_000

_TOP = {"grid": {"kind", "study", "description", "records", "variant"},
        "monte_carlo": {"kind", "study", "description", "draws", "seed", "model", "excitation", "measurement",
                        "fit"}}
_MODEL_KEYS = {"terms", "custom", "values", "v_eps", "gap", "x0"}
_MEASUREMENT_KEYS = {"channels", "noise"}
_NOISE_CHANNELS = ("x", "v", "a", "f")


@dataclass(frozen=True, kw_only=True)
class GridSpec:
    """Records x variants.

    Attributes
    ----------
    records : RecordSource
    variants : tuple of Variant
    """

    records: RecordSource
    variants: tuple[Variant, ...]


@dataclass(frozen=True, kw_only=True)
class MonteCarloSpec:
    """A Monte Carlo study of a test design.

    Attributes
    ----------
    terms, custom : tuple of str
        The true model (also the fitted one).
    values : mapping of str to float
        True parameter values (the library defaults for parameters not named).
    v_eps, gap : float or None
        Model settings.
    x0 : (float, float)
        Initial displacement (m) and velocity (m/s) of the true response.
    excitation_kind : str or None
        A key of :data:`nlid_core.excitation.EXCITATIONS`, or None with ``excitation_file``.
    excitation_settings : mapping
        The generator's arguments.
    excitation_file : pathlib.Path or None
        A force file (columns t, f, e.g. written by ``python -m nlid_core excitation``).
    channels : tuple of str
        Measured response channels (``x`` always; ``v``, ``a`` optional).
    noise : mapping of str to float
        Noise standard deviation per channel among x (m), v (m/s), a (m/s²), f (N).
    fit : Variant
        The identification of each draw (its label is ``fit``; its terms are the model's).
    draws : int
    seed : int
        Base seed (0 to 2**63 - 1).
    """

    terms: tuple[str, ...]
    custom: tuple[str, ...]
    values: Mapping[str, float]
    v_eps: float | None
    gap: float | None
    x0: tuple[float, float]
    excitation_kind: str | None
    excitation_settings: Mapping[str, Any]
    excitation_file: Path | None
    channels: tuple[str, ...]
    noise: Mapping[str, float]
    fit: Variant
    draws: int
    seed: int


@dataclass(frozen=True, kw_only=True)
class BatchSpec:
    """A parsed batch specification.

    Attributes
    ----------
    kind : str
        ``"grid"`` or ``"monte_carlo"``.
    study : str or None
        The spec's ``study`` key.
    description : str
    source : str
        The spec file's name (for messages).
    stem : str
        The spec file's stem (default study name).
    text : str
        The spec's text, as read (stored with the batch).
    sha256 : str
        SHA-256 of ``text`` (hex).
    grid : GridSpec or None
    monte_carlo : MonteCarloSpec or None
    """

    kind: str
    study: str | None
    description: str
    source: str
    stem: str
    text: str
    sha256: str
    grid: GridSpec | None = None
    monte_carlo: MonteCarloSpec | None = None

    @property
    def n_items(self) -> int:
        """Items before loading: files x variants, or draws (a grid may shrink when files repeat content)."""
        if self.grid is not None:
            return len(self.grid.records.files) * len(self.grid.variants)
        assert self.monte_carlo is not None
        return self.monte_carlo.draws


# ----------------------------------------------------------------------------- value checks


# ----------------------------------------------------------------------------- the two kinds


def _grid(data: Mapping[str, Any], base_dir: Path, outside: bool = False) -> GridSpec:
    if "records" not in data:
        raise ModelSpecError("a grid spec needs a [records] table")
    raw = data.get("variant")
    if not isinstance(raw, list) or not raw or not all(isinstance(v, Mapping) for v in raw):
        raise ModelSpecError("a grid spec needs [[variant]] tables (write [[variant]] once per variant)")
    if len(raw) > MAX_VARIANTS:
        raise ModelSpecError(f"[[variant]]: {len(raw)} variants; at most {MAX_VARIANTS}")
    variants = tuple(_variant(v, f"[[variant]] #{k + 1}") for k, v in enumerate(raw))
    labels = [v.label for v in variants]
    dup = sorted({x for x in labels if labels.count(x) > 1})
    if dup:
        raise ModelSpecError(f"[[variant]] `label`: {', '.join(dup)} used twice; labels must be unique")
    records = _records(data["records"], base_dir, outside)
    n = len(records.files) * len(variants)
    if n > MAX_ITEMS:
        raise ModelSpecError(f"{len(records.files)} files x {len(variants)} variants = {n} items; at most {MAX_ITEMS}")
    return GridSpec(records=records, variants=variants)


def _mc_excitation(exc: Mapping[str, Any], draws: int, base_dir: Path, files: bool, outside: bool
                   ) -> tuple[str | None, dict[str, Any], Path | None]:
    """The ``[excitation]`` table of a monte_carlo spec: a generator's kind and settings, or a force file."""
    from ..excitation import EXCITATIONS

    kind: str | None = None
    settings: dict[str, Any] = {}
    efile: Path | None = None
    if "file" in exc:
        if not files:
            raise ModelSpecError("[excitation] `file`: a spec run from the dashboard reads no files on the server;"
                                 " give a generator (`kind`, e.g. \"linear_chirp\") or run it with"
                                 " `python -m nlid_core batch`")
        if len(exc) != 1:
            raise ModelSpecError("[excitation]: `file` stands alone (the force file's t and f columns)")
        name = _string(exc["file"], "[excitation]", "file")
        efile = Path(name).expanduser()
        efile = (efile if efile.is_absolute() else base_dir / efile).resolve()
        _Walk(base_dir, outside).check_inside(efile, name)
        if not efile.is_file():
            raise DataValidationError(f"[excitation] `file`: no such file {name!r}")
    else:
        if "kind" not in exc:
            raise ModelSpecError(f"[excitation]: give `kind` ({', '.join(EXCITATIONS)}) or a force `file`")
        kind = _string(exc["kind"], "[excitation]", "kind", limit=64)
        if kind not in EXCITATIONS:
            raise ModelSpecError(f"[excitation] `kind` must be one of {', '.join(EXCITATIONS)}; got {kind!r}")
        for k, v in exc.items():
            if k == "kind":
                continue
            if isinstance(v, str):
                _string(v, "[excitation]", k)
            elif isinstance(v, (list, Mapping)) and len(v) > 10_000:
                raise ModelSpecError(f"[excitation] `{k}` holds more than 10000 entries")
            settings[k] = v
        duration, fs = settings.get("duration_s"), settings.get("fs_hz")
        if isinstance(duration, (int, float)) and isinstance(fs, (int, float)):
            if duration * fs > MAX_MC_SAMPLES:
                raise ModelSpecError(f"[excitation] `duration_s` x `fs_hz` = {duration * fs:.3g} samples; at most "
                                     f"{MAX_MC_SAMPLES}")
            check_work(draws, draws * float(duration) * float(fs), "monte_carlo spec")
    return kind, settings, efile


def _mc_measurement(meas: Mapping[str, Any]) -> tuple[tuple[str, ...], dict[str, float]]:
    """The ``[measurement]`` table of a monte_carlo spec: the measured channels and the noise of each."""
    _unknown(meas, _MEASUREMENT_KEYS, "[measurement]")
    channels = _strings(meas.get("channels", ["x"]), "[measurement]", "channels", limit=3)
    if "x" not in channels or any(c not in ("x", "v", "a") for c in channels) or len(set(channels)) != len(channels):
        raise ModelSpecError(f"[measurement] `channels` must hold x and optionally v, a; got {list(channels)}")
    if "noise" not in meas:
        raise ModelSpecError("[measurement]: give `noise` (standard deviation per channel, e.g. noise = { x = 1e-5 })")
    noise = {}
    for ch, sd in _table(meas["noise"], "[measurement] `noise`").items():
        if ch not in _NOISE_CHANNELS or (ch != "f" and ch not in channels):
            raise ModelSpecError(f"[measurement] `noise` takes the measured channels {', '.join(channels)} and f; "
                                 f"got `{str(ch)[:40]}`")
        noise[ch] = _number(sd, "[measurement]", f"noise.{ch}", nonnegative=True)
    return channels, noise


def _monte_carlo(data: Mapping[str, Any], base_dir: Path, files: bool = True, outside: bool = False) -> MonteCarloSpec:
    if "draws" not in data:
        raise ModelSpecError("a monte_carlo spec needs `draws` (the number of simulated tests)")
    draws = _integer(data["draws"], "", "draws", 1, MAX_ITEMS)
    seed = _integer(data.get("seed", 0), "", "seed", 0, 2**63 - 1)
    for key in ("model", "excitation", "measurement"):
        if key not in data:
            raise ModelSpecError(f"a monte_carlo spec needs a [{key}] table")
    model = _table(data["model"], "[model]")
    _unknown(model, _MODEL_KEYS, "[model]")
    if "values" not in model:
        raise ModelSpecError("[model]: give the true `values` (e.g. values = { m0 = 1.0, k1 = 1500.0 })")
    values = _values(model["values"], "[model]", "values")
    terms = _strings(model["terms"], "[model]", "terms", limit=64) if "terms" in model else tuple(values)
    custom = _strings(model["custom"], "[model]", "custom", limit=8) if "custom" in model else ()
    v_eps = _number(model["v_eps"], "[model]", "v_eps", positive=True) if "v_eps" in model else None
    gap = _number(model["gap"], "[model]", "gap", nonnegative=True) if "gap" in model else None
    x0 = (0.0, 0.0)
    if "x0" in model:
        raw = model["x0"]
        if not isinstance(raw, list) or len(raw) != 2:
            raise ModelSpecError("[model] `x0` must be [displacement, velocity]")
        x0 = (_number(raw[0], "[model]", "x0"), _number(raw[1], "[model]", "x0"))
    kind, settings, efile = _mc_excitation(_table(data["excitation"], "[excitation]"), draws, base_dir, files,
                                           outside)
    channels, noise = _mc_measurement(_table(data["measurement"], "[measurement]"))
    fit = _variant(data.get("fit", {}), "[fit]", label="fit", terms=terms, custom=custom)
    fit = dataclasses.replace(fit, v_eps=fit.v_eps if fit.v_eps is not None else v_eps,
                              gap=fit.gap if fit.gap is not None else gap)
    truth = Variant(label="truth", terms=terms, custom=custom, v_eps=v_eps, gap=gap)
    model_obj = _build_model(truth, "[model]")
    from ..modeltext import check_names

    check_names(list(values), model_obj.param_names, "[model] values")
    return MonteCarloSpec(terms=terms, custom=custom, values=values, v_eps=v_eps, gap=gap, x0=x0,
                          excitation_kind=kind, excitation_settings=settings, excitation_file=efile,
                          channels=channels, noise=noise, fit=fit, draws=draws, seed=seed)


def check_work(n_items: int, samples: float, what: str) -> None:
    """Refuse a batch whose items x samples exceed ``NLID_BATCH_MAX_SAMPLES``.

    Parameters
    ----------
    n_items : int
        Items to compute.
    samples : float
        Samples all of them fit, summed.
    what : str
        How the batch is named in the message.

    Raises
    ------
    ModelSpecError
        Naming the product, the limit and the setting.
    """
    from ..limits import budget

    limit = budget(MAX_SAMPLES_ENV)
    assert limit is not None
    if samples > limit:
        raise ModelSpecError(f"{what}: {n_items} items fitting {samples:.3g} samples in all is more work than a batch"
                             f" may ask for ({limit:.3g} samples; an administrator can raise the limit with"
                             f" {MAX_SAMPLES_ENV}); use fewer items or shorter records")


# ----------------------------------------------------------------------------- entry points


def parse_spec(text: str, *, source: str = "batch spec", base_dir: str | Path = ".", stem: str = "batch",
               files: bool = True, outside: bool = False) -> BatchSpec:
    """Parse and check a batch specification.

    Parameters
    ----------
    text : str
        The TOML text.
    source : str
        Its name, for messages.
    base_dir : str or path
        Directory that relative file paths are read from (the spec file's).
    stem : str
        Default study name.
    files : bool
        False refuses every reference to a file (a grid's records, an excitation ``file``) before
        looking at the file system: for specs typed by someone who may not read the server's files.
    outside : bool
        Let file patterns and paths reach outside ``base_dir`` (refused by default). Patterns visit
        at most ``NLID_GLOB_MAX_ENTRIES`` directory entries either way.

    Returns
    -------
    BatchSpec

    Raises
    ------
    ModelSpecError
        Not TOML, too large, an unknown kind or key, a bad value; the message names the table and key.
    DataValidationError
        A record or force file that does not exist.
    """
    if not isinstance(text, str):
        raise ModelSpecError(f"`text` must be a string; got {type(text).__name__}")
    if len(text.encode("utf-8", "replace")) > MAX_SPEC_BYTES:
        raise ModelSpecError(f"{source} is larger than {MAX_SPEC_BYTES // 1000} kB")
    data = read_toml(text, source)
    if "kind" not in data:
        raise ModelSpecError(f"{source}: give `kind` ({' or '.join(repr(k) for k in KINDS)})")
    kind = _string(data["kind"], "", "kind", limit=64)
    if kind not in KINDS:
        raise ModelSpecError(f"`kind` must be {' or '.join(repr(k) for k in KINDS)}; got {kind!r}")
    if kind == "grid" and not files:
        raise ModelSpecError(f"{source}: a grid reads record files on the server, so it runs from the command line"
                             " (`python -m nlid_core batch SPEC.toml`); here give a Monte Carlo spec"
                             " (kind = \"monte_carlo\")")
    _unknown(data, _TOP[kind], "")
    study = _string(data["study"], "", "study", limit=100) if "study" in data else None
    if study is not None:
        from ..store.studies import validate_name

        validate_name(study, "study")
    description = _string(data.get("description", ""), "", "description", limit=10_000)
    base = Path(base_dir)
    sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
    common: dict[str, Any] = {"kind": kind, "study": study, "description": description, "source": source,
                              "stem": stem, "text": text, "sha256": sha}
    if kind == "grid":
        return BatchSpec(**common, grid=_grid(data, base, outside))
    return BatchSpec(**common, monte_carlo=_monte_carlo(data, base, files, outside))


def load_spec(path: str | Path, *, outside: bool = False) -> BatchSpec:
    """Read and parse a batch specification file (relative paths inside are read from its directory).

    Parameters
    ----------
    path : str or path
        The ``.toml`` file.
    outside : bool
        Let its file patterns reach outside its folder (see :func:`parse_spec`).

    Returns
    -------
    BatchSpec

    Raises
    ------
    ModelSpecError
        Unreadable, too large, or a bad spec (see :func:`parse_spec`).
    """
    p = Path(path)
    try:
        if p.stat().st_size > MAX_SPEC_BYTES:
            raise ModelSpecError(f"spec file {p.name} is larger than {MAX_SPEC_BYTES // 1000} kB")
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelSpecError(f"cannot read the spec file {p.name}: {exc}") from None
    return parse_spec(text, source=f"spec file {p.name}", base_dir=p.resolve().parent, stem=p.stem, outside=outside)
