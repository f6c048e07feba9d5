"""The runs of one file (a CSV's ``run`` column, a W&B chart export's ``<run> - <key>`` columns) each keep
their own row account: every command printed the file's warning once per run, the same words twice
(``runs.csv: dropped 1 of 6 values`` for each of its 2 runs), and never the file's own 2 of 12. One line
per file now, its counts the sum of its runs'."""

from __future__ import annotations

from pathlib import Path

from entropylaw.cli.main import main


def _warnings(err: str, name: str) -> list[str]:
    """The warnings about file ``name``, each joined back from its wrapped lines."""
    said = " ".join(err.split()).split("entropylaw: ")
    return ["entropylaw: " + w.strip() for w in said if w.startswith(f"warning: {name}")]


def test_a_csv_of_two_runs_says_its_losses_once(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a short name: a path longer than a line is folded at its slashes
    csv = Path("runs.csv")
    csv.write_text("run,step,entropy,reward\n" + "".join(
        f"{run},{s},{'x' if (run, s) == ('a', 2) else 1 - 0.1 * s},{'y' if (run, s) == ('b', 3) else 0.1 * s}\n"
        for run in "ab" for s in range(1, 6)))
    assert main(["summary", str(csv)]) == 0
    lines = _warnings(capsys.readouterr().err, str(csv))
    assert lines == [f"entropylaw: warning: {csv}: dropped 2 of 20 values (non-numeric value: 2)"], lines


def test_a_wandb_chart_export_of_two_runs_says_its_envelope_once(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a short name: a path longer than a line is folded at its slashes
    csv = Path("entropy.csv")
    head = ['"Step"'] + [f'"{r} - actor/entropy{s}"' for r in ("runA", "runB") for s in ("", "__MIN", "__MAX")]
    rows = [",".join([str(s)] + [str(1 - 0.01 * s)] * 6) for s in range(1, 11)]
    csv.write_text("\n".join([",".join(head), *rows]) + "\n")
    assert main(["summary", str(csv)]) == 0
    lines = _warnings(capsys.readouterr().err, str(csv))
    assert lines == [f"entropylaw: warning: {csv}: dropped 40 of 60 values (W&B __MIN/__MAX envelope: 40)"], lines
