"""fit/forecast --entropy-convention: the logged aggregation converted to token-mean before fitting."""

from __future__ import annotations

import json

import numpy as np
import pytest

import entropylaw.table as table
from entropylaw.cli.main import main
from entropylaw.table.convention import to_token_mean
from entropylaw.errors import EntropyLawError


def _run_table(convention: str):
    """A run whose per-token entropy follows the law R = -0.3 exp(H) + 1.2 exactly, logged as ``convention``."""
    rng = np.random.default_rng(0)
    recs = []
    for s in range(1, 61):
        H = 1.5 * np.exp(-s / 20) + 0.1
        n_seq, lengths = 16, rng.integers(5, 60, 16)
        total = H * lengths.sum()  # token sums of all sequences
        logged = {"token-mean": H, "seq-mean-token-sum": total / n_seq,
                  "seq-mean-token-sum-norm:64": total / (n_seq * 64)}[convention]
        recs += [(s, "entropy", float(logged)), (s, "score", float(-0.3 * np.exp(H) + 1.2)),
                 (s, "response_length", float(lengths.mean()))]
    return table.from_records(recs, run_id="r")


@pytest.mark.parametrize("convention", ["seq-mean-token-sum", "seq-mean-token-sum-norm:64"])
def test_conversion_recovers_the_token_mean(convention):
    want = table.series(_run_table("token-mean"), "r", "entropy")
    got = table.series(to_token_mean(_run_table(convention), convention), "r", "entropy")
    np.testing.assert_allclose(got.to_numpy(), want.to_numpy(), rtol=1e-12)


def test_fit_with_the_convention_recovers_the_law(tmp_path, capsys):
    path = tmp_path / "sum.parquet"
    table.write(_run_table("seq-mean-token-sum"), path)
    assert main(["fit", str(path), "--json", "--entropy-convention", "seq-mean-token-sum"]) == 0
    [fit] = json.loads(capsys.readouterr().out)["fits"]
    assert (fit["a"], fit["b"]) == (pytest.approx(0.3, rel=1e-6), pytest.approx(1.2, rel=1e-6))


@pytest.mark.parametrize("name, problem", [
    ("seq-mean-token-mean", "no mapping to token-mean"),
    ("seq-mean-token-sum-norm", "give the padded response length"),
    ("seq-mean-token-sum-norm:0", "at least 1"),
    ("nonsense", "unknown"),
])
def test_unconvertible_or_unknown_conventions_fail_before_reading(tmp_path, capsys, name, problem):
    code = main(["fit", str(tmp_path / "does-not-exist.csv"), "--entropy-convention", name])
    err = capsys.readouterr().err
    assert code == 2 and problem in err and err.count("\n") == 1


def test_a_run_without_response_length_cannot_be_converted():
    t = table.from_records([(1, "entropy", 3.0), (1, "score", 0.2)], run_id="r")
    with pytest.raises(EntropyLawError, match="no response_length"):
        to_token_mean(t, "seq-mean-token-sum")


def _sum_log(path):
    """A veRL JSON lines log whose entropy is each response's token sum: per token it follows the law exactly."""
    lengths = np.random.default_rng(1).integers(100, 400, 60)
    with open(path, "w") as f:
        for s, n in zip(range(1, 61), lengths):
            H = 1.5 * np.exp(-s / 20) + 0.1
            row = {"step": s, "actor/entropy": float(H * n), "response_length/mean": float(n),
                   "critic/score/mean": float(-0.3 * np.exp(H) + 1.2)}
            if s % 5 == 0:
                row["val-core/gsm8k/acc/mean@1"] = float(-0.3 * np.exp(H) + 1.2)
            f.write(json.dumps(row) + "\n")


def test_watch_takes_the_convention_it_advises(tmp_path, capsys):
    path = tmp_path / "sum.jsonl"
    _sum_log(path)
    watch = ["watch", str(path), "--plain", "--max-refreshes", "1", "--interval", "0.05", "--n-boot", "10"]
    assert main(watch) == 0
    out = " ".join(capsys.readouterr().out.split())  # lines wrap where the temporary path makes them long
    # the advice names the option watch has, not the API's parameter
    assert "law not fitted yet" in out and "convert it with --entropy-convention" in out, out
    assert main([*watch, "--entropy-convention", "seq-mean-token-sum"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "R = -0.3 exp(H) + 1.2 " in out and "not fitted" not in out, out


def test_watch_refuses_a_bad_convention_at_once(tmp_path, capsys):
    path = tmp_path / "sum.jsonl"
    _sum_log(path)
    code = main(["watch", str(path), "--plain", "--max-refreshes", "3", "--interval", "0.05",
                 "--entropy-convention", "nonsense"])
    err = capsys.readouterr().err
    assert code == 2 and "--entropy-convention nonsense: unknown" in err and err.count("\n") == 1
