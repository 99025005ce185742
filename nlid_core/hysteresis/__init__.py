"""Hysteretic systems: the Bouc-Wen benchmark's estimation data, test signals and figure of merit."""

from __future__ import annotations

from .benchmark import (
    BENCHMARK_TERMS,
    README_FLOORS_M,
    TRUE_VALUES,
    BenchmarkScore,
    TestSignals,
    benchmark_estimation_records,
    benchmark_model,
    evaluate_benchmark,
    load_test_signals,
    random_phase_multisine,
    simulate_accurately,
    true_parameters,
)

__all__ = [
    "BENCHMARK_TERMS", "README_FLOORS_M", "TRUE_VALUES", "BenchmarkScore", "TestSignals",
    "benchmark_estimation_records", "benchmark_model", "evaluate_benchmark", "load_test_signals",
    "random_phase_multisine", "simulate_accurately", "true_parameters",
]
