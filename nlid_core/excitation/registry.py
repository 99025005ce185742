"""The registry of excitation kinds, ``EXCITATIONS``, and :func:`make_excitation`, which dispatches by name."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping

from ..errors import ModelSpecError
from .multisine import schroeder_multisine
from .signal import Excitation
from .stepped import stepped_amplitude, stepped_sine
from .sweeps import linear_chirp, log_chirp

EXCITATIONS: Mapping[str, Callable[..., Excitation]] = {
    "linear_chirp": linear_chirp,
    "log_chirp": log_chirp,
    "schroeder_multisine": schroeder_multisine,
    "stepped_sine": stepped_sine,
    "stepped_amplitude": stepped_amplitude,
}


def make_excitation(kind: str, settings: Mapping[str, object] | None = None) -> Excitation:
    """Build an excitation by generator name.

    Parameters
    ----------
    kind : str
        A key of ``EXCITATIONS``: ``linear_chirp``, ``log_chirp``, ``schroeder_multisine``,
        ``stepped_sine`` or ``stepped_amplitude``.
    settings : mapping or None
        The generator's arguments by name (units as in the generator, e.g. ``f0_hz`` in Hz,
        ``amplitude_n`` in N, ``duration_s`` in s). For ``stepped_amplitude``, ``base`` may be an
        Excitation or a mapping ``{"kind": ..., "settings": {...}}`` built by this function.

    Returns
    -------
    Excitation

    Raises
    ------
    ModelSpecError
        Unknown ``kind`` (the message lists the valid ones), unknown or missing settings (named, with
        the valid ones), or a setting out of range.
    """
    if not isinstance(kind, str) or kind not in EXCITATIONS:
        raise ModelSpecError(f"unknown excitation `kind` {kind!r}; valid kinds are {', '.join(EXCITATIONS)}")
    if settings is not None and not isinstance(settings, Mapping):
        raise ModelSpecError(f"`settings` must be a mapping of argument names to values, got {type(settings).__name__}")
    values = dict(settings or {})
    generator = EXCITATIONS[kind]
    params = inspect.signature(generator).parameters
    unknown = sorted(set(values) - set(params))
    if unknown:
        raise ModelSpecError(
            f"unknown `settings` for {kind}: {', '.join(unknown)}; valid settings are {', '.join(params)}"
        )
    missing = [name for name, p in params.items() if p.default is inspect.Parameter.empty and name not in values]
    if missing:
        raise ModelSpecError(f"missing `settings` for {kind}: {', '.join(missing)}")
    if kind == "stepped_amplitude" and isinstance(values["base"], Mapping):
        base_spec = values["base"]
        extra = sorted(set(base_spec) - {"kind", "settings"})
        if "kind" not in base_spec or extra:
            raise ModelSpecError("`base` as a mapping must have the keys `kind` and optionally `settings`")
        base_settings = base_spec.get("settings")
        if base_settings is not None and not isinstance(base_settings, Mapping):
            raise ModelSpecError("`base` settings must be a mapping")
        values["base"] = make_excitation(str(base_spec["kind"]), base_settings)
    return generator(**values)
