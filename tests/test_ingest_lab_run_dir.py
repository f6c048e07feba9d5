"""A lab run directory is read as one run (its JSONL; the CSV copy and bookkeeping JSON are not re-read)."""

import json

from entropylaw.readers.dispatch import detect_format, load


def test_lab_run_dir_reads_as_one_run_with_lab_metadata(tmp_path, cli):
    out = tmp_path / "r1"
    made = cli("lab", "run", "--size", "xs", "--steps", "3", "--seed", "0", "--out", str(out),
               "--no-progress", "--set", "sft_steps=5")
    assert made.returncode == 0, made.stderr
    assert detect_format(out) == "lab_run"
    df, reports = load([str(out)])
    assert df["run_id"].nunique() == 1 and len(reports) == 1
    assert reports[0].balanced() and reports[0].rows_dropped == 0
    assert df["model"].iloc[0] == "lab-xs" and df["n_params_nonembedding"].iloc[0] > 0
    # independent read of the JSONL: every logged number is in the table once
    lines = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines() if x.strip()]
    n_values = sum(len([v for v in rec["data"].values() if isinstance(v, (int, float))]) for rec in lines)
    assert reports[0].rows_read == n_values
    summary = cli("summary", str(out))
    assert summary.returncode == 0, summary.stderr
    assert "lab-xs" in summary.stdout or "xs-grpo-none-s0" in summary.stdout
