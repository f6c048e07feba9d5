"""A TRL run resumed from a checkpoint: its first W&B segment recorded steps past the checkpoint
that the resumed run repeated with the same values but new timings. It is still the same run
(merged with trainer_state.json); a real difference in a value keeps two runs."""

from __future__ import annotations

from entropylaw import table
from entropylaw.readers.merge import merge_same_runs
from entropylaw.readers.accounts import IngestReport


def _piece(records, source, fmt):
    df = table.from_records(records, run_id="r", source=source)
    report = IngestReport(source, format=fmt)
    report.read(len(df))
    report.keep(len(df))
    return df, report


def _runs(pieces):
    return [(df, rep) for df, rep in merge_same_runs(pieces) if len(df)]


def _records(steps, time_offset=0.0, entropy_at=None):
    out = []
    for s in steps:
        h = 1.0 / (s + 1) if entropy_at is None or s != entropy_at else 0.123
        out += [(s, "entropy", h), (s, "step_time", 10.0 + s + time_offset),
                (s, "profiling/Time taken: GRPOTrainer.compute_loss", 0.5 + time_offset)]
    return out


def test_first_segment_with_other_timings_merges():
    state = _piece(_records(range(0, 21)), "trainer_state.json", "trl")  # steps 0..20, the resumed values
    # first W&B segment: steps 0..12, run stopped at 12 and resumed from checkpoint 10: steps 11, 12
    # were executed twice; their values agree, their timings do not
    first = _records(range(0, 11)) + _records(range(11, 13), time_offset=3.0)
    wandb = _piece(first, "run-1.wandb", "wandb_offline")
    [(df, rep)] = _runs([state, wandb])
    assert table.series(df, "r", "entropy").index.tolist() == list(range(21))
    # the kept timings at the repeated steps are trainer_state's (the later execution)
    assert table.series(df, "r", "step_time").loc[12] == 22.0
    w = wandb[1]
    assert w.rows_kept == 0 and w.rows_dropped == 13 * 3  # every W&B cell is also in trainer_state.json
    assert any("values agree at 13 common points" in n for n in w.notes)  # the entropy; timings not compared


def test_a_value_that_differs_keeps_two_runs():
    state = _piece(_records(range(0, 21)), "trainer_state.json", "trl")
    other = _piece(_records(range(0, 13), entropy_at=11), "run-1.wandb", "wandb_offline")
    assert len(_runs([state, other])) == 2


def test_timings_alone_are_no_evidence_of_one_run():
    state = _piece([(s, "step_time", 1.0) for s in range(5)], "trainer_state.json", "trl")
    other = _piece([(s, "step_time", 1.0) for s in range(5)], "run-1.wandb", "wandb_offline")
    assert len(_runs([state, other])) == 2


def test_identical_bookkeeping_repeats_are_not_counted_other_repeats_are():
    """HF's W&B rows repeat train/global_step and train/epoch with the same value: not data, not
    counted; a bookkeeping key at a new value, or any other key twice, is a counted drop."""
    import pandas as pd

    from entropylaw.readers.resumes import REPEATED, resolve_resumes
    from entropylaw.readers.accounts import IngestReport

    rows = [(1, "train/global_step", 1.0), (1, "loss", 0.5), (1, "train/global_step", 1.0),  # identical: uncounted
            (1, "train/epoch", 0.1), (1, "train/epoch", 0.1), (1, "epoch", 0.1), (1, "epoch", 0.1),
            (2, "train/epoch", 0.2), (2, "train/epoch", 0.25),  # a new value: counted
            (2, "loss", 0.4), (2, "loss", 0.4)]  # not bookkeeping: counted even when equal
    df = pd.DataFrame(rows, columns=["step", "key", "value"])
    report = IngestReport("w.wandb")
    report.read(len(rows))
    out = resolve_resumes(df, report)
    report.keep(len(out))
    assert out.values.tolist() == [[1, "loss", 0.5], [1, "train/global_step", 1.0], [1, "train/epoch", 0.1],
                                   [1, "epoch", 0.1], [2, "train/epoch", 0.25], [2, "loss", 0.4]]
    assert report.rows_read == len(rows) - 3 and dict(report.dropped) == {REPEATED: 2} and report.balanced()
    assert any("not counted as rows: epoch x1, train/epoch x1, train/global_step x1" in n for n in report.notes)


def test_a_run_read_from_its_table_and_its_log_merges_and_the_mean_it_computed_counts_against_neither(tmp_path):
    """A veRL log with two benchmarks gets ``val/mean`` rows computed, in no count: read beside the
    table `ingest` made of it (every row counted), the log's rows are all "also in" the table and
    its account still adds up (it raised an internal error: it was asked to drop the mean's rows too)."""
    import entropylaw as el

    from conftest import run_cli

    root = tmp_path
    lines = [f"step:{s} - actor/entropy:{0.9 / s ** 0.3:.4f} - critic/score/mean:{0.01 * s:.4f}"
             + (f" - val-core/openai/gsm8k/reward/mean@1:{0.02 * s:.4f} - val-core/math/reward/mean@1:{0.01 * s:.4f}"
                if s % 5 == 0 else "") for s in range(1, 41)]
    (root / "run.log").write_text("\n".join(lines) + "\n")
    assert run_cli("ingest", str(root / "run.log"), "-o", str(root / "run.parquet")).returncode == 0
    one = el.load(str(root / "run.log"), warn=False)
    assert "val/mean" in set(one["metric"].astype(str))  # computed: the log has two benchmarks
    both = el.load(str(root / "run.parquet"), str(root / "run.log"), warn=False)
    assert both["run_id"].nunique() == 1
    log = next(a for a in el.row_accounts(both) if a["source"].endswith("run.log"))
    assert log["rows_read"] == log["rows_kept"] + log["rows_dropped"] and log["rows_kept"] == 0, log
    assert log["dropped"] == {f"also in {root / 'run.parquet'}": log["rows_read"]}
