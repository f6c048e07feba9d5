"""``--y-key`` names a score by the log's own name for a key the reader renamed (a custom log's
``gsm8k_acc``, read as the benchmark's ``val/gsm8k``), not only by the name as read: before, ``--y-key
gsm8k_acc`` said "no metric 'gsm8k_acc' (has entropy, score, val/gsm8k)", the user's name nowhere in it.
A name that matches neither says the keys as read and the log's names they were read from."""

import json

import numpy as np
import pytest
from conftest import run_main

import entropylaw as el

pytestmark = pytest.mark.printed


def _h(s):
    return 1.0 * np.exp(-s / 40) + 0.1


def _log(tmp_path, kind):
    """A custom loop's log: entropy and reward every step, ``gsm8k_acc`` every 5 steps (an evaluation)."""
    rows = [{"step": s, "policy_entropy": round(_h(s), 4), "reward": round(0.6 - 0.3 * _h(s), 4),
             **({"gsm8k_acc": round(0.75 - 0.4 * _h(s), 4)} if s % 5 == 0 else {})} for s in range(1, 121)]
    if kind == "jsonl":
        path = tmp_path / "run.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        path = tmp_path / "run.csv"
        path.write_text("step,policy_entropy,reward,gsm8k_acc\n" + "".join(
            f"{r['step']},{r['policy_entropy']},{r['reward']},{r.get('gsm8k_acc', '')}\n" for r in rows))
    return path


@pytest.mark.parametrize("kind", ["jsonl", "csv"])
def test_the_logs_own_name_selects_the_key_it_was_read_as(tmp_path, capsys, kind):
    path = _log(tmp_path, kind)
    df = el.load(path, warn=False)
    assert "val/gsm8k" in set(df["metric"]) and "gsm8k_acc" not in set(df["metric"])
    docs = {}
    for name in ("gsm8k_acc", "val/gsm8k"):
        code, out, err = run_main(capsys, "forecast", path, "--fit-frac", "0.3", "--n-boot", "30", "--y-key", name,
                                  "--json")
        assert code == 0, err
        docs[name] = json.loads(out)[0]
    assert docs["gsm8k_acc"]["target_key"] == "val/gsm8k" and docs["gsm8k_acc"]["target_kind"] == "validation"
    assert docs["gsm8k_acc"]["final"] == docs["val/gsm8k"]["final"]
    # the training score by the log's `reward`, as by `score`
    assert el.forecast(df, y_key="reward", fit_frac=0.3, n_boot=30).target_key == "score"


@pytest.mark.parametrize("kind", ["jsonl", "csv"])
def test_a_name_that_matches_nothing_lists_the_keys_as_read_and_where_they_came_from(tmp_path, capsys, kind):
    path = _log(tmp_path, kind)
    code, out, err = run_main(capsys, "forecast", path, "--fit-frac", "0.3", "--y-key", "gsm8k_accuracy")
    assert code != 0 and "Traceback" not in err and out == ""
    assert err.endswith(f"entropylaw: error: run {path.parent.name!r}: no metric 'gsm8k_accuracy' (has entropy, score, "
                        "val/gsm8k; read from the log's names: entropy from policy_entropy, score from reward, "
                        "val/gsm8k from gsm8k_acc, either name selects it)"), err


def test_a_table_built_in_code_has_no_renaming_to_say():
    t = el.table.from_records([(s, m, 0.5) for s in range(1, 5) for m in ("entropy", "val/gsm8k")], run_id="r")
    with pytest.raises(el.errors.EntropyLawError) as err:
        el.forecast(t, y_key="gsm8k_acc")
    assert str(err.value) == "run 'r': no metric 'gsm8k_acc' (has entropy, val/gsm8k)"


def test_a_benchmark_named_without_its_prefix_finds_its_validation_key():
    from entropylaw.fit.pairing import score_key

    t = el.table.from_records([(s, m, 0.5) for s in range(1, 5) for m in ("entropy", "val/gsm8k")], run_id="r")
    assert score_key(t, "r", "gsm8k") == "val/gsm8k" and score_key(t, "r", "val/gsm8k") == "val/gsm8k"
    with pytest.raises(el.errors.EntropyLawError):
        score_key(t, "r", "math")
