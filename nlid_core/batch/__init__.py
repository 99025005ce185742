"""Batch work: many identifications from one spec file, computed in parallel, stored in a study, resumable.

``python -m nlid_core batch SPEC.toml`` (:mod:`nlid_core.cli.batch`) runs a
spec of one of two kinds: a **grid** of record files times model variants,
or a **Monte Carlo** study of a test design (true model, excitation, noise,
N draws from a base seed). Items run on local processes, a Dask cluster or
serially (:func:`nlid_core.runners.runner`) with the same results;
each finished item is stored as a run of the study (:mod:`nlid_core.store`)
under a stable item key, so an interrupted batch resumes where it stopped.

Modules: :mod:`.spec` (the TOML format, parsed and bounded) and :mod:`.run`
(items, their computation, the study, resume, summaries). The format is
documented with complete examples in ``docs/batch.md``.
"""

from __future__ import annotations

from .run import (
    SPEC_LABEL,
    BatchProgress,
    BatchResult,
    BatchStatus,
    GridRow,
    MonteCarloSummary,
    ParameterCoverage,
    batch_status,
    item_seed,
    run_batch,
    run_spec_text,
    summarize_monte_carlo,
)
from .spec import KINDS, BatchSpec, Variant, load_spec, parse_spec

__all__ = [
    "KINDS",
    "SPEC_LABEL",
    "BatchSpec",
    "Variant",
    "BatchProgress",
    "BatchResult",
    "BatchStatus",
    "GridRow",
    "MonteCarloSummary",
    "ParameterCoverage",
    "load_spec",
    "parse_spec",
    "run_batch",
    "run_spec_text",
    "batch_status",
    "item_seed",
    "summarize_monte_carlo",
]
