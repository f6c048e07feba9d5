"""The forecast methods' registry is the only list of them, and their interface says the truth.

- every method class of the package is in ``catalog.REGISTRY`` once, under its own name;
- ``core`` names no method: no string literal equal to a method's name, no method class
  imported (it knows them through the registry and the interface only);
- what a method declares it reads, needs and requires is what it reads, needs and requires.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import warnings
from pathlib import Path

import numpy as np
import pytest

from entropylaw.fit import forecast as package
from entropylaw.errors import EntropyLawError
from entropylaw.fit.forecast import catalog
from entropylaw.fit.forecast.core import describe_method
from entropylaw.fit.forecast.core import forecast as forecast_run
from entropylaw.fit.forecast.data import RunData
from entropylaw.fit.forecast.ensemble import Ensemble
from entropylaw.fit.forecast.methods import INPUTS, SERIES, Method
from entropylaw.fit.forecast.prior import PriorMethod

MODULES = [importlib.import_module(f"{package.__name__}.{m.name}") for m in pkgutil.iter_modules(package.__path__)]


def _method_classes() -> list[type]:
    """Every class of the package's modules that is a method (has its own name)."""
    found = {}
    for module in MODULES:
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, Method) and cls is not Method and "name" in vars(cls) \
                    and cls.__module__ == module.__name__:
                found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return list(found.values())


def test_every_method_class_is_registered_once_under_its_name():
    classes = _method_classes()
    assert len(classes) == len(catalog.REGISTRY) and classes
    for cls in classes:
        assert catalog.REGISTRY.get(cls.name) is cls, cls
    # each its own rank from the simplest, stated on its class (the backtest's ties go to the simpler)
    ranks = [cls.simplicity for cls in catalog.REGISTRY.values()]
    assert len(set(ranks)) == len(ranks) and Method.simplicity not in ranks
    assert catalog.SIMPLER[0] == catalog.FALLBACK and sorted(catalog.SIMPLER) == sorted(catalog.REGISTRY)
    assert catalog.ALL_METHODS == list(catalog.REGISTRY)
    # the single methods are the registry less the combinations, in the registry's order
    assert list(catalog.METHODS) == [n for n, m in catalog.REGISTRY.items() if not m.combines()]
    assert set(catalog.ALL_METHODS) - set(catalog.METHODS) == {"prior", "ensemble", "curve-ensemble"}
    assert {catalog.FALLBACK, *catalog.DECISION_BACKUPS} <= set(catalog.METHODS)


def test_each_family_has_a_module_of_its_own():
    by_module = {}
    for cls in catalog.REGISTRY.values():
        by_module.setdefault(cls.__module__.rsplit(".", 1)[1], []).append(cls.name)
    assert by_module == {
        "last_value": ["last-value"], "law": ["law-ceiling", "law+entropy", "law+train"],
        "curve_methods": ["exp-saturation", "power", "sigmoid", "sigmoid-tokens", "joint"],
        "drift": ["logit-drift", "logit-drift+train"], "prior": ["prior"], "ensemble": ["ensemble", "curve-ensemble"]}


def test_core_names_no_method():
    """``forecast()`` has no branch per method: ``core`` holds no method's name, imports no
    method's module and names no method class."""
    tree = ast.parse(Path(package.__file__).with_name("core.py").read_text(encoding="utf-8"))
    literals = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    assert not literals & set(catalog.REGISTRY), literals & set(catalog.REGISTRY)
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    families = {cls.__module__ for cls in catalog.REGISTRY.values()}
    assert not imported & families, imported & families
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert not names & {cls.__name__ for cls in catalog.REGISTRY.values()}


@pytest.mark.parametrize("name", list(catalog.REGISTRY))
def test_declarations_are_known_and_build_takes_what_is_declared(name):
    cls = catalog.REGISTRY[name]
    assert cls.reads <= set(SERIES) and "target" in cls.reads
    assert cls.needs <= set(INPUTS) and cls.requires <= cls.needs
    assert cls.description and describe_method(name) == cls.description
    params = set(inspect.signature(cls.build).parameters) - {"conf", "n_boot", "seed"}
    if "given" not in params:  # an own build() takes exactly what the method needs
        assert params == set(cls.needs)
    else:  # the default build() hands what it needs to the constructor
        assert set(cls.needs) <= set(inspect.signature(cls.__init__).parameters)


def _run(without=()):
    """A validation run logging entropy, a training score and tokens (less ``without``), on
    which every single method runs."""
    ds = np.arange(1, 301.0)
    entropy = 0.05 + 0.6 * np.exp(-ds / 80)
    score = 0.9 - 0.3 * np.exp(entropy) + 0.01 * np.random.default_rng(0).standard_normal(len(ds))
    vs = np.arange(10, 301.0, 10)
    val = 0.85 - 0.3 * np.exp(0.05 + 0.6 * np.exp(-vs / 80)) + 0.005 * np.cos(vs)
    series = {"entropy": dict(entropy_steps=ds, entropy_values=entropy),
              "score": dict(score_steps=ds, score_values=score),
              "tokens": dict(token_steps=ds, token_values=np.full(len(ds), 1000.0))}
    kw = {k: v for name, part in series.items() if name not in without for k, v in part.items()}
    return RunData.from_arrays(vs, val, target_key="val/openai/gsm8k", **kw)


@pytest.mark.parametrize("name", list(catalog.METHODS))
def test_reads_is_what_the_method_reads(name):
    """A method runs on a window holding only what it declares it reads, and not without any
    one of those series."""
    cls = catalog.METHODS[name]
    others = set(SERIES) - {"target"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = cls(n_boot=10).fit(_run(without=others - cls.reads).window(150))
        assert m.ok_, m.reason_
        for series in cls.reads - {"target"}:
            m = cls(n_boot=10).fit(_run(without={series}).window(150))
            assert not m.ok_ and m.reason_, series


def test_a_required_input_decides_the_default_set_only():
    """``prior`` requires prior runs: left out of the default set without them, run (with its
    warning) when named."""
    run = _run()
    assert "prior" not in forecast_run(run, fit_frac=0.5, n_boot=10).methods
    fc = forecast_run(run, fit_frac=0.5, n_boot=10, methods=["prior", "exp-saturation"])
    # the curve the call reads (the decision's method, fitted for it) is shown after those asked for
    assert list(fc.methods) == ["prior", "exp-saturation", fc.decision["method"]] == ["prior", "exp-saturation",
                                                                                      "logit-drift"]
    assert any("a family of 0 finished runs" in w for w in fc.methods["prior"].warnings)


def test_combinations_come_after_their_members_in_the_registry_order():
    fc = forecast_run(_run(), fit_frac=0.5, n_boot=10, methods=["curve-ensemble", "ensemble", "power", "last-value"])
    assert list(fc.methods) == ["power", "last-value", "ensemble", "curve-ensemble", fc.decision["method"]]
    assert set(fc.methods["ensemble"].params["weights"]) <= {"power", "last-value"}


def test_an_ensemble_alone_fits_every_single_method_it_is_handed():
    fc = forecast_run(_run(), fit_frac=0.5, n_boot=10, methods=["ensemble"])
    weights = fc.methods["ensemble"].params["weights"]
    assert len(weights) >= 5 and set(weights) <= set(catalog.METHODS)
    # nothing handed, nothing to weigh: it says so rather than fail
    e = Ensemble(n_boot=10).fit(_run().window(150))
    assert not e.ok_ and "no method" in e.reason_


def test_a_prior_on_an_unknown_base_is_one_clear_error():
    with pytest.raises(EntropyLawError, match=r"prior base 'nope' is not a method \(expected one of last-value"):
        forecast_run(_run(), fit_frac=0.5, n_boot=10, methods=["prior"], prior_base="nope")
    # a name with nothing to look it up in
    with pytest.raises(EntropyLawError, match="prior base 'power' is not a method"):
        PriorMethod(n_boot=10, base="power").fit(_run().window(150))


def test_unknown_method_lists_every_registered_one():
    with pytest.raises(EntropyLawError) as err:
        forecast_run(_run(), fit_frac=0.5, n_boot=10, methods=["x" * 300])
    assert str(err.value).endswith(", ".join(["default", *catalog.ALL_METHODS]) + ")")


def test_a_window_no_method_can_read_names_each_method_and_why():
    """One validation point in the window: every method of the default set says why, in one error."""
    with pytest.raises(EntropyLawError) as err:
        forecast_run(_run(), fit_steps=10, n_boot=10)
    text = str(err.value)
    assert text.startswith("run 'run': no method can forecast from the window")
    for name, cls in catalog.REGISTRY.items():
        if not cls.requires:
            assert f"{name}: " in text, name


def test_the_docstring_table_of_methods_is_the_registry():
    """core's table of methods is generated from REGISTRY: every method, its description, no other."""
    from entropylaw.fit.forecast import core

    rows = [line.split()[0].strip("`") for line in catalog.methods_table().splitlines()
            if line.startswith("``")]
    assert rows == list(catalog.REGISTRY)
    assert "METHODS_TABLE" not in core.__doc__ and catalog.methods_table() in core.__doc__
    for cls in catalog.REGISTRY.values():
        assert cls.description.split()[0] in core.__doc__
