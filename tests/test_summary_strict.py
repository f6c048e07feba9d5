"""`summary --strict` ("fail when any run is left out (one lacking a named key, entropy or a score)") printed
its table and exited 0 on a run with no score found, or one whose entropy is NaN throughout: a check of a
sweep's logs before fitting passed them. It fails now, in one line naming what is missing, before the table;
runs that have both still pass."""

from __future__ import annotations

from entropylaw.cli.main import main


def _csv(path, score_column="reward"):
    rows = [f"step,entropy,{score_column}"] + [f"{s},{1 - 0.05 * s},{0.1 + 0.02 * s}" for s in range(1, 21)]
    path.write_text("\n".join(rows) + "\n")
    return path


def test_strict_summary_fails_on_a_run_without_a_score(tmp_path, capsys):
    good, bad = _csv(tmp_path / "good.csv"), _csv(tmp_path / "bad.csv", "pass_rate")
    assert main(["summary", str(good), str(bad)]) == 0  # without --strict: said under the table, exit 0
    assert "bad: no score found among its keys" in capsys.readouterr().out
    assert main(["summary", str(good), str(bad), "--strict"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("entropylaw: error: --strict: not every run has an entropy and a score: "
                                        "bad: no score found among its keys (entropy, pass_rate)"), (out, err)


def test_strict_summary_passes_runs_that_have_both(tmp_path, capsys):
    assert main(["summary", str(_csv(tmp_path / "good.csv")), "--strict"]) == 0
    assert "good" in capsys.readouterr().out
