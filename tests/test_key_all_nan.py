"""A log printing its reward (or its entropy) on every line, every value NaN: the values are dropped as non-finite
(counted), and with them the key. The run then read as one that never logged it: `fit` said "no score key
(expected val/<bench>, val/mean or score; has entropy)", `--score-key reward` said "'reward' not found; available
keys: entropy", and `summary` "no score found among its keys". Each now says the key holds no number."""

from __future__ import annotations

import numpy as np

import entropylaw as el
from entropylaw.cli.main import main


def _log(path, nan_key):
    lines = []
    for s in range(1, 41):
        values = {"entropy": 1.2 * np.exp(-s / 20) + 0.1, "reward": 0.8 - 0.5 * np.exp(-s / 15)}
        values[nan_key] = float("nan")
        lines.append(f"step {s} | " + " | ".join(f"{k} {v:.4f}" for k, v in values.items()))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_score_all_nan_is_said_as_such_not_as_no_score_key(tmp_path, capsys):
    log = _log(tmp_path / "run.log", "reward")
    said = "'reward', the run's score, holds no number: all 40 of its values are NaN or inf (dropped)"
    for argv in (["fit", str(log)], ["forecast", str(log), "--n-boot", "20"], ["rank", str(log), "--n-boot", "20"],
                 ["fit", str(log), "--score-key", "reward"]):
        assert main(argv) == 2, argv
        err = " ".join(capsys.readouterr().err.split())
        assert "holds no number: all 40 of its values are NaN or inf" in err and "not found" not in err, (argv, err)
        assert "no score key" not in err and "Traceback" not in err, (argv, err)
    assert main(["summary", str(log)]) == 0
    assert said in " ".join(capsys.readouterr().out.split())
    account = el.row_accounts(el.load(str(log), warn=False))[0]
    assert said in account["notes"] and account["dropped"] == {"non-finite value": 40}


def test_an_entropy_all_nan_is_said_as_such(tmp_path, capsys):
    log = _log(tmp_path / "run.log", "entropy")
    assert main(["fit", str(log)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "no entropy to pair the scores with: 'entropy', the run's entropy, holds no number: all 40" in err, err
    # a key that is no score nor entropy (a gradient norm all NaN) is dropped as before, nothing said of it
    path = tmp_path / "grad.log"
    path.write_text("".join(f"step {s} | entropy {1.2 * np.exp(-s / 20) + 0.1:.4f} | reward "
                            f"{0.8 - 0.5 * np.exp(-s / 15):.4f} | grad_norm nan\n" for s in range(1, 41)))
    assert not any("holds no number" in n for n in el.row_accounts(el.load(str(path), warn=False))[0]["notes"])
