"""A functional form whose shape sits at its bound, or with absurd coefficients, is flagged
and never the winner."""

import numpy as np
import pytest

from entropylaw.fit.forms import SHAPE_BOUNDS, compare_forms, fit_form, flag, winner


def test_shape_at_its_bound_is_flagged_and_never_wins():
    H = np.linspace(0.05, 1.0, 60)
    # exp(40 H): steeper than the exp-free search range (c <= 20) allows
    R = 0.9 - 1e-9 * np.exp(40 * H) + 0.0005 * np.sin(np.arange(60))
    fit = fit_form("exp-free", H, R)
    assert fit["c"] == pytest.approx(SHAPE_BOUNDS["exp-free"][1], rel=1e-3)
    assert "at the bound" in fit["flag"]
    table = compare_forms(H, R)
    assert table.loc["exp-free", "aic"] == table["aic"].min()  # it would have won by AIC alone
    assert winner(table)["aic"] != "exp-free" and winner(table)["bic"] != "exp-free"


def test_absurd_coefficients_are_flagged():
    assert "exceed" in flag("exp", 3731.0, 3731.5, None, [0.2, 0.5])
    assert flag("exp", 0.3, 0.9, None, [0.2, 0.5]) == ""
    # a clean law fit is not flagged and still wins
    H = np.linspace(1.2, 0.05, 40)
    R = 0.8 - 0.25 * np.exp(H) + 0.002 * np.sin(np.arange(40))
    table = compare_forms(H, R)
    assert table.loc["exp", "flag"] == "" and winner(table)["aic"] == "exp"


def test_every_form_flagged_means_no_winner():
    import pandas as pd

    t = pd.DataFrame({"aic": [1.0, 2.0], "bic": [1.0, 2.0], "flag": ["x", "y"]}, index=["exp", "linear"])
    assert winner(t) == {"aic": None, "bic": None}
