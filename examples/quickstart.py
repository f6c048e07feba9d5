"""The notebook path: load the shipped real runs, fit one, forecast it, plot both.

    .venv/bin/python examples/quickstart.py [OUT_DIR]

Run by the test suite (tests/test_api.py); the README shows the same five lines.
"""

import sys
import warnings
from pathlib import Path

import entropylaw as el

ROOT = Path(__file__).resolve().parents[1]
out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(".")

with warnings.catch_warnings():
    warnings.simplefilter("ignore", el.EntropyLawWarning)  # 20 runs: some fits are weak, on purpose
    df = el.load(ROOT / "data" / "real")
    print(el.summary(df)[["run_id", "steps", "val", "val_last"]].head(6).to_string(index=False))
    fit = el.fit(df, run="verl_ppo_qwen2.5-0.5b-instruct_gsm8k_resp512_verl-data")
    print(fit)                                    # a, b, ceiling with intervals, R², trust flag
    fc = el.forecast(df, run=fit.run_id_, fit_frac=0.15, n_boot=100)
    print(fc)                                     # what `entropylaw forecast` prints: the window, every method, the decision
    print(el.fits_frame(el.fit_all(df, skip_errors=True))[["run_id", "ceiling", "trust"]].to_string(index=False))

fit.plot().figure.savefig(out / "quickstart_fit.png", dpi=100, bbox_inches="tight")
fc.plot().figure.savefig(out / "quickstart_forecast.png", dpi=100, bbox_inches="tight")
print(fit.to_lmfit().params["a"].stderr == fit.a_stderr_)  # lmfit result carries this fit's covariance
