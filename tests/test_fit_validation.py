"""Library-side checks of the interval level, the bootstrap size and the horizon (one-line errors)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from entropylaw.errors import EntropyLawError
from entropylaw.fit.algorithms import AlgorithmTest
from entropylaw.fit.early import EarlyPrediction
from entropylaw.fit.law import EntropyLawFit
from entropylaw.fit.scaling import SizeLaw

BAD_CONF = [0, 1, 1.5, -0.2, float("nan"), "0.9"]


def _run(n=40, seed=0):
    rng = np.random.default_rng(seed)
    steps = np.arange(n) * 10
    H = 0.05 + np.exp(-steps / 120)
    return pd.DataFrame({"step": steps, "H": H, "R": 0.9 - 0.3 * np.exp(H) + 0.01 * rng.standard_normal(n)})


@pytest.mark.parametrize("n_boot", [0, 1, -5, 2.5, True, None])
def test_fit_rejects_too_few_bootstrap_resamples(n_boot):
    p = _run()
    with pytest.raises(EntropyLawError, match="n_boot"):
        EntropyLawFit(interval="block-bootstrap", n_boot=n_boot, warn=False).fit(p.H, p.R)


def test_two_resamples_is_the_smallest_usable_bootstrap():
    p = _run()
    f = EntropyLawFit(interval="block-bootstrap", n_boot=2, warn=False).fit(p.H, p.R)
    assert np.isfinite(f.ceiling_stderr_) and np.all(np.isfinite(f.cov_))


@pytest.mark.parametrize("conf", BAD_CONF)
def test_every_fitter_rejects_a_level_outside_0_1(conf):
    p = _run()
    with pytest.raises(EntropyLawError, match="strictly between 0 and 1"):
        EntropyLawFit(conf=conf, warn=False).fit(p.H, p.R)
    with pytest.raises(EntropyLawError, match="strictly between 0 and 1"):
        EarlyPrediction(fit_frac=0.3, conf=conf, warn=False).fit(p)
    with pytest.raises(EntropyLawError, match="strictly between 0 and 1"):
        SizeLaw(conf=conf).fit([1e9, 3e9, 7e9], [0.1, 0.2, 0.3], [0.8, 0.9, 1.0])
    with pytest.raises(EntropyLawError, match="strictly between 0 and 1"):
        AlgorithmTest(conf=conf).fit({"g": p, "r": _run(seed=1)}, {"g": "grpo", "r": "rloo"})


def test_level_changes_the_interval_as_the_t_quantile_says():
    # independent check that conf reaches the interval: half-widths scale as t(0.5 + conf/2, n - 2)
    from scipy import stats

    p = _run()
    w = {c: np.diff(EntropyLawFit(conf=c, warn=False).fit(p.H, p.R).ceiling_ci_)[0] for c in (0.5, 0.99)}
    ratio = stats.t.ppf(0.995, len(p) - 2) / stats.t.ppf(0.75, len(p) - 2)
    assert w[0.99] / w[0.5] == pytest.approx(ratio, rel=1e-9)


@pytest.mark.parametrize("steps", [0, -10])
def test_horizon_must_be_positive(steps):
    with pytest.raises(EntropyLawError, match="`predict_steps` must be positive"):
        EarlyPrediction(fit_steps=60, predict_steps=steps, warn=False).fit(_run())


def test_size_law_error_names_the_api_parameters_and_the_cli_its_flags():
    from entropylaw.cli.main import build_parser
    from entropylaw.cli.options import in_flags

    with pytest.raises(EntropyLawError) as err:
        SizeLaw().fit([1e9, np.nan, 7e9], [0.1, 0.2, 0.3], [0.8, 0.9, 1.0], labels=["a", "b", "c"])
    msg = str(err.value)
    assert "run b" in msg and "`params` N" in msg and "`config` config.json" in msg  # the API's words
    # on the command line, the same message names real options of `entropylaw ingest`
    ingest = build_parser()._subparsers._group_actions[0].choices["ingest"]
    said = in_flags(msg, ingest)
    assert "--params N" in said and "--config config.json" in said and "`" not in said


def test_a_level_given_as_text_is_told_it_is_not_a_number():
    """`conf="0.9"` was told "the interval level must lie strictly between 0 and 1": 0.9 does."""
    import entropylaw as el
    from entropylaw import table

    p = _run()
    with pytest.raises(EntropyLawError, match=r"^conf = '0.9': expected a number strictly between 0 and 1, e.g. "
                                              r"0.95 \(got a str\)$"):
        EntropyLawFit(conf="0.9", warn=False).fit(p.H, p.R)
    df = table.from_records([(int(s), "entropy", h) for s, h in zip(p.step, p.H)]
                            + [(int(s), "val/gsm8k", r) for s, r in zip(p.step, p.R)], run_id="r")
    with pytest.raises(EntropyLawError, match="expected a number strictly between 0 and 1"):
        el.fit(df, "r", conf="0.9")
