"""A live log that states no planned length: the gain and the call run to the step forecast, twice
the steps logged. Before, the output said "step 198: the forecast's last step" and --help "the last
forecast step": which step that is, and why, was unsaid."""

from __future__ import annotations

from _takeoff_logs import takeoff_lines

from entropylaw.cli.main import main


def _live_logs(folder, n_runs=1, steps=100):
    """Printed logs of a run still going (no planned length in them), a take-off from 0.05."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n_runs):
        lines = takeoff_lines(0.030 + 0.004 * i, steps, seed=i)
        (folder / f"run{i}.log").write_text("\n".join(lines) + "\n")
    return folder


def _out(capsys, *argv) -> str:
    assert main(list(argv)) == 0
    return " ".join(capsys.readouterr().out.split())


def test_the_gain_says_which_step_it_runs_to_where_no_plan_is_known(tmp_path, capsys):
    log = _live_logs(tmp_path / "one") / "run0.log"
    out = _out(capsys, "forecast", str(log), "--n-boot", "40")
    assert ("to step 198 adds" in out and "step 198: twice the steps logged: no planned last step is in the log or "
            "its config; give --total-steps N)" in out), out
    out = _out(capsys, "forecast", str(log), "--n-boot", "40", "--horizon", "50")
    assert "step 149: 50 steps past the last logged step: no planned last step" in out
    # a planned length given: the gain runs to it, and nothing is said of the step forecast
    out = _out(capsys, "forecast", str(log), "--n-boot", "40", "--total-steps", "300")
    assert "to step 300 adds" in out and "twice the steps logged" not in out
    # the one-line view of several runs says it under its table
    out = _out(capsys, "forecast", str(_live_logs(tmp_path / "four", n_runs=4)), "--n-boot", "40")
    assert ("to step: twice the steps logged (every run): no planned last step is in the log or its config; give "
            "--total-steps N") in out
    # the help says the default in a user's words
    for command in ("forecast", "watch"):
        try:
            main([command, "--help"])
        except SystemExit:
            pass
        assert "twice the steps logged" in " ".join(capsys.readouterr().out.split()), command
