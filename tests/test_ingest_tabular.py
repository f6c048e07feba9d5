"""JSONL, tidy / wide / long CSV and parquet, W&B chart exports."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from entropylaw import table
from entropylaw.errors import EntropyLawError
from entropylaw.readers.common import finalize
from entropylaw.readers.dispatch import detect_format, load
from entropylaw.readers.tabular import read_tabular
from entropylaw.readers.verl_jsonl import read_verl_jsonl

rng = np.random.default_rng(0)


def test_jsonl_round_trip(tmp_path):
    records = [{"step": s, "data": {"actor/entropy": float(h), "critic/score/mean": float(r),
                                    "timing": {"gen": 1.5}}}
               for s, h, r in zip(range(1, 21), rng.random(20), rng.random(20))]
    records[4]["data"]["val/test_score/openai/gsm8k"] = 0.42
    p = tmp_path / "metrics.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    assert detect_format(p) == "verl_jsonl"
    df, [report] = load([str(p)])
    run = df["run_id"].iloc[0]
    assert table.series(df, run, "entropy").tolist() == [r["data"]["actor/entropy"] for r in records]
    assert table.series(df, run, "score").tolist() == [r["data"]["critic/score/mean"] for r in records]
    assert table.series(df, run, "timing/gen").tolist() == [1.5] * 20
    assert table.series(df, run, "val/openai/gsm8k").to_dict() == {5: 0.42}
    assert report.rows_read == report.rows_kept == 61


def test_jsonl_flat_objects_and_bad_lines(tmp_path):
    p = tmp_path / "log.txt"  # no .jsonl suffix: sniffed
    p.write_text('{"step": 1, "actor/entropy": 0.5, "name": "x", "ok": true}\n{"step": 2, "actor/entropy": NaN}\n'
                 "not json\n"
                 '{"actor/entropy": 0.3}\n{"step": 3, "actor/entropy": 0.2}\n')
    assert detect_format(p) == "verl_jsonl"
    [raw] = read_verl_jsonl(p)
    finalize(raw)
    r = raw.report
    assert dict(r.dropped) == {"non-numeric value": 2, "unparseable line": 1, "missing or non-integer step": 1,
                               "non-finite value": 1}
    assert (r.rows_read, r.rows_kept) == (7, 2) and r.balanced()
    assert any(n.startswith("line 3:") for n in r.notes) and any(n.startswith("line 4:") for n in r.notes)
    assert any("line 2 (actor/entropy)" in n for n in r.notes)


def test_tidy_table_round_trip_csv_and_parquet(tmp_path):
    t = table.from_records([(0, "entropy", 0.5), (0, "score", 0.25), (1, "entropy", 0.4)], run_id="r1",
                           model="Qwen2.5-7B", n_params=7e9, algorithm="grpo", entropy_key="actor/entropy")
    for name in ("runs.parquet", "runs.csv"):
        path = table.write(t, tmp_path / name)
        assert detect_format(path) == "table"
        df, [report] = load([str(path)])
        pd.testing.assert_frame_equal(df, t)
        assert report.rows_read == report.rows_kept == 3


def test_wide_csv_with_text_and_bad_cells(tmp_path):
    p = tmp_path / "hist.csv"
    p.write_text("_step,actor/entropy,critic/score/mean,_runtime,note\n"
                 "0,0.5,0.1,3.2,start\n"
                 "1,0.4,,4.0,x\n"
                 "2,oops,0.3,5.0,y\n"
                 ",0.2,0.4,6.0,z\n"
                 "4,inf,0.5,7.0,w\n")
    assert detect_format(p) == "wide"
    [raw] = read_tabular(p)
    t = finalize(raw)
    r = raw.report
    assert dict(r.dropped) == {"non-numeric value": 1, "missing or non-integer step": 2, "non-finite value": 1}
    assert (r.rows_read, r.rows_kept) == (9, 5) and r.balanced()
    assert any("line 4: key 'actor/entropy' has non-numeric value 'oops'" in n for n in r.notes)
    assert any("_runtime (bookkeeping)" in n and "note (text)" in n for n in r.notes)
    assert table.series(t, "hist", "entropy").to_dict() == {0: 0.5, 1: 0.4}
    assert table.series(t, "hist", "score").to_dict() == {0: 0.1, 2: 0.3, 4: 0.5}


def test_wide_parquet_several_runs(tmp_path):
    steps = np.arange(10)
    frames = [pd.DataFrame({"run": name, "global_step": steps, "entropy": rng.random(10), "reward": rng.random(10)})
              for name in ("qwen2.5-0.5b-a", "qwen2.5-0.5b-b")]
    wide = pd.concat(frames, ignore_index=True)
    p = tmp_path / "runs_wide.parquet"
    wide.to_parquet(p)
    assert detect_format(p) == "wide"
    df, reports = load([str(p)])
    assert sorted(df["run_id"].unique()) == ["qwen2.5-0.5b-a", "qwen2.5-0.5b-b"]
    for f in frames:
        name = f["run"].iloc[0]
        assert table.series(df, name, "entropy").tolist() == f["entropy"].tolist()
        assert table.series(df, name, "score").tolist() == f["reward"].tolist()
    assert df["n_params"].iloc[0] == 0.5e9
    assert all(r.rows_read == r.rows_kept == 20 for r in reports)


def test_long_table_tbparse_layout(tmp_path):
    p = tmp_path / "scalars.csv"
    pd.DataFrame({"step": [1, 2, 1], "tag": ["actor/entropy", "actor/entropy", "critic/score/mean"],
                  "value": [0.5, 0.4, 0.2]}).to_csv(p, index=False)
    assert detect_format(p) == "long"
    df, _ = load([str(p)])
    assert table.series(df, tmp_path.name, "entropy").to_dict() == {1: 0.5, 2: 0.4}  # scalars.csv names no run


def test_wandb_chart_export(tmp_path):
    n = 12
    steps = np.arange(0, n * 5, 5)
    a_h, a_r, b_h = rng.random(n), rng.random(n), rng.random(n)
    cols = {"Step": steps,
            "grpo-qwen2.5-7b - actor/entropy": a_h,
            "grpo-qwen2.5-7b - actor/entropy__MIN": a_h - 0.01,
            "grpo-qwen2.5-7b - actor/entropy__MAX": a_h + 0.01,
            "grpo-qwen2.5-7b - critic/score/mean": a_r,
            "ppo-run - actor/entropy": np.where(steps < 30, b_h, np.nan)}
    p = tmp_path / "wandb_export_2025.csv"
    pd.DataFrame(cols).to_csv(p, index=False)  # NaN -> empty cell, as W&B writes it
    assert detect_format(p) == "wandb_csv"
    df, reports = load([str(p)])
    assert sorted(df["run_id"].unique()) == ["grpo-qwen2.5-7b", "ppo-run"]
    # the CSV holds repr-exact decimals: values come back exactly
    assert table.series(df, "grpo-qwen2.5-7b", "entropy").tolist() == a_h.tolist()
    assert table.series(df, "grpo-qwen2.5-7b", "score").tolist() == a_r.tolist()
    assert table.series(df, "ppo-run", "entropy").to_dict() == dict(zip(steps[steps < 30].tolist(),
                                                                        b_h[steps < 30].tolist()))
    ra = next(r for r in reports if r.rows_dropped)
    assert dict(ra.dropped) == {"W&B __MIN/__MAX envelope": 2 * n} and ra.balanced()
    assert df[df["run_id"] == "grpo-qwen2.5-7b"]["model"].iloc[0] == "grpo-qwen2.5-7b"


@pytest.mark.parametrize("content, message", [
    ("epoch,actor/entropy\n1,0.5\n", r"no step column \(expected one of step, _step"),
    ("", "empty file"),
    ("step,actor/entropy\n", "header but no rows"),
])
def test_bad_tables(tmp_path, content, message):
    p = tmp_path / "bad.csv"
    p.write_text(content)
    with pytest.raises(EntropyLawError, match=re.escape(str(p)) + ".*" + message):
        load([str(p)])


def test_jsonl_numbers_written_as_text_and_other_step_axes(tmp_path):
    """A writer that formats its numbers ("1.1172", a step "3") is read, and said; W&B's
    ``_step`` and another step key (``eval_step``) beside the step are axes, not metrics: they
    were read as metrics and averaged, which inflated the account's "averaged" count."""
    p = tmp_path / "m.jsonl"
    p.write_text('{"step": "1", "_step": 0, "actor/entropy": "1.1172", "_runtime": 3.5}\n'
                 '{"step": 1, "_step": 1, "actor/entropy": 0.9}\n'
                 '{"step": 2, "_step": 2, "eval_step": 1, "actor/entropy": " 8e-1 ", "val/acc": "0.25"}\n'
                 '{"step": 3, "_step": 3, "actor/entropy": "about 0.7"}\n')
    [raw] = read_verl_jsonl(p)
    finalize(raw)
    r = raw.report
    assert (r.rows_read, r.rows_kept) == (5, 3) and r.balanced()  # the steps and the clock are no rows
    assert dict(r.dropped) == {"non-numeric value": 1, "averaged with its step's other rows": 1}
    assert "not read as metrics: _runtime (bookkeeping), _step (a step), eval_step (a step)" in r.notes
    assert any(n.startswith("numbers written as text, read as numbers: 'actor/entropy' ('1.1172')") for n in r.notes)
    assert any("line 4: key 'actor/entropy' has non-numeric value 'about 0.7'" in n for n in r.notes)
    t = finalize(read_verl_jsonl(p)[0])
    assert table.series(t, "m", "entropy").to_dict() == pytest.approx({1: (1.1172 + 0.9) / 2, 2: 0.8})
    assert set(t["metric"].astype(str)) == {"entropy", "val/acc"}


def test_a_w_and_b_panel_exported_one_metric_a_file_reads_as_one_table(tmp_path):
    """W&B exports a panel as one CSV per metric, every run in each: the entropy's file and the
    score's were read as four runs (two named "-2"), none with both, and nothing could be fitted."""
    import entropylaw as el

    steps = np.arange(1, 41)
    for name, metric, f in (("entropy.csv", "actor/entropy", lambda k: 1.1 * np.exp(-steps / (20 + k))),
                            ("reward.csv", "critic/score/mean",
                             lambda k: 0.8 - 0.3 * np.exp(1.1 * np.exp(-steps / (20 + k))) + 0.3)):
        cols = {"Step": steps}
        for k, run in enumerate(("grpo-lr1e-6", "grpo-lr3e-6")):
            v = f(k)
            cols[f"{run} - {metric}"], cols[f"{run} - {metric}__MIN"], cols[f"{run} - {metric}__MAX"] = v, v, v
        pd.DataFrame(cols).to_csv(tmp_path / name, index=False)
    df = el.load([str(tmp_path / "entropy.csv"), str(tmp_path / "reward.csv")], warn=False)
    assert sorted(el.run_ids(df)) == ["grpo-lr1e-6", "grpo-lr3e-6"]
    meta = table.runs(df).set_index("run_id")
    assert set(meta["entropy_key"]) == {"actor/entropy"} and set(meta["score_key"]) == {"critic/score/mean"}
    assert table.series(df, "grpo-lr3e-6", "score").index.tolist() == steps.tolist()
    joined = [a for a in el.row_accounts(df) if a["source"].endswith("reward.csv")]  # one account a run
    assert len(joined) == 2 and all(any("joined" in n for n in a["notes"]) and a["rows_kept"] == 40 for a in joined)
    fits = el.fit_all(df)
    assert len(fits) == 2
    # a second export of the same metric is no split: two runs each, as before
    pd.read_csv(tmp_path / "entropy.csv").to_csv(tmp_path / "again.csv", index=False)
    twice = el.load([str(tmp_path / "entropy.csv"), str(tmp_path / "again.csv")], warn=False)
    assert len(el.run_ids(twice)) == 4


def test_a_w_and_b_export_whose_step_metrics_are_named_with_a_slash_is_read_on_them(tmp_path):
    """define_metric("train/*", step_metric="train/step") and "val/*" on "val/step", exported as
    history CSV: the metrics were read on _step (a count of log calls: entropy at 0..108,
    validation at 10, 21, 32 ...) and val/step taken for a validation score. Each is read on
    its own step column, as eval_step and grpo_step are."""
    import entropylaw as el

    rows, call = [], 0
    for step in range(1, 101):
        rows.append({"_step": call, "train/step": step, "train/entropy": 1.0 / step, "train/reward": step / 200})
        call += 1
        if step % 10 == 0:
            rows.append({"_step": call, "val/step": step, "val/acc": step / 150})
            call += 1
    pd.DataFrame(rows).to_csv(tmp_path / "export.csv", index=False)
    df = el.load(tmp_path / "export.csv", warn=False)
    steps = {m: sorted(df.loc[df["metric"] == m, "step"]) for m in ("entropy", "score", "val/acc")}
    assert steps["entropy"] == steps["score"] == list(range(1, 101))
    assert steps["val/acc"] == list(range(10, 101, 10))
    assert "val/step" not in set(df["metric"])


def test_a_table_of_several_rows_a_step_reads_their_mean(tmp_path):
    """A custom trainer's CSV with a row per rollout batch (3 a step) was read as values logged twice:
    the last of each step kept, two of three rows dropped. Most (step, key) pairs repeated: their mean,
    said; a step logged twice once (a run resumed at its last step) still keeps its last value."""
    rng = np.random.default_rng(0)
    wide = pd.DataFrame({"step": np.repeat(np.arange(1, 21), 3), "entropy": rng.uniform(0.1, 0.9, 60),
                         "reward": rng.uniform(0, 1, 60)})
    wide.to_csv(tmp_path / "micro.csv", index=False)
    df, reports = load([str(tmp_path / "micro.csv")])
    want = wide.groupby("step")["entropy"].mean()  # an independent mean
    got = df[df["metric"] == "entropy"].set_index("step")["value"].sort_index()
    np.testing.assert_allclose(got.to_numpy(), want.to_numpy(), rtol=1e-12)
    assert "averaged" in str(reports[0]) and "logged twice" not in str(reports[0]), str(reports[0])
    once = pd.DataFrame({"step": [1, 2, 3, 4, 4, 5], "entropy": [0.9, 0.8, 0.7, 0.6, 0.55, 0.5],
                         "reward": [0.1, 0.2, 0.3, 0.4, 0.45, 0.5]})
    once.to_csv(tmp_path / "once.csv", index=False)
    df, _ = load([str(tmp_path / "once.csv")])
    assert df[(df["metric"] == "entropy") & (df["step"] == 4)]["value"].tolist() == [0.55]


def test_a_csv_of_mean_token_entropy_written_by_pandas_is_the_entropy(tmp_path):
    """``mean_token_entropy`` (a course assignment's name for the token-mean entropy) was found as no
    entropy: the run had nothing to fit. It is the entropy, with the values pandas wrote."""
    frame = pd.DataFrame({"step": range(0, 50), "mean_token_entropy": 0.2 + rng.random(50),
                          "reward": rng.random(50)})
    frame.to_csv(tmp_path / "run.csv", index=False)
    df, _ = load([str(tmp_path / "run.csv")])
    np.testing.assert_allclose(table.series(df, tmp_path.name, "entropy").to_numpy(), frame["mean_token_entropy"])
    assert df["entropy_key"].iloc[0] == "mean_token_entropy"


@pytest.mark.parametrize("step", ["it", "iter_num", "update", "grpo_step", "iter"])
def test_a_step_named_as_custom_loops_name_it_reads_in_csv_and_json_lines(tmp_path, step):
    """A from-scratch loop counts its steps in ``it``, ``update`` or nanoGPT's ``iter_num``: such a
    file was refused ("no step"); a CSV with ``grpo_step`` or ``iter`` was refused where the same
    JSON lines read. Both formats read each with the values written."""
    frame = pd.DataFrame({step: range(5, 45), "policy_entropy": 0.2 + rng.random(40), "avg_reward": rng.random(40)})
    frame.to_csv(tmp_path / "run.csv", index=False)
    frame.to_json(tmp_path / "run.jsonl", orient="records", lines=True)
    for name in ("run.csv", "run.jsonl"):
        df, _ = load([str(tmp_path / name)])
        entropy = table.series(df, tmp_path.name, "entropy")  # run.csv names no run: its folder does
        assert entropy.index.tolist() == frame[step].tolist(), name
        np.testing.assert_allclose(entropy.to_numpy(), frame["policy_entropy"])
    frame.rename(columns={step: "t"}).to_json(tmp_path / "t.jsonl", orient="records", lines=True)
    with pytest.raises(EntropyLawError, match=r"no line has a step .* keys seen: t, policy_entropy, .*step_key"):
        load([str(tmp_path / "t.jsonl")])  # a counter with no step's name: refused, with the keys it has
