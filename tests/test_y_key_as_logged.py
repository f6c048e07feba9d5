"""`--y-key` given the key as the log names it, the one `summary` prints as the run's validation or score key
(`val-core/gsm8k/acc/mean@1`, `critic/score/mean`, a W&B export's `eval/gsm8k/acc`), said "no metric
'val-core/gsm8k/acc/mean@1' (has entropy, score, val/gsm8k)": the table's name of that key is fitted and
forecast now. A key the run does not log is still one error line."""

from __future__ import annotations

import json
import math

import pytest

from entropylaw.cli.main import main


def _log(path):
    with open(path, "w") as f:
        for s in range(1, 61):
            h = 0.05 + 1.2 * math.exp(-s / 20)
            data = {"actor/entropy": h, "critic/score/mean": 0.9 - 0.2 * math.exp(h) + 0.01 * math.sin(s)}
            if s % 5 == 0:
                data["val-core/gsm8k/acc/mean@1"] = 0.88 - 0.2 * math.exp(h) + 0.01 * math.cos(s)
            f.write(json.dumps({"step": s, "data": data}) + "\n")
    return path


@pytest.mark.parametrize("logged, table_name", [("val-core/gsm8k/acc/mean@1", "val/gsm8k"),
                                                ("critic/score/mean", "score")])
def test_fit_and_forecast_take_the_logs_own_key(tmp_path, capsys, logged, table_name):
    log = _log(tmp_path / "run.jsonl")
    assert main(["fit", str(log), "--y-key", logged, "--json"]) == 0
    [fit] = json.loads(capsys.readouterr().out)["fits"]
    assert fit["y_key"] == table_name, fit["y_key"]
    assert main(["forecast", str(log), "--y-key", logged, "--json", "--n-boot", "20"]) == 0
    [fc] = json.loads(capsys.readouterr().out)
    assert fc["target_key"] == table_name, fc["target_key"]


def test_a_key_the_run_does_not_log_is_still_refused(tmp_path, capsys):
    log = _log(tmp_path / "run.jsonl")
    assert main(["forecast", str(log), "--y-key", "val-core/math/acc/mean@1", "--n-boot", "20"]) == 2
    err = capsys.readouterr().err
    assert "no metric 'val-core/math/acc/mean@1' (has entropy, score, val/gsm8k; read from the log's names:" in err, err
    assert "val/gsm8k from val-core/gsm8k/acc/mean@1, either name selects it)" in err, err
