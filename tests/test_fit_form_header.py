"""`fit --form linear` (or power, exp-free) printed the law's formula over its table, "R = -a*exp(H) + b (linear)",
while it fitted R = -a*H + b; its figure's legend named the ceiling "b - a" where the form's ceiling is b. Each
form's own model and ceiling are said now."""

from __future__ import annotations


import numpy as np
import pytest
from conftest import verl_log

import entropylaw as el
from entropylaw.cli.main import main


@pytest.mark.parametrize("form, model", [("exp", "R = -a*exp(H) + b (exp);"), ("linear", "R = -a*H + b (linear);"),
                                         ("exp-free", "R = -a*exp(c*H) + b (exp-free);"),
                                         ("power", "R = -a*H^c + b (power);")])
def test_the_table_is_headed_by_the_form_fitted(tmp_path, capsys, form, model):
    assert main(["fit", str(verl_log(tmp_path / "run.jsonl")), "--form", form]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert head.startswith(model), head


def test_a_linear_forms_ceiling_is_b_in_its_figure():
    import matplotlib
    matplotlib.use("Agg")
    H = np.linspace(1.2, 0.1, 40)
    R = 0.7 - 0.3 * H + 0.005 * np.sin(np.arange(40))
    for form, said in (("linear", "ceiling b = "), ("exp", "ceiling b - a = ")):
        fit = el.EntropyLawFit(form=form).fit(H, R)
        ax = fit.plot()
        labels = ax.get_legend_handles_labels()[1]
        assert any(label.startswith(said) for label in labels), (form, labels)
