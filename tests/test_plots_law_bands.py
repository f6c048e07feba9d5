"""plot_law's bands option: which shaded regions are drawn, and that they are the fit's bands."""

import numpy as np
import pytest

from entropylaw.fit.law import EntropyLawFit
from entropylaw.draw.law import plot_law


def _fit():
    H = 0.05 + np.exp(-np.arange(40) / 8)
    R = 0.8 - 0.2 * np.exp(H) + 0.01 * np.sin(np.arange(40))
    return H, R, EntropyLawFit(warn=False).fit(H, R)


@pytest.mark.parametrize("bands, expected", [("both", {"95 % prediction band", "95 % confidence band"}),
                                             ("confidence", {"95 % confidence band"}), ("none", set())])
def test_bands_option_draws_the_requested_bands(bands, expected):
    H, R, fit = _fit()
    ax = plot_law(H, R, fit, bands=bands, numbers=False)
    shaded = {c.get_label() for c in ax.collections if "band" in c.get_label()}
    assert shaded == expected
    for c in ax.collections:
        if c.get_label() == "95 % confidence band":  # the drawn band is the fit's confidence band
            verts = c.get_paths()[0].vertices
            x0 = verts[1, 0]
            lo, hi = fit.confidence_band(np.array([x0]))
            ys = verts[np.isclose(verts[:, 0], x0), 1]
            assert ys.min() == pytest.approx(lo[0], abs=1e-9) and ys.max() == pytest.approx(hi[0], abs=1e-9)


def test_bad_bands_value():
    H, R, fit = _fit()
    with pytest.raises(ValueError):
        plot_law(H, R, fit, bands="prediction")


def test_shared_axes_span_every_run():
    H1, R1, f1 = _fit()
    H2 = H1 * 3.0  # a second run at higher entropy, drawn after the first
    R2 = 0.8 - 0.1 * np.exp(H2)
    f2 = EntropyLawFit(warn=False).fit(H2, R2)
    ax = plot_law(H1, R1, f1, numbers=False, bands="confidence")
    plot_law(H2, R2, f2, ax=ax, numbers=False, bands="confidence")
    lo, hi = ax.get_xlim()
    assert lo < 0 and hi >= H2.max()
