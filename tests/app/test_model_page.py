"""The Model page: terms and parameter table from the registry, typed (custom) terms."""

from __future__ import annotations

from app_support import state
from nlid_core.terms import REGISTRY

from .test_pages import go, with_example


def _param_table(at):
    return next(d.value for d in at.dataframe if "parameter" in d.value.columns and "fixed" in d.value.columns)


def test_terms_and_parameters_come_from_the_registry():
    at = with_example()
    go(at, "model")
    assert at.multiselect(key=state.MODEL_TERMS).options == [f"{n}: {t.expr}" for n, t in REGISTRY.items()]
    at.multiselect(key=state.MODEL_TERMS).set_value(["m0", "c1", "fc", "k1"]).run()
    assert not at.exception
    table = _param_table(at)
    assert table["parameter"].tolist() == ["m0", "c1", "fc", "v_eps", "k1"]
    v_eps = table[table["parameter"] == "v_eps"].iloc[0]
    assert bool(v_eps["fixed"]) and v_eps["unit"] == "m/s" and v_eps["term"] == "fc"
    cfg = at.session_state[state.CONFIG]
    assert cfg.params["v_eps"].value == cfg.settings.v_eps and not cfg.params["v_eps"].vary


def test_a_typed_term_joins_the_model_with_its_parameter():
    at = with_example()
    go(at, "model")
    at.text_area(key=state.MODEL_CUSTOM).set_value("asym=ka*x*abs(x)").run()
    assert not at.exception and not at.error
    assert "asym" in at.multiselect(key=state.MODEL_TERMS).value
    table = _param_table(at)
    ka = table[table["parameter"] == "ka"].iloc[0]
    assert ka["unit"] == "N/m^2" and ka["term"] == "asym"
    cfg = at.session_state[state.CONFIG]
    assert cfg.custom == (("asym", "ka*x*abs(x)"),) and "asym" in cfg.terms
    assert "ka" in cfg.model.param_names and "ka" in cfg.model.equation()
    assert any("ka" in m.value for m in at.markdown if "Equation" in m.value)


def test_a_hostile_expression_is_refused_and_the_model_stays():
    at = with_example()
    go(at, "model")
    at.text_area(key=state.MODEL_CUSTOM).set_value("asym=ka*x*abs(x)").run()
    before = at.session_state[state.CONFIG]
    for text in ("evil=__import__('os').system('x')", "__import__('os').system('x')", "bad=ka*("):
        at.text_area(key=state.MODEL_CUSTOM).set_value(text).run()
        assert not at.exception
        assert at.error and "Custom terms" in at.error[0].value
        after = at.session_state[state.CONFIG]
        assert (after.terms, after.custom, after.params) == (before.terms, before.custom, before.params)


def test_teaching_with_a_setting_parameter_in_the_true_system():
    at = go(with_example(), "teaching")
    at.selectbox(key=state.TEACH_SYSTEM).set_value("System D").run()  # Coulomb friction, named at the reveal
    assert not at.exception
    assert any("Predicted relative standard errors" in m.value for m in at.markdown)
