"""`entropylaw demo` (what `make demo` runs): one screen on the shipped runs."""

from pathlib import Path

from conftest import run_cli

# the demo's numbers are compared under another BLAS kernel set by its golden (test_golden.py, demo.txt);
# these check its screen and what it writes

ROOT = Path(__file__).resolve().parents[1]


def test_demo_is_one_screen_and_writes_the_report(tmp_path):
    out = run_cli("demo", str(ROOT / "data" / "real"), str(ROOT / "data" / "real-sizes"), "--out", "report",
                  cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) <= 60 and max(map(len, lines)) <= 120
    assert not any(line.endswith("~") for line in lines)  # nothing cut at the edge
    report = tmp_path / "report" / "report.html"
    assert report.is_file() and "report/report.html" in out.stdout and "python3 -m webbrowser" in out.stdout
    text = out.stdout
    assert "Read 25 runs" in text and "gain to go" in text and "undecided" in text and "entropylaw forecast" in text
    assert "stop paying" not in text and "entropylaw rank" in text
    assert "32B" in text and "refused" in text  # the size series: the law's coefficients are refused, and why
    assert "a, b vs size: refused: the law describes 2 sizes (360M, 1.31B); the coefficient law needs 3" in text
    rows = [ln for ln in lines if ln[:2].strip().isdigit()]
    assert len(rows) == 25 and all(" val " in r for r in rows[:11]) and all(" train " in r for r in rows[11:])
    assert out.stderr == ""


def test_demo_full_tables():
    out = run_cli("demo", "--full", "data/real-sizes")
    assert out.returncode == 0, out.stderr
    # each run's forecast as `entropylaw forecast` prints it (Forecast has one text: str())
    assert sum(line.startswith("run ") and ": forecasting " in line for line in out.stdout.splitlines()) == 5
    assert out.stdout.count("  call: ") == 5 and "stop paying" not in out.stdout


def test_demo_outside_the_clone_says_where_its_runs_are(tmp_path):
    """Run where there is no data/ (pip-installed, another folder): "data/real: no such file or
    directory" named a folder the user never gave, not what the demo reads."""
    out = run_cli("demo", "--no-report", cwd=tmp_path)
    assert out.returncode == 2 and out.stdout == ""
    [line] = out.stderr.splitlines()
    assert "data" in line and "the demo reads the runs shipped in the repository's data/" in line and "INPUT" in line


def test_a_long_note_is_wrapped_not_cut_and_the_law_columns_question_mark_is_explained(tmp_path):
    """`demo --no-report` cut a note mid-word ("... if it i~", the flag's words being longer than the
    API's name it had been measured by) and showed `?` in the law column with no word on it."""
    for name, entropy in (("good", "entropy"), ("noent", "ent_tok")):
        lines = []
        for s in range(1, 101):
            lines.append(f"step {s} | loss 0.1 | reward {0.8 - 0.5 * 0.97 ** s:.4f} | {entropy} {0.05 + 0.97 ** s:.4f}")
            if s % 5 == 0:
                lines.append(f"eval step {s} | accuracy {0.7 - 0.4 * 0.97 ** s + 0.002 * (s % 3):.4f}")
        (tmp_path / f"{name}.log").write_text("\n".join(lines) + "\n")
    out = run_cli("demo", str(tmp_path), "--no-report")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert max(map(len, lines)) <= 120 and not any("~" in ln for ln in lines), out.stdout
    assert "if it is logged under another name" in " ".join(out.stdout.split())
    assert any(" ? " in ln for ln in lines if ln.lstrip().startswith("2 noent"))
    assert "? = no law fit" in out.stdout
