"""Bad fitting options: one line, exit 2, no traceback (CLI and API)."""

import numpy as np
import pytest

from entropylaw.errors import EntropyLawError
from entropylaw.fit.law import EntropyLawFit
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TABLE = str(ROOT / "data" / "real" / "verl_ppo_qwen2.5-0.5b-instruct_gsm8k_resp512_verl-data.parquet")


@pytest.mark.parametrize("args", [["--score-range", "1,0"], ["--score-range", "abc"], ["--conf", "1.5"],
                                  ["--conf", "0"], ["--n-boot", "0"], ["--n-boot", "-5"], ["--n-boot", "x"]])
def test_bad_fit_options_one_line_exit_2(cli, args):
    out = cli("fit", TABLE, *args)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    last = out.stderr.strip().splitlines()[-1]  # argparse: usage block, then one error line
    assert last.startswith("entropylaw fit: error: argument " + args[0])


@pytest.mark.parametrize("kw", [{"conf": 1.5}, {"conf": 0.0}, {"n_boot": 1, "interval": "block-bootstrap"}])
def test_bad_fit_settings_raise_user_errors(kw):
    H = np.linspace(1.0, 0.1, 20)
    R = 0.8 - 0.2 * np.exp(H)
    with pytest.raises(EntropyLawError):
        EntropyLawFit(**kw).fit(H, R)
