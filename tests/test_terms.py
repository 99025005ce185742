"""Contract test over every registered term (and typed ones): one test, every implementation.

For each term: the compiled program against the term's symbolic expressions evaluated independently
(sympy's own numeric evaluation), every partial derivative against central finite differences of the
compiled values, units consistent with the expressions, steady values consistent with the state
equations, the equation-error regressors against the force, the specialised single-DOF kernel against
the general program, and the library package against the registry (adding a term is one module plus
its registry line: this test picks it up).
"""

from __future__ import annotations

import importlib
import pkgutil

import numpy as np
import pytest

from nlid_core.terms.fast_kernel import accel
from nlid_core.errors import ModelSpecError
from nlid_core.models import TermModel
from nlid_core.terms import REGISTRY, custom_term, parse_custom
from nlid_core.terms.base import TermDef
from nlid_core.terms.expr import parse_expression, symbol
from nlid_core.terms.units import FORCE, Dim, format_unit, infer_units
from nlid_core.terms.vm import evaluate_program

CUSTOM = (
    custom_term("asym", "ka*x*abs(x)"),
    custom_term("fric", "F*tanh(v/ve) + cv*v"),
    custom_term("inert", "mx*x**2*a + kx*sin(x/ell)*ell"),
)
ALL = tuple(REGISTRY.values()) + CUSTOM

#: Sample values per parameter name (away from kinks and singular points).
VALUES = {"v_eps": 0.05, "gap": 0.02, "sigma0": 1e3, "sigma1": 5.0, "sigma2": 0.4, "Fc": 1.0, "Fs": 1.5,
          "vs": 0.3, "alpha": 20.0, "beta": 3.0, "gamma": 0.8, "delta": -0.4, "nu": 1.3, "ve": 0.1, "ell": 0.5}


def _theta(term: TermDef, rng: np.random.Generator) -> np.ndarray:
    return np.array([VALUES.get(p.name, rng.uniform(0.5, 2.0)) for p in term.params])


def _points(term: TermDef, rng: np.random.Generator, n: int = 12) -> np.ndarray:
    """Rows of program inputs (x, v, z..., θ...) away from x, v, z = 0 and from |x| = gap."""
    theta = _theta(term, rng)
    rows = []
    for _ in range(n):
        x = rng.choice([-1, 1]) * rng.uniform(0.05, 0.4)
        v = rng.choice([-1, 1]) * rng.uniform(0.05, 0.6)
        z = rng.choice([-1, 1], term.n_states) * rng.uniform(1e-3, 2e-3, term.n_states)
        rows.append(np.r_[x, v, z, theta])
    return np.array(rows)


def _run(prog, rows):  # type: ignore[no-untyped-def]
    return evaluate_program(prog.op, prog.a, prog.b, prog.dst, prog.registers, prog.outputs, np.ascontiguousarray(rows))


@pytest.fixture(params=ALL, ids=lambda t: t.name)
def term(request) -> TermDef:  # type: ignore[no-untyped-def]
    return request.param  # type: ignore[no-any-return]


def test_compiled_program_matches_the_symbolic_expressions(term: TermDef) -> None:
    import sympy

    rng = np.random.default_rng(1)
    rows = _points(term, rng)
    out = _run(term.program, rows)
    sym = term.symbolic
    exprs = [sym["force0"]] + ([sym["mass"]] if term.inertial else []) + list(sym["rates"])
    bs = term.block_size
    for k, e in enumerate(exprs):
        f = sympy.lambdify(term.inputs, e, modules="numpy")
        ref = np.array([float(f(*r)) for r in rows])
        np.testing.assert_allclose(out[:, k * bs], ref, rtol=1e-12, atol=1e-12, err_msg=f"{term.name} block {k}")


def test_every_partial_derivative_matches_finite_differences(term: TermDef) -> None:
    rng = np.random.default_rng(2)
    rows = _points(term, rng, 6)
    out = _run(term.program, rows)
    bs = term.block_size
    nblocks = out.shape[1] // bs
    for j in range(rows.shape[1]):
        h = 1e-6 * max(abs(rows[0, j]), 1e-3)
        up, dn = rows.copy(), rows.copy()
        up[:, j] += h
        dn[:, j] -= h
        fd = (_run(term.program, up) - _run(term.program, dn)) / (2 * h)
        for b in range(nblocks):
            an = out[:, b * bs + 1 + j]
            num = fd[:, b * bs]
            scale = max(np.max(np.abs(num)), np.max(np.abs(an)), 1e-12)
            assert np.max(np.abs(an - num)) <= 1e-5 * scale + 1e-9, (term.name, b, str(term.inputs[j]))


def test_units_follow_from_the_expressions(term: TermDef) -> None:
    dims = term.dims()
    syms = {symbol(n): d for n, d in dims.items() if d is not None}
    assert all(p.unit is not None for p in term.params) or term.custom, "library parameters declare units"
    force = term.symbolic["force"]
    for p in term.params:
        if p.unit is None:
            continue
        known = {s: d for s, d in syms.items() if s != symbol(p.name)}
        got = infer_units(force, known, {symbol(p.name)}, FORCE)
        if symbol(p.name) in got:
            assert got[symbol(p.name)] == p.unit, (term.name, p.name, format_unit(got[symbol(p.name)]))
    for s, rate in zip(term.states, term.symbolic["rates"], strict=True):
        target = s.unit - Dim.of(t=1)
        for p in term.params:
            if p.unit is None or not rate.has(symbol(p.name)):
                continue
            known = {k: d for k, d in syms.items() if k != symbol(p.name)}
            got = infer_units(rate, known, {symbol(p.name)}, target)
            if symbol(p.name) in got and not (term.name == "bouc_wen" and p.name in ("beta", "gamma", "delta")):
                assert got[symbol(p.name)] == p.unit, (term.name, s.name, p.name)


def test_steady_values_are_fixed_points_of_the_state_equations(term: TermDef) -> None:
    if not term.states:
        pytest.skip("no internal state")
    rng = np.random.default_rng(3)
    theta = _theta(term, rng)
    prog = term.steady_program
    for v in (0.0, 0.2, -0.5):
        z = _run(prog, np.array([[0.1, v, *theta]]))[0]
        out = _run(term.program, np.array([[0.1, v, *z, *theta]]))[0]
        first_rate = term.block_size * (2 if term.inertial else 1)
        rates = out[first_rate :: term.block_size][: term.n_states]
        steady_in_motion = any(parse_expression(s.steady).has(symbol("v")) for s in term.states)
        if v == 0.0 or steady_in_motion:
            np.testing.assert_allclose(rates, 0.0, atol=1e-9 * max(1.0, abs(v)), err_msg=f"{term.name} v={v}")


def test_regressors_reproduce_the_force_of_memoryless_terms(term: TermDef) -> None:
    if term.states:
        assert term.linear_params == ()
        return
    model = TermModel((term.name,), custom=[term] if term.custom else [])
    rng = np.random.default_rng(4)
    theta = _theta(term, rng)
    x, v, a = rng.normal(size=(3, 50))
    phi = model.regressors(x, v, a, theta)
    lin = model.linear_mask
    assert lin.any(), "every memoryless term has a coefficient equation error can estimate"
    np.testing.assert_allclose(phi[:, lin] @ theta[lin] + model.offset_force(theta, x, v, a),
                               model.force(theta, x, v, a), rtol=1e-12, atol=1e-12)
    assert np.all(phi[:, ~lin] == 0.0)


def test_fast_kernel_agrees_with_the_general_program(term: TermDef) -> None:
    """The generated fast kernel (every memoryless library term) gives the general program's acceleration,
    its partials and its parameter partials, which the sensitivities of the fast simulator are made of."""
    names = ("m0", term.name) if term.name != "m0" else ("m0",)
    model = TermModel(names, custom=[term] if term.custom else [])
    if model.fast_terms is None:
        assert term.states or term.custom, f"`{term.name}` is memoryless but not in the generated fast kernel"
        pytest.skip("internal states or typed: the general layer runs it")
    rng = np.random.default_rng(5)
    theta = model.default_parameters({n: VALUES.get(n, 1.3) for n in model.param_names}).values
    p = theta.size
    work = np.zeros((2, p + 2))
    for x, v in rng.uniform(-0.5, 0.5, size=(10, 2)):
        a, dadx, dadv, mass = accel(x, v, 0.7, theta, model.fast_terms, True, work)
        ydot, jy, jp, masses, code = model.linearise(np.array([x, v]), theta, np.array([0.7]))
        assert code == 0
        np.testing.assert_allclose([ydot[1], jy[1, 0], jy[1, 1], masses[0]], [a, dadx, dadv, mass], rtol=1e-12,
                                   atol=1e-12)
        np.testing.assert_allclose(-(work[0, :p] + a * work[1, :p]) / mass, jp[1], rtol=1e-12, atol=1e-12)


def test_op_source_is_apply() -> None:
    """The source form of every instruction (what the fast kernel is generated from) gives what the program
    evaluator computes, bit for bit, on ordinary operands, zeros of both signs, ties, infinities and NaN."""
    from numba import njit

    from nlid_core.terms import vm

    vals = [0.0, -0.0, 1.5, -2.25, 3.0, 1e-300, -1e300, np.inf, -np.inf, np.nan]
    for code, text in vm.OP_SOURCE.items():
        src = f"def f(u, w):\n    return {text.format(u='u', w='w')}\n"
        scope = {"np": np, "power": vm.power, "TINY": vm.TINY}
        exec(src, scope)  # noqa: S102 - the project's own table, compiled the way the generated module is
        f = njit(error_model="numpy")(scope["f"])
        for u in vals:
            for w in vals:
                with np.errstate(all="ignore"):
                    want, got = vm.apply(code, u, w), f(u, w)
                assert (want == got and np.signbit(want) == np.signbit(got)) or (np.isnan(want) and np.isnan(got)), \
                    (code, text, u, w, want, got)


def test_generated_fast_kernel_is_current() -> None:
    """The committed fast kernel is what the generator makes of today's library."""
    from nlid_core.terms import fastgen

    assert fastgen.is_current(), "run python -m nlid_core.terms.fastgen"


def test_every_library_module_is_registered() -> None:
    import nlid_core.terms.library as lib

    found = []
    for info in pkgutil.iter_modules(lib.__path__):
        mod = importlib.import_module(f"{lib.__name__}.{info.name}")
        found.append(mod.TERM)
    assert {t.name for t in found} == set(REGISTRY)
    assert all(REGISTRY[t.name] is t for t in found)


@pytest.mark.parametrize(
    "text,where",
    [
        ("__import__('os').system('id')", "__import__"),
        ("x.__class__", "__class__"),
        ("ka*x**1000", "x**1000"),
        ("ka*[x][0]", "Subscript"),
        ("ka*x if x > 0 else 0", "IfExp"),
        ("ka*(lambda: x)()", "only the functions"),
        ("k*x;import os", "not a valid expression"),
        ("ka*x*" * 600 + "x", "characters long"),
        ("ka*x*abs(x, v)", "takes 1 argument"),
        ("ka*x + k\u00e4*v", "not allowed"),
        ("ka * a * a", "linear in the acceleration"),
        ("3*x", "no parameter"),
    ],
)
def test_bad_typed_terms_get_specific_errors(text: str, where: str) -> None:
    with pytest.raises(ModelSpecError, match=None) as info:
        custom_term("t", text)
    assert where in str(info.value), str(info.value)


def test_typed_term_names_and_specs_are_checked() -> None:
    with pytest.raises(ModelSpecError, match="library term"):
        custom_term("k3", "a1*x")
    with pytest.raises(ModelSpecError, match="letters and digits"):
        custom_term("my-term", "a1*x")
    with pytest.raises(ModelSpecError, match="NAME=EXPRESSION"):
        parse_custom(["ka*x"])
    with pytest.raises(ModelSpecError, match="defined twice"):
        parse_custom(["t=a1*x", "t=a2*x"])
    (t,) = parse_custom(["asym=ka*x*abs(x)"])
    assert t.param_names == ("ka",) and t.unit("ka") == "N/m^2" and t.linear_params == ("ka",)


def test_program_cache_round_trip_and_refuses_damaged_files(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from nlid_core.terms import cache, custom

    monkeypatch.setenv("NLID_PROGRAM_CACHE", str(tmp_path))
    custom._MEMO.clear()
    first = custom_term("cached", "kc*x*abs(x) + cv*tanh(v/ve)")
    fresh = first.program  # derived with sympy by the vetting worker and stored
    files = sorted(tmp_path.glob("*.npz"))
    assert len(files) == 2  # under the typed text's key (vetting) and under the term's own key
    for path in files:
        loaded = cache.load(path.stem)
        assert loaded is not None and loaded["linear"] == first.linear_params and loaded["inertial"] is False
        for field in ("registers", "op", "a", "b", "dst", "outputs"):
            np.testing.assert_array_equal(getattr(loaded["program"], field), getattr(fresh, field))
        # an index out of range would read outside the register file in the compiled evaluator: refused
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k].copy() for k in z.files}
        arrays["program_dst"][0] = 10**6
        np.savez(path, **arrays)
        assert cache.load(path.stem) is None
        path.write_bytes(b"not a zip file")
        assert cache.load(path.stem) is None
    custom._MEMO.clear()
    rebuilt = custom_term("cached", "kc*x*abs(x) + cv*tanh(v/ve)").program  # recompiled and rewritten
    np.testing.assert_array_equal(rebuilt.op, fresh.op)
    assert all(cache.load(p.stem) is not None for p in files)
    monkeypatch.setenv("NLID_PROGRAM_CACHE", "off")
    assert cache.cache_dir() is None


def test_long_sums_are_accepted_and_deep_nesting_is_not() -> None:
    t = custom_term("poly", "+".join(f"k{i}*x**{i % 12}*abs(v)" for i in range(7)) + "+" + "+".join(["c*v"] * 100))
    assert set(t.param_names) == {f"k{i}" for i in range(7)} | {"c"}
    with pytest.raises(ModelSpecError, match="nesting deeper"):
        custom_term("deep", "k*" + "(" * 70 + "x" + ")" * 70 + "+" + "tanh(" * 70 + "x" + ")" * 70)
