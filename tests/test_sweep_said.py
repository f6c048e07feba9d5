"""Runs of one recipe forecast together pool their take-off climb rates: each run's forecast
changes with the runs read beside it. Before, that was said only inside a paragraph (forecast),
not at all (rank, watch), and watch could not forecast a sweep's run alone: the output now says
it first, which runs, and how to forecast each alone."""

from __future__ import annotations

import os

from _takeoff_logs import takeoff_lines

from entropylaw.cli.main import main


def _printed_logs(folder, rates=(0.030, 0.034, 0.038, 0.027), steps=200):
    """Printed logs of one recipe: a take-off from 0.05, each run at its own rate."""
    folder.mkdir(parents=True, exist_ok=True)
    for i, rate in enumerate(rates):
        lines = takeoff_lines(rate, steps, seed=i, noisy_entropy=True, clip_reward=True)
        (folder / f"run{i}.log").write_text("\n".join(lines) + "\n")
    return folder


def _said(capsys, *argv) -> tuple[str, str]:
    assert main(list(argv)) == 0
    out = capsys.readouterr().out
    return out.splitlines()[0], " ".join(out.split())


def test_forecast_and_rank_say_first_that_the_runs_were_forecast_as_one_sweep(tmp_path, capsys):
    folder = _printed_logs(tmp_path / "sweep")
    pooled = "run0, run1, run2, run3 share a take-off climb rate, each run's learned from the others' (not its own)"
    for command in ("forecast", "rank"):
        first, out = _said(capsys, command, str(folder), "--fit-frac", "0.5", "--n-boot", "40")
        assert first.startswith("forecast as one sweep (accuracy in "), (command, first)
        assert pooled in out and "--no-sweep forecasts each alone" in out, (command, out)
        first, out = _said(capsys, command, str(folder), "--fit-frac", "0.5", "--n-boot", "40", "--no-sweep")
        assert "one sweep" not in out and "this sweep" not in out, (command, out)
    # three runs: each run's own text, the same line first
    three = _printed_logs(tmp_path / "three", rates=(0.030, 0.034, 0.038))
    first, out = _said(capsys, "forecast", str(three), "--fit-frac", "0.5", "--n-boot", "40")
    assert first.startswith("forecast as one sweep") and "run0, run1, run2 share a take-off climb rate" in out
    # one log alone: no sweep, nothing said
    _first, out = _said(capsys, "forecast", str(folder / "run0.log"), "--fit-frac", "0.5", "--n-boot", "40")
    assert "one sweep" not in out


def test_watch_says_its_run_is_forecast_with_its_sweep_and_forecasts_it_alone_with_no_sweep(tmp_path, capsys):
    folder = _printed_logs(tmp_path / "sweep")
    for age, name in ((300, "run0"), (200, "run1"), (100, "run2")):  # run3 written last: the one followed
        path = folder / f"{name}.log"
        os.utime(path, (path.stat().st_atime, path.stat().st_mtime - age))
    args = ["watch", str(folder), "--plain", "--max-refreshes", "1", "--interval", "0.1",
            "--n-boot", "40"]
    _first, out = _said(capsys, *args)
    assert ("forecast as one sweep (accuracy in " in out
            and "run3, run0, run1, run2 share a take-off climb rate" in out), out
    _first, alone = _said(capsys, *args, "--no-sweep")
    assert "one sweep" not in alone and "its sweep's rate" not in alone
    # alone, its call is the one forecast makes on its log alone
    _first, own = _said(capsys, "forecast", str(folder / "run3.log"), "--n-boot", "40")
    gain = own.split("gain (")[1].split(" points")[0]
    assert gain in alone, (gain, alone)


def test_forecast_and_rank_of_some_runs_of_a_sweep_pool_them_with_the_others(tmp_path, capsys):
    """`forecast DIR --run X` read X alone: its take-off was no longer pooled with its sweep's climb rates, and the
    forecast changed with nothing said. X is now X's part of `forecast DIR` (as `watch DIR --run X`); the other
    runs are read, not shown, and the rows a left-out run's file lost are not said."""
    folder = _printed_logs(tmp_path / "sweep", rates=(0.030, 0.035, 0.040))
    with open(folder / "run0.log", "a") as f:  # a row run0 loses: said of run0 only
        f.write("step 200 | loss 0.1 | reward nan | entropy 0.3\n")
    opts = ["--fit-frac", "0.4", "--n-boot", "40"]
    assert main(["forecast", str(folder), *opts]) == 0
    whole = capsys.readouterr().out
    block = whole[whole.index("run run1:"):whole.index("run run2:")].strip()
    assert main(["forecast", str(folder), "--run", "run1", *opts]) == 0
    out, err = capsys.readouterr()
    assert block in out and "forecast with 2 other runs of this sweep" in block, out
    assert "run run0:" not in out and "run run2:" not in out and "run0.log" not in err, err
    first, ranked = _said(capsys, "rank", str(folder), "--run", "run1", "--run", "run2", *opts)
    assert first.startswith("forecast as one sweep (") and "2 runs ranked" in ranked, ranked
    _, alone = _said(capsys, "forecast", str(folder), "--run", "run1", "--no-sweep", *opts)
    assert "this sweep" not in alone
    assert main(["forecast", str(folder), "--run", "run9", *opts]) == 2
    assert "no run 'run9' among the 3 runs" in capsys.readouterr().err
