"""Two files of other formats with one name are two runs, not a resume; a restart inside one CSV
supersedes, at a step it logs again, only the keys it logs there (an evaluation it leaves empty stands)."""

from __future__ import annotations

import entropylaw as el
from entropylaw.api.reading import row_accounts

SUPERSEDED = "superseded by resumed segment"


def _accounts(df):
    return {a["source"].rsplit("/", 1)[-1]: a for a in row_accounts(df)}


def test_a_csv_and_a_console_log_of_one_stem_stay_two_runs(tmp_path):
    # a CSV of one run (steps 1..20) and a veRL console log of another (steps 1..30), other values
    (tmp_path / "runA.csv").write_text("step,entropy,reward\n" + "".join(
        f"{s},{1.0 / s:.4f},{0.01 * s:.4f}\n" for s in range(5, 21)))
    (tmp_path / "runA.log").write_text("".join(
        f"step:{s} - actor/entropy:{0.5 / s:.4f} - critic/score/mean:{0.02 * s:.4f}\n" for s in range(1, 31)))
    df = el.load(tmp_path, warn=False)
    assert sorted(el.run_ids(df)) == ["runA", "runA-2"]
    sizes = {r: len(el.table.series(df, r, "entropy")) for r in el.run_ids(df)}
    assert sorted(sizes.values()) == [16, 30]  # every value of each file kept, in its own run
    accounts = _accounts(df)
    assert all(a["rows_dropped"] == 0 and a["rows_kept"] == a["rows_read"] for a in accounts.values()), accounts
    assert not any(SUPERSEDED in n or "resumed at step" in n for a in accounts.values() for n in a["notes"])
    notes = accounts["runA.csv"]["notes"]  # the later-starting file says why it is not a segment of the log's run
    assert any(n.startswith(f"not joined with {tmp_path / 'runA.log'}: a wide file beside a verl_console one")
               and "read as a run of its own" in n for n in notes), notes
    assert any("read as 'runA-2'" in n for a in accounts.values() for n in a["notes"])


def test_a_restart_that_leaves_the_evaluation_empty_keeps_the_first_segments_evaluation(tmp_path):
    rows = ["step,loss,entropy,eval_acc"]
    rows += [f"{s},{0.1 * s:.2f},{1.0 / s:.4f},{'15.6' if s == 1 else ''}" for s in range(1, 6)]  # first try
    rows += [f"{s},{0.1 * s:.2f},{1.0 / s:.4f},{'46.2' if s == 10 else ''}" for s in range(1, 13)]  # the rerun
    (tmp_path / "run.csv").write_text("\n".join(rows) + "\n")
    df = el.load(tmp_path / "run.csv", warn=False)
    [run] = el.run_ids(df)
    val = el.table.series(df, run, "val/acc")
    assert val.index.tolist() == [1, 10] and val.round(3).tolist() == [0.156, 0.462]
    assert el.table.series(df, run, "entropy").index.tolist() == list(range(1, 13))
    [account] = row_accounts(df)
    # steps 1..5 logged again: loss and entropy of the first try superseded (10), its evaluation not
    assert account["dropped"] == {SUPERSEDED: 10}, account
    assert account["rows_read"] == 5 * 2 + 1 + 12 * 2 + 1 and account["rows_kept"] == 12 * 2 + 2
    assert any(n.startswith("kept 1 earlier value the later segment does not log again") and "step 1 (eval_acc)" in n
               for n in account["notes"]), account["notes"]


def test_a_step_the_restart_does_not_log_again_is_superseded_whole(tmp_path):
    # logged to step 40 (validated at 35, 40), resumed from 31, logging every 10 steps, validating next at 45
    lines = [f"step:{s} - actor/entropy:{1.0 / s:.4f}" + (f" - val/acc:{0.01 * s:.3f}" if s in (35, 40) else "")
             for s in (30, 35, 40)]
    lines += [f"step:{s} - actor/entropy:{0.9 / s:.4f}" + (" - val/acc:0.500" if s == 45 else "") for s in (31, 45)]
    (tmp_path / "run.log").write_text("\n".join(lines) + "\n")
    df = el.load(tmp_path / "run.log", warn=False)
    [run] = el.run_ids(df)
    assert el.table.series(df, run, "val/acc").index.tolist() == [45]
    assert el.table.series(df, run, "entropy").index.tolist() == [30, 31, 45]
    [account] = row_accounts(df)
    assert account["dropped"] == {SUPERSEDED: 4}, account  # entropy and val/acc at 35 and 40
