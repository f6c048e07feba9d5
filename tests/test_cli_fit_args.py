"""Bad fitting options: one line, exit 2, no traceback (CLI and API)."""

import numpy as np
import pytest

from entropylaw.errors import EntropyLawError
from entropylaw.fit.law import EntropyLawFit
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TABLE = str(ROOT / "data" / "real" / "verl_ppo_qwen2.5-0.5b-instruct_gsm8k_resp512_verl-data.parquet")


@pytest.mark.parametrize("args", [["--score-range", "1,0"], ["--score-range", "abc"], ["--conf", "1.5"],
                                  ["--conf", "0"], ["--n-boot", "0"], ["--n-boot", "-5"], ["--n-boot", "x"],
                                  ["--seed", "-1", "--interval", "block-bootstrap"], ["--seed", "1.5"]])
def test_bad_fit_options_one_line_exit_2(capsys, args):
    from entropylaw.cli.main import main

    with pytest.raises(SystemExit) as stop:  # argparse refuses before any input is read
        main(["fit", TABLE, *args])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "usage:" not in err
    # one line, the same prefix as every other error
    assert err.strip().splitlines() == [err.strip()]
    assert err.startswith(f"entropylaw: error: fit: argument {args[0]}: ")


@pytest.mark.parametrize("kw", [{"conf": 1.5}, {"conf": 0.0}, {"n_boot": 1, "interval": "block-bootstrap"}])
def test_bad_fit_settings_raise_user_errors(kw):
    H = np.linspace(1.0, 0.1, 20)
    R = 0.8 - 0.2 * np.exp(H)
    with pytest.raises(EntropyLawError):
        EntropyLawFit(**kw).fit(H, R)
