"""Runs written by trainers that are neither veRL nor TRL: a custom GRPO loop's W&B runs with their
own step metrics (define_metric), its metrics.jsonl, a from-scratch GRPO's CSV with percent scores,
and a batch in which one run lacks what a command needs (it is left out, the rest go on)."""

from __future__ import annotations

import glob
import gzip
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import entropylaw as el
from entropylaw import table
from entropylaw.errors import EntropyLawError, EntropyLawWarning
from entropylaw.readers.key_names import by_name
from entropylaw.readers.keys import detect_keys
from entropylaw.readers.leveldb_log import write_log

from conftest import run_cli

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
CS336 = SHARED / "real-cs336-wandb"
RASBT = SHARED / "real-rasbt"
needs_cs336 = pytest.mark.skipif(not CS336.is_dir(), reason="../shared/data/real-cs336-wandb is absent")
needs_rasbt = pytest.mark.skipif(not RASBT.is_dir(), reason="../shared/data/real-rasbt is absent")


def _series(df: pd.DataFrame, metric: str) -> pd.Series:
    rows = df[df["metric"] == metric]
    return pd.Series(rows["value"].to_numpy(), index=rows["step"].to_numpy())


# --- W&B runs that declare their own steps -------------------------------------------------------

@pytest.mark.shared
@needs_cs336
@pytest.mark.parametrize("path", sorted(glob.glob(str(CS336 / "wandb" / "*" / "*.wandb.gz"))),
                         ids=lambda p: Path(p).name)
def test_shared_wandb_runs_equal_their_reference_at_every_step(path):
    """Read from .wandb.gz without flags: entropy (the mean of a step's train/entropy rows), score
    and validation each on its own declared step, equal to the independent reader's CSV."""
    run = Path(path).name.removeprefix("run-").split(".")[0]
    refs = glob.glob(str(CS336 / "reference" / f"*__{run}.csv"))
    df = el.load(path, warn=False)
    if not refs:  # the SFT run: no reward, no train/entropy; one validation point
        assert "entropy" not in set(df["metric"]) and "score" not in set(df["metric"])
        return
    ref = pd.read_csv(refs[0]).set_index("step")
    for column, metric in (("entropy", "entropy"), ("score", "score"), ("val/math", "val/accuracy")):
        theirs = ref[column].dropna()
        ours = _series(df, metric).sort_index()
        assert list(ours.index) == list(theirs.index), (column, list(ours.index)[:12])
        np.testing.assert_allclose(ours.to_numpy(), theirs.to_numpy(), rtol=1e-12, atol=1e-12)
    [account] = el.row_accounts(df)
    assert account["rows_read"] == account["rows_kept"] + account["rows_dropped"]
    assert "superseded by resumed segment" not in account["dropped"]  # _step is not the training step


@pytest.mark.shared
@needs_cs336
def test_shared_wandb_directory_with_key_flags_leaves_out_only_the_run_lacking_them():
    df = el.load(CS336, score_key="train/reward_mean", val_keys=["eval/accuracy"], warn=False)
    assert len(el.run_ids(df)) == 3 and not any(r.startswith("sft") for r in el.run_ids(df))
    skipped, aside = [], []
    for a in el.row_accounts(df):
        if a["skipped"]:
            (aside if "in a subfolder, not read" in a["skipped"] else skipped).append(a)
    assert len(skipped) == 1 and "run 'sft_run_1_train_set_128' left out" in skipped[0]["skipped"]
    # reference/ (the CSVs beside the wandb/ folder) is not read, and said
    assert [Path(a["source"]).name for a in aside] == ["reference"] and "28 run files" in aside[0]["skipped"]
    res = run_cli("summary", str(CS336), "--score-key", "train/reward_mean", "--val-key", "eval/accuracy")
    assert res.returncode == 0, res.stderr
    assert "left out: --score-key 'train/reward_mean' not found" in res.stderr
    strict = run_cli("summary", str(CS336), "--score-key", "train/reward_mean", "--strict")
    assert strict.returncode == 2 and "train/reward_mean" in strict.stderr and "Traceback" not in strict.stderr


def _wandb_record(pb, **kind):
    return pb.Record(**kind).SerializeToString()


def _custom_trainer_wandb(path: Path, compress=None) -> Path:
    """A .wandb file in the custom trainer's layout, written with W&B's own protobuf messages:
    define_metric(train/* on grpo_step, eval/* on eval_step), two train/entropy rows per step."""
    pb = pytest.importorskip("wandb.proto.wandb_internal_pb2")
    recs = [_wandb_record(pb, run=pb.RunRecord(run_id="x1", display_name="grpo_custom"))]
    for name in ("grpo_step", "eval_step"):
        recs.append(_wandb_record(pb, metric=pb.MetricRecord(name=name)))
    recs.append(_wandb_record(pb, metric=pb.MetricRecord(glob_name="train/*", step_metric="grpo_step")))
    recs.append(_wandb_record(pb, metric=pb.MetricRecord(glob_name="eval/*", step_metric="eval_step")))
    n = 0

    def history(**values):
        nonlocal n
        h = pb.HistoryRecord()
        h.item.add(key="_step", value_json=str(n))
        for key, value in values.items():
            h.item.add(key=key.replace("__", "/"), value_json=json.dumps(value))
        n += 1
        return _wandb_record(pb, history=h)

    for step in range(1, 11):
        for micro in range(2):
            recs.append(history(train__entropy=1.0 / step + 0.1 * micro, grpo_step=step))
        recs.append(history(train__reward_mean=0.05 * step, grpo_step=step))
        if step % 5 == 0 or step == 1:
            recs.append(history(**{"eval/accuracy": 0.04 * step, "eval_step": step}))
    recs.append(history(untracked=1.0))  # no declared step metric: its _step is no training step
    data = write_log(recs)
    if compress == "gz":
        path = path.with_name(path.name + ".gz")
        path.write_bytes(gzip.compress(data))
    elif compress == "zst":
        zstd = pytest.importorskip("zstandard")
        path = path.with_name(path.name + ".zst")
        path.write_bytes(zstd.ZstdCompressor().compress(data))
    else:
        path.write_bytes(data)
    return path


@pytest.mark.parametrize("compress", [None, "gz", "zst"])
def test_define_metric_steps_in_a_wandb_file(tmp_path, compress):
    path = _custom_trainer_wandb(tmp_path / "run-x1.wandb", compress)
    df = el.load(path, warn=False)
    assert _series(df, "entropy").to_dict() == pytest.approx({s: 1.0 / s + 0.05 for s in range(1, 11)})
    assert _series(df, "score").to_dict() == pytest.approx({s: 0.05 * s for s in range(1, 11)})
    assert _series(df, "val/accuracy").to_dict() == pytest.approx({1: 0.04, 5: 0.2, 10: 0.4})
    [account] = el.row_accounts(df)
    assert account["dropped"] == {"averaged with its step's other rows": 10,
                                  "no declared step metric (W&B's _step is not a step)": 1}
    assert any("averaged into one value per step" in n for n in account["notes"])
    assert "grpo_step" not in set(df["metric"])  # a step axis is not a metric


# --- JSON lines of a custom trainer ----------------------------------------------------------------

def _metrics_jsonl(path: Path, steps: int = 60, per_step: int = 3) -> Path:
    """The course assignment's layout: rows tagged by type; off-policy runs write several training rows a step."""
    lines = []
    for step in range(1, steps + 1):
        for k in range(per_step):
            lines.append({"type": "train", "grpo_step": step, "token_entropy": 0.9 * math.exp(-step / 20) + 0.01 * k,
                          "train_reward": 0.1 + 0.5 * (1 - math.exp(-step / 20)), "loss": 0.01, "lr": 1e-6})
        lines.append({"type": "rollout", "grpo_step": step, "mean_response_length": 300.0 - step, "entropy": 2.0})
        if step % 10 == 0:
            lines.append({"type": "eval", "grpo_step": step, "answer_accuracy": 0.5704 * step / steps,
                          "format_accuracy": 0.95, "num_examples": 1024})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_custom_jsonl_read_without_flags(tmp_path):
    df = el.load(_metrics_jsonl(tmp_path / "metrics.jsonl"), warn=False)
    entropy = _series(df, "entropy")
    expected = {s: 0.9 * math.exp(-s / 20) + 0.01 for s in range(1, 61)}  # each step's mean of its 3 rows
    assert entropy.to_dict() == pytest.approx(expected, abs=1e-12)
    assert _series(df, "val/answer_accuracy").to_dict() == pytest.approx(
        {s: 0.5704 * s / 60 for s in range(10, 61, 10)})
    meta = el.summary(df).iloc[0]
    assert meta["entropy_key"] == "train/token_entropy" and meta["score_key"] == "train/train_reward"
    [account] = el.row_accounts(df)
    assert account["rows_read"] == account["rows_kept"] + account["rows_dropped"]
    assert account["dropped"] == {"averaged with its step's other rows": 60 * 2 * 4}
    notes = " ".join(account["notes"])
    assert "'grpo_step'" in notes and "eval (6 lines)" in notes and "found by its name" in notes


def test_jsonl_step_key_and_per_type_restarts(tmp_path):
    path = tmp_path / "log.jsonl.gz"
    rows = [{"type": "train", "it": s, "n": 9, "token_entropy": 1.0 / s, "train_reward": s / 10} for s in (1, 2, 3)]
    rows += [{"type": "eval", "it": 3, "n": 9, "answer_accuracy": 0.3}]
    rows += [{"type": "train", "it": s, "n": 9, "token_entropy": 2.0 / s, "train_reward": s / 20} for s in (2, 3, 4)]
    with gzip.open(path, "wt") as f:
        f.write("".join(json.dumps(r) + "\n" for r in rows))
    plain = el.load(path, warn=False)  # "it", a from-scratch loop's step, is found as one
    df = el.load(path, step_key="it", warn=False)
    pd.testing.assert_frame_equal(plain.reset_index(drop=True), df.reset_index(drop=True))
    # the train rows restart at 2 (a resume): the later segment wins; the eval row is on its own axis
    assert _series(df, "entropy").to_dict() == pytest.approx({1: 1.0, 2: 1.0, 3: 2 / 3, 4: 0.5})
    assert _series(df, "val/answer_accuracy").to_dict() == {3: 0.3}
    with pytest.raises(EntropyLawError, match="'nope'"):
        el.load(path, step_key="nope", warn=False)


def test_trainer_state_log_history(tmp_path):
    history = [{"loss": 1.0 / s, "entropy": 1.0 / (1 + s / 50), "reward": 0.2 + s / 400, "step": s}
               for s in range(10, 101, 10)]
    history += [{"eval_accuracy": 0.3 + s / 500, "eval_loss": 0.5, "step": s} for s in (50, 100)]
    (tmp_path / "trainer_state.json").write_text(json.dumps({"global_step": 100, "log_history": history}))
    df = el.load(tmp_path / "trainer_state.json", warn=False)
    assert _series(df, "val/accuracy").to_dict() == pytest.approx({50: 0.4, 100: 0.5})


# --- keys by role, by name; percent scores -------------------------------------------------------

@pytest.mark.parametrize("keys, entropy, score, val", [
    (["entropy_avg", "reward_avg", "eval_acc"], "entropy_avg", "reward_avg", {"val/acc": "eval_acc"}),
    (["train/entropy", "train/reward_mean", "train/reward_max", "eval/accuracy", "eval/avg_entropy"],
     "train/entropy", "train/reward_mean", {"val/accuracy": "eval/accuracy"}),
    (["policy_entropy", "mean_reward", "val/gsm8k/accuracy", "val/math/accuracy", "val/math/format_accuracy"],
     "policy_entropy", "mean_reward", {"val/gsm8k": "val/gsm8k/accuracy", "val/math": "val/math/accuracy"}),
])
def test_roles_found_by_name(keys, entropy, score, val):
    km = detect_keys(keys)
    assert (km.entropy, km.score, km.val) == (entropy, score, val)


def test_two_candidates_for_one_role_take_neither_and_name_both():
    km = detect_keys(["token_entropy", "entropy_avg", "train_reward", "eval/accuracy", "eval/answer_accuracy"])
    assert km.entropy == "" and km.val == {} and km.score == "train_reward"
    said = " ".join(km.warnings)
    assert "token_entropy, entropy_avg" in said and "eval/accuracy, eval/answer_accuracy" in said
    # an accuracy is preferred to a score or reward of the same benchmark: no guess there
    assert by_name(["eval/reward", "eval/accuracy"])[2] == {"val/accuracy": "eval/accuracy"}


def test_percent_read_as_fraction_only_when_the_name_says_accuracy(tmp_path):
    csv = tmp_path / "run.csv"
    pd.DataFrame({"step": [1, 2, 3], "entropy_avg": [0.5, 0.4, 0.3], "reward_avg": [2.0, 3.0, 4.0],
                  "eval_acc": [15.6, 30.0, 45.5]}).to_csv(csv, index=False)
    df = el.load(csv, warn=False)
    assert _series(df, "val/acc").tolist() == pytest.approx([0.156, 0.30, 0.455])
    assert _series(df, "score").tolist() == [2.0, 3.0, 4.0]  # a reward above 1: not a percent by its name
    assert any("read as a percent" in n for n in el.row_accounts(df)[0]["notes"])
    same = el.load(csv, score_scale="fraction", warn=False)
    assert _series(same, "val/acc").tolist() == [15.6, 30.0, 45.5]
    halved = el.load(csv, score_scale=0.5, warn=False)
    assert _series(halved, "score").tolist() == [1.0, 1.5, 2.0]
    with pytest.raises(EntropyLawError, match="score_scale"):
        el.load(csv, score_scale="lots", warn=False)


def test_an_accuracy_in_percent_named_so_or_named_after_its_benchmark_is_the_validation(tmp_path):
    """``val/accuracy_pct`` in 0..37 is the validation score, read as a percent; ``val/gsm8k_acc``
    and ``val/math_acc`` are two benchmarks' validations, not two guesses at one (before, none of
    these was a validation key: the percent stayed 37 and the account said "no validation series")."""
    csv = tmp_path / "pct.csv"
    pd.DataFrame({"step": [0, 10, 20, 30], "actor/entropy": [1.2, 0.9, 0.7, 0.6],
                  "val/accuracy_pct": [2.0, 15.5, 30.0, 37.3]}).to_csv(csv, index=False)
    df = el.load(csv, warn=False)
    assert _series(df, "val/accuracy_pct").tolist() == pytest.approx([0.02, 0.155, 0.30, 0.373])
    notes = " ".join(el.row_accounts(df)[0]["notes"])
    assert "read as a percent" in notes and "no validation series" not in notes
    two = tmp_path / "two.csv"
    pd.DataFrame({"step": [0, 10, 20], "entropy": [1.0, 0.8, 0.6], "val/gsm8k_acc": [0.3, 0.5, 0.6],
                  "val/math_acc": [0.1, 0.2, 0.25]}).to_csv(two, index=False)
    km = detect_keys(["step", "entropy", "val/gsm8k_acc", "val/math_acc"])
    assert km.val == {"val/gsm8k": "val/gsm8k_acc", "val/math": "val/math_acc"} and not km.warnings
    assert {"val/gsm8k", "val/math"} <= set(el.load(two, warn=False)["metric"])
    # a mean over benchmarks, a running best, a token accuracy, the training split: no benchmark's accuracy
    km = detect_keys(["step", "entropy", "val/gsm8k_acc", "val/math_acc", "val/overall_acc", "val/best_acc",
                      "eval_mean_token_accuracy", "eval/train_acc"])
    assert km.val == {"val/gsm8k": "val/gsm8k_acc", "val/math": "val/math_acc"}


def test_a_validation_score_that_looks_like_a_percent_but_is_not_named_one_is_said(tmp_path):
    """veRL's ``val/test_score/<task>`` logged in percent by a custom reward: its name says no
    accuracy, so it is read as it is; the reading says so and names the flag."""
    path = tmp_path / "run.jsonl"
    rows = [{"step": s, "actor/entropy": 0.9 / s ** 0.3, "critic/score/mean": 0.01 * s,
             **({"val/test_score/gsm8k": 38.1 + 0.7 * s} if s % 5 == 0 else {})} for s in range(1, 51)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.warns(EntropyLawWarning, match=r"'val/test_score/gsm8k' ranges 41.6..73.1: read in its own units .*"
                                               r"--score-scale percent if it is one"):
        df = el.load(str(path))
    assert _series(df, "val/gsm8k").max() == pytest.approx(73.1)
    scaled = el.load(str(path), score_scale="percent", warn=False)
    assert _series(scaled, "val/gsm8k").max() == pytest.approx(0.731)
    assert not any("own units" in n for a in el.row_accounts(scaled) for n in a["notes"])


def _percent_run(folder: Path, top: float) -> Path:
    """A custom trainer's run logging its accuracy in percent, climbing to ``top`` %."""
    folder.mkdir(parents=True)
    rows = []
    for s in range(1, 101):
        rows.append({"step": s, "train/entropy": 0.9 / s ** 0.3, "train/reward": min(0.9, 0.01 * s)})
        if s % 10 == 0:
            rows.append({"step": s, "eval/accuracy": round(top * (1 - math.exp(-s / 30)), 2)})
    (folder / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder / "metrics.jsonl"


def test_the_runs_of_one_sweep_share_their_percent_even_where_one_stays_below_one(tmp_path):
    """A learning rate that failed stays below 1 %: alone its 0.87 looks like a fraction, and
    was read as 87 %, and ranked first; its sweep says percent, and so does it now."""
    good, failed = _percent_run(tmp_path / "sweep" / "lr1e-6", 30.0), _percent_run(tmp_path / "sweep" / "lr1e-5", 0.9)
    with pytest.warns(EntropyLawWarning, match=r"'eval/accuracy' read as a percent in 1 run whose values stay within "
                                               r"\[0, 1\]"):
        df = el.load(str(tmp_path / "sweep"))
    by_run = {r: _series(df[df["run_id"] == r], "val/accuracy") for r in el.run_ids(df)}
    assert by_run["lr1e-5"].max() == pytest.approx(0.0087) and by_run["lr1e-6"].max() == pytest.approx(0.2893)
    [note] = [n for a in el.row_accounts(df) if "lr1e-5" in a["source"] for n in a["notes"] if "percent" in n]
    assert "as in the other runs read with it (up to 28.93)" in note
    ranked = run_cli("rank", str(tmp_path / "sweep"), "--n-boot", "60", "--json")
    assert ranked.returncode == 0, ranked.stderr
    assert [d["run_id"] for d in sorted(json.loads(ranked.stdout), key=lambda d: -d["expected"])][0] == "lr1e-6"
    # given apart, two files are two sources: each keeps the unit its own values say
    apart = el.load([str(good), str(failed)], warn=False)
    assert max(_series(apart[apart["source"] == str(failed)], "val/accuracy")) == pytest.approx(0.87)
    # --score-scale decides for every run: no sharing
    fraction = el.load(str(tmp_path / "sweep"), score_scale="fraction", warn=False)
    assert _series(fraction[fraction["run_id"] == "lr1e-5"], "val/accuracy").max() == pytest.approx(0.87)


@pytest.mark.shared
@needs_rasbt
def test_rasbt_csvs_read_without_flags():
    df = el.load(str(RASBT), warn=False)
    s = el.summary(df).set_index("run_id")
    assert set(s.loc[["7_4_plus_clip_ratio_metrics", "7_5_plus_kl_metrics"], "entropy_key"]) == {"entropy_avg"}
    kl = _series(df[df["run_id"] == "7_5_plus_kl_metrics"], "val/acc")
    assert kl[1] == pytest.approx(0.156) and kl[50] == pytest.approx(0.408) and kl[500] == 0.0
    assert kl.max() <= 1
    d = el.forecast(df, run="7_4_plus_clip_ratio_metrics", fit_frac=0.5).to_dict()  # a bounded score now
    default = d["methods"][d["default_method"]]
    assert default["ok"] and 0 <= default["final"]["forecast"] <= 1


# --- one run lacking what a command needs --------------------------------------------------------

REAL = (Path(__file__).resolve().parents[1] / "data" / "real"
        / "verl_ppo_qwen2.5-0.5b-instruct_gsm8k_resp512_verl-data.parquet")


@pytest.fixture
def batch(tmp_path):
    (tmp_path / "A.parquet").write_bytes(REAL.read_bytes())
    pd.DataFrame({"step": [1, 2, 3], "train_reward": [0.1, 0.2, 0.3], "eval_acc": [0.2, 0.3, 0.4]}).to_csv(
        tmp_path / "B.csv", index=False)
    return tmp_path


def test_fit_and_report_leave_out_the_run_without_entropy(batch, tmp_path):
    res = run_cli("fit", str(batch / "A.parquet"), str(batch / "B.csv"))
    assert res.returncode == 0, res.stderr
    assert "left out (1 run): B (no entropy metric" in res.stdout.replace("\n", " ")
    assert run_cli("fit", str(batch / "A.parquet"), str(batch / "B.csv"), "--strict").returncode == 2
    only_b = run_cli("fit", str(batch / "B.csv"))
    assert only_b.returncode == 2 and "nothing fitted" in only_b.stderr
    out = tmp_path / "rep"
    rep = run_cli("report", str(batch), "--out", str(out))
    assert rep.returncode == 0, rep.stderr
    # B logs a score: the page forecasts it, its row saying why it has no law (it was left out of the page)
    assert "B: its forecast alone, no law fit: logs no policy entropy" in " ".join(rep.stderr.split())
    page = (out / "report.html").read_text()
    assert "no law fit: logs no policy entropy" in page and "Left out: run B" not in page
    # named under the title, as the guide says (it was at the foot of the page only)
    assert page.index("Forecast alone, no law fit: 1 run that logs no policy entropy (B;") < page.index(
        'id="saturation"')
    refused = run_cli("report", str(batch), "--out", str(tmp_path / "rep2"), "--strict")
    assert refused.returncode == 2 and not (tmp_path / "rep2").exists()


def test_report_and_figures_of_runs_none_usable_are_one_line_naming_the_key_to_give(tmp_path):
    """A trainer's own entropy key (``H``) not recognised: `report` and `figures` of that run
    alone ended "internal error: KeyError: 'model'" (no run left to group by model), `report`
    with nothing usable wrote an empty page, and the errors did not say which flag names the key.
    The run logs a score: `report` now writes its page (its score, why no law, the flag to give)."""
    pd.DataFrame({"step": [1, 2, 3, 4], "H": [0.9, 0.8, 0.7, 0.6], "eval_acc": [0.2, 0.3, 0.4, 0.45]}).to_csv(
        tmp_path / "B.csv", index=False)
    out = run_cli("figures", str(tmp_path / "B.csv"), "--out", str(tmp_path / "figures"))
    lines = [ln for ln in out.stderr.splitlines() if ln.startswith("entropylaw: error")]
    assert out.returncode == 2 and len(lines) == 1, out.stderr
    assert "internal error" not in out.stderr and not (tmp_path / "figures").exists()
    assert "the run's keys: val/acc, H" in out.stderr.replace("\n  ", " ") and "--entropy-key" in out.stderr
    rep = run_cli("report", str(tmp_path / "B.csv"), "--out", str(tmp_path / "report"))
    assert rep.returncode == 0 and "internal error" not in rep.stderr, rep.stderr
    page = (tmp_path / "report" / "report.html").read_text()
    assert "name it with --entropy-key if it is logged under another name" in page
    ok = run_cli("fit", str(tmp_path / "B.csv"), "--entropy-key", "H")
    assert ok.returncode == 0, ok.stderr


def test_fit_all_names_the_runs_left_out(batch):
    df = el.load(batch, warn=False)
    with pytest.warns(Warning):
        fits = el.fit_all(df, skip_errors=True)
    assert len(fits) == 1 and list(fits.left_out) == ["B"] and "no entropy metric" in fits.left_out["B"]


@pytest.mark.parametrize("role, names", [
    ("entropy", ["token_entropy", "entropy_avg", "entropy_mean", "mean_entropy", "avg_entropy", "policy_entropy",
                 "entropy/mean", "train/token_entropy", "mean_token_entropy", "Entropy/train"]),
    ("score", ["train_reward", "reward_avg", "reward_mean", "mean_reward", "avg_reward", "score", "reward/mean",
               "rewards/mean", "train/reward_mean", "Reward/train"]),
    ("val", ["eval/accuracy", "eval/acc", "eval/answer_accuracy", "eval/pass@1", "val/correct", "test/exact_match",
             "validation/solve_rate", "eval_acc", "val_acc", "test_accuracy", "eval/gsm8k/accuracy",
             "val/accuracy_pct", "val/gsm8k_acc", "valid/acc", "Accuracy/val", "valid_accuracy"]),
])
def test_the_docs_names_are_the_ones_recognised(role, names):
    """docs/guide/inputs.md lists these names for each role: each alone fills it."""
    for name in names:
        entropy, score, val, said = by_name([name])
        assert {"entropy": entropy, "score": score, "val": list(val.values())}[role] in (name, [name]), name
    for name in ("eval/token_entropy", "train/reward_max", "reward_std", "eval/format_accuracy", "eval/avg_entropy"):
        entropy, score, val, _ = by_name([name])
        assert not (entropy or score or val), name
    assert "token_entropy" in Path(__file__).resolve().parents[1].joinpath("docs/guide/inputs.md").read_text()


# --- a folder of run folders ---------------------------------------------------------------------

def _takeoff_sweep(root: Path, rates=(0.9, 1.0, 1.1, 1.2)) -> list[str]:
    """A sweep as a custom trainer leaves it: one output folder per run, each with its metrics.jsonl."""
    names = []
    for i, c in enumerate(rates):
        name = f"grpo_lr{i}e-6"
        folder = root / name
        folder.mkdir(parents=True)
        rows = []
        for step in range(1, 101):
            rows.append({"type": "train", "grpo_step": step, "token_entropy": 0.9 / step ** 0.3,
                         "train_reward": min(0.9, 0.01 * step)})
            if step % 5 == 0 or step == 1:  # logit climbs c per unit of ln(1 + step) from 0.04
                z = math.log(0.04 / 0.96) + c * math.log1p(step)
                rows.append({"type": "eval", "grpo_step": step, "answer_accuracy": round(1 / (1 + math.exp(-z)), 4),
                             "num_examples": 1024})
        (folder / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        names.append(name)
    return names


def test_a_folder_of_run_folders_reads_each_run_and_forecasts_them_as_one_sweep(tmp_path):
    from entropylaw.fit.forecast.core import forecast_table

    names = _takeoff_sweep(tmp_path / "runs")
    df = el.load(str(tmp_path / "runs"), warn=False)
    assert sorted(pd.unique(df["run_id"])) == names  # each run named after its folder
    out = forecast_table(df, fit_frac=0.2, methods=["default"], n_boot=40)
    assert all(fc.regime_name == "take-off" for fc in out.values())
    # one folder per run: the sweep is the folder holding them, so the runs inform each other
    assert all("forecast with 3 other runs of this sweep" in (fc.note or "") for fc in out.values())
    assert str(out).replace("\n  ", " ").startswith(f"forecast as one sweep (answer_accuracy in {tmp_path / 'runs'}): "
                                                    f"{', '.join(names)} share a take-off climb rate")
    # the command pools them too, and --no-sweep forecasts each run alone
    for flags, pooled in (((), True), (("--no-sweep",), False)):
        res = run_cli("forecast", str(tmp_path / "runs"), "--fit-frac", "0.2", "--n-boot", "40", *flags)
        assert res.returncode == 0, res.stderr
        assert res.stdout.startswith("forecast as one sweep") is pooled
    ranked = run_cli("rank", str(tmp_path / "runs"), "--fit-frac", "0.2", "--n-boot", "60", "--no-sweep", "--json")
    # alone, no run is ranked as one of a sweep carried on at its rate (none "wide, shared")
    assert ranked.returncode == 0 and all(d["note"].endswith("take-off") and "shared" not in d["note"]
                                          for d in json.loads(ranked.stdout))


def test_a_folder_with_runs_of_its_own_keeps_its_plain_subfolders_out(tmp_path):
    _takeoff_sweep(tmp_path / "runs" / "group", rates=(1.0,))
    with pytest.raises(EntropyLawError, match="directory holds no run files.*runs/group: 1 run folder one level "
                                              "deeper than a directory is read: name it to read it"):
        el.load(str(tmp_path / "runs"), warn=False)  # one level of run folders, not any depth: said
    # beside a run folder that reads, the deeper one is said in the row account
    _takeoff_sweep(tmp_path / "runs" / "alone", rates=(1.1,))
    (tmp_path / "runs" / "alone" / "grpo_lr0e-6" / "metrics.jsonl").rename(tmp_path / "runs" / "alone" / "m.jsonl")
    df = el.load(str(tmp_path / "runs"), warn=False)
    assert list(pd.unique(df["run_id"])) == ["m"]
    assert [(Path(a["source"]).name, a["skipped"]) for a in el.row_accounts(df) if a["skipped"]] == [
        ("group", "1 run folder one level deeper than a directory is read: name it to read it")]
    top = tmp_path / "top"
    _takeoff_sweep(tmp_path / "made", rates=(1.0, 1.1))
    (top / "aside").mkdir(parents=True)
    (top / "aside" / "metrics.jsonl").write_text((tmp_path / "made" / "grpo_lr0e-6" / "metrics.jsonl").read_text())
    (top / "main.jsonl").write_text((tmp_path / "made" / "grpo_lr1e-6" / "metrics.jsonl").read_text())
    df = el.load(str(top), warn=False)
    assert list(pd.unique(df["run_id"])) == ["main"]  # aside/ is not read: the directory's own runs are
    # ... but said, with its count of run files, never left out in silence
    [aside] = [a for a in el.row_accounts(df) if a["skipped"]]
    assert aside["source"] == str(top / "aside") and aside["skipped"].startswith("1 run file in a subfolder, not read")
    res = run_cli("summary", str(top))
    said = res.stderr.replace("\n  ", " ")
    assert res.returncode == 0 and f"{top / 'aside'}: skipped (1 run file in a subfolder" in said and "name it" in said
    # a folder whose files are named as the directory's own runs describes them (data/real-sizes/offsets/): not said
    (top / "offsets").mkdir()
    (top / "offsets" / "main.jsonl").write_text('{"step": 0, "page_start_char": 100000}\n')
    assert [Path(a["source"]).name for a in el.row_accounts(el.load(str(top), warn=False)) if a["skipped"]] == ["aside"]
    # a trainer's checkpoints/ folder keeps a counter in a .txt (veRL's latest_checkpointed_iteration.txt): no run
    (top / "checkpoints").mkdir()
    (top / "checkpoints" / "latest_checkpointed_iteration.txt").write_text("100\n")
    assert [Path(a["source"]).name for a in el.row_accounts(el.load(str(top), warn=False)) if a["skipped"]] == ["aside"]
    (top / "checkpoints" / "latest_checkpointed_iteration.txt").write_text("step:100 - actor/entropy:0.5\n")
    assert [Path(a["source"]).name for a in el.row_accounts(el.load(str(top), warn=False)) if a["skipped"]] == [
        "aside", "checkpoints"]  # a .txt that logs metrics is one
    (top / "checkpoints" / "latest_checkpointed_iteration.txt").unlink()
    (top / "checkpoints").rmdir()
    (top / "offsets" / "main.jsonl").unlink()
    (top / "offsets").rmdir()
    (top / "main.jsonl").unlink()
    assert list(pd.unique(el.load(str(top), warn=False)["run_id"])) == ["aside"]  # nothing but folders: read


def test_a_run_folders_console_output_is_left_out_and_said_and_its_config_read(tmp_path):
    _takeoff_sweep(tmp_path / "runs", rates=(0.9, 1.0, 1.1))
    (tmp_path / "runs" / "grpo_lr0e-6" / "config.json").write_text('{"lr": 1e-6, "model": "Qwen2.5-Math-1.5B"}')
    (tmp_path / "runs" / "grpo_lr1e-6" / "stdout.txt").write_text("loading model...\n")
    (tmp_path / "runs" / "grpo_lr2e-6" / "samples.jsonl").write_text('{"prompt": "1+1", "completion": "2"}\n')
    df = el.load(str(tmp_path / "runs"), warn=False)
    assert sorted(pd.unique(df["run_id"])) == ["grpo_lr0e-6", "grpo_lr1e-6", "grpo_lr2e-6"]
    skipped = [a for a in el.row_accounts(df) if a["skipped"]]
    # the config is the run's, not a log
    assert sorted(a["source"].rsplit("/", 1)[-1] for a in skipped) == ["samples.jsonl", "stdout.txt"]
    assert table.runs(df).set_index("run_id").loc["grpo_lr0e-6", "model"] == "Qwen2.5-Math-1.5B"
    res = run_cli("summary", str(tmp_path / "runs"))
    said = res.stderr.replace("\n  ", " ")
    assert res.returncode == 0 and "stdout.txt: skipped" in said and "name the step with --step-key" in said
    strict = run_cli("summary", str(tmp_path / "runs"), "--strict")
    assert strict.returncode == 2 and "stdout.txt" in strict.stderr and "Traceback" not in strict.stderr
    # a run folder where nothing reads is an error (the rest go on with --skip-bad)
    (tmp_path / "runs" / "notes").mkdir()
    (tmp_path / "runs" / "notes" / "todo.txt").write_text("try a larger lr\n")
    bad = run_cli("summary", str(tmp_path / "runs"))
    assert bad.returncode == 2 and "todo.txt" in bad.stderr and len(bad.stderr.strip().splitlines()) <= 3
    # a run folder whose log is damaged beside its console output: both named, the log's reason too
    (tmp_path / "runs" / "notes" / "metrics.jsonl").write_text('{"type": "eval", "oops": 1}\n')
    (tmp_path / "runs" / "notes" / "config.json").write_text('{"lr": 1}')
    bad = run_cli("summary", str(tmp_path / "runs"))
    said = " ".join(bad.stderr.split())
    assert bad.returncode == 2 and "no file of the run folder reads" in said
    assert "metrics.jsonl" in said and "todo.txt" in said and "config.json" not in said
    assert run_cli("summary", str(tmp_path / "runs"), "--skip-bad").returncode == 0


def test_a_table_written_newest_first_or_shuffled_is_read_in_step_order_not_as_resumes(tmp_path):
    """A CSV exported newest first (or shuffled) went back a step on every row: read as 119
    resumes, it kept 1 step of 120 ("dropped 238 of 240 rows (superseded by resumed segment)")
    and exit 0. A table sorted otherwise is read in step order, said under `summary`; a run
    resumed now and then is still one."""
    steps = np.arange(1, 121)
    d = pd.DataFrame({"step": steps, "entropy": 1.2 * np.exp(-steps / 40) + 0.15, "reward": 0.2 + steps / 300})
    d.iloc[::-1].to_csv(tmp_path / "newest_first.csv", index=False)
    d.sample(frac=1, random_state=0).to_csv(tmp_path / "shuffled.csv", index=False)
    for name in ("newest_first", "shuffled"):
        df = el.load(tmp_path / f"{name}.csv", warn=False)
        [acct] = el.row_accounts(df)
        assert acct["rows_kept"] == 240 and acct["rows_dropped"] == 0, acct
        got = _series(df, "entropy")
        assert list(got.index) == list(steps) and got.to_numpy() == pytest.approx(d["entropy"].to_numpy())
        out = run_cli("summary", str(tmp_path / f"{name}.csv"))
        assert out.returncode == 0 and out.stderr == "", out.stderr
        assert "the rows are not in step order" in " ".join(out.stdout.split()), out.stdout
    resumed = pd.concat([d.iloc[:80], d.iloc[60:]])  # resumed from step 61 once: the later segment stands
    resumed.to_csv(tmp_path / "resumed.csv", index=False)
    [acct] = el.row_accounts(el.load(tmp_path / "resumed.csv", warn=False))
    assert acct["dropped"] == {"superseded by resumed segment": 40}, acct


def test_summary_says_a_percent_score_was_read_as_a_fraction(tmp_path):
    steps = np.arange(1, 61)
    pd.DataFrame({"step": steps, "entropy": np.exp(-steps / 30), "eval_acc": 20 + steps / 2}).to_csv(
        tmp_path / "pct.csv", index=False)
    out = run_cli("summary", str(tmp_path / "pct.csv"))
    text = " ".join(out.stdout.split())
    assert out.returncode == 0 and "read: " in text and "read as a percent (divided by 100)" in text, out.stdout


def test_score_scale_percent_divides_the_percent_runs_not_the_fractions_read_with_them(tmp_path):
    """`--score-scale percent` over a folder of percent and fraction runs divided every run by 100:
    a fraction's 0.543 became 0.005, and a size law was fitted to that. A score within [0, 1] is a
    fraction already: kept, and said."""
    steps = np.arange(1, 61)
    h = np.exp(-steps / 30)
    pd.DataFrame({"step": steps, "entropy": h, "val/test_score/gsm8k": 50 + steps / 3}).to_csv(
        tmp_path / "pct.csv", index=False)
    pd.DataFrame({"step": steps, "entropy": h, "val/test_score/gsm8k": 0.3 + steps / 300}).to_csv(
        tmp_path / "frac.csv", index=False)
    with pytest.warns(EntropyLawWarning, match=r"ranges 0.3033..0.5, within \[0, 1\]: read as a fraction"):
        df = el.load(tmp_path, score_scale=0.01)
    val = {r: df[(df["run_id"] == r) & df["metric"].astype(str).str.startswith("val/")]["value"]
           for r in ("pct", "frac")}
    assert val["pct"].max() == pytest.approx(0.7) and val["frac"].max() == pytest.approx(0.5)


def test_a_model_given_for_every_run_read_says_where_a_run_names_another_size(tmp_path):
    """`--model Qwen2.5-1.5B-Instruct` over a run named qwen2.5-0.5b-instruct_...: read as 1.5B,
    silently (scale then fitted it at 1.31B)."""
    steps = np.arange(1, 31)
    pd.DataFrame({"step": steps, "entropy": np.exp(-steps / 30), "val/test_score/gsm8k": 0.2 + steps / 100}).to_csv(
        tmp_path / "qwen2.5-0.5b-instruct_grpo_gsm8k.csv", index=False)
    with pytest.warns(EntropyLawWarning, match=r"`model` Qwen2.5-1.5B-Instruct given, but the run's name or config "
                                                r"says qwen2.5-0.5b-instruct: read as Qwen2.5-1.5B-Instruct"):
        df = el.load(tmp_path, model="Qwen2.5-1.5B-Instruct")
    assert table.runs(df)["n_params"].iloc[0] == 1.5e9


def test_a_file_given_twice_is_read_once(tmp_path):
    """The same file twice (a glob overlapping another path) was two runs, the second named -2."""
    steps = np.arange(1, 31)
    pd.DataFrame({"step": steps, "entropy": np.exp(-steps / 30), "val/acc": 0.2 + steps / 100}).to_csv(
        tmp_path / "run.csv", index=False)
    with pytest.warns(EntropyLawWarning, match=r"given twice \(as .*run.csv\): read once"):
        df = el.load(tmp_path / "run.csv", str(tmp_path / ".." / tmp_path.name / "run.csv"))
    assert table.run_ids(df) == [tmp_path.name]  # run.csv names no run: its folder does


def test_a_json_null_is_a_key_not_logged_not_a_dropped_value(tmp_path):
    """pandas' to_json writes a missing validation as null: 180 of 200 lines said "dropped 180
    values (non-numeric value: 180)", which buried the one broken line in the middle of the file."""
    rows = [{"step": s, "actor/entropy": 1.0 / s, "critic/score/mean": 0.5, "val/acc": 0.4 if s % 10 == 0 else None}
            for s in range(1, 201)]
    lines = [json.dumps(r) for r in rows]
    lines.insert(100, '{"step": 100, "actor/entropy": 0.3, "critic/sc')
    path = tmp_path / "metrics.jsonl"
    path.write_text("\n".join(lines) + "\n")
    account = el.load(str(path), warn=False).attrs["row_accounts"][0]
    assert account["dropped"] == {"unparseable line": 2}, account["dropped"]
    assert account["rows_read"] == 200 * 2 + 20 + 2


def _counted_run(folder: Path, percent: bool, top: int, n: int = 1024, float32: bool = False) -> Path:
    """A custom trainer's run whose eval rows state ``num_examples``: its accuracy is ``k / n``
    (``100 k / n`` in percent), climbing to ``top`` problems solved; ``float32``: computed in float32
    (a tensor's mean), as JSON writes such a value."""
    folder.mkdir(parents=True)
    rows = []
    for s in range(1, 101):
        rows.append({"type": "train", "grpo_step": s, "token_entropy": 0.9 / s ** 0.3,
                     "train_reward": min(0.9, s / 100)})
        if s % 10 == 0:
            k = round(top * (1 - math.exp(-s / 30)))
            acc = (100 if percent else 1) * k / n
            rows.append({"type": "eval", "grpo_step": s, "answer_accuracy": float(np.float32(acc)) if float32 else acc,
                         "num_examples": n})
    (folder / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder / "metrics.jsonl"


def test_a_run_that_states_its_size_keeps_its_fractions_beside_a_percent_run(tmp_path):
    """One run of a sweep logs a percent, two log fractions with `num_examples`: the fractions were
    read as a percent with their peer (0.93 as 0.0093). Their values are whole numbers of 1024
    problems as fractions and not as a percent, so they keep their unit, each said so; a failed
    run's percent (10 of 1024: 0.98 %, whole either way) still reads as its peers' percent."""
    _counted_run(tmp_path / "sweep" / "lr1", percent=False, top=950)
    _counted_run(tmp_path / "sweep" / "lr2", percent=False, top=700)
    _counted_run(tmp_path / "sweep" / "lr3", percent=True, top=800)
    with warnings.catch_warnings():
        warnings.simplefilter("error", EntropyLawWarning)  # nothing re-read as a percent: no warning
        df = el.load(str(tmp_path / "sweep"))
    top = {r: _series(df[df["run_id"] == r], "val/answer_accuracy").max() for r in el.run_ids(df)}
    solved = {"lr1": 950, "lr2": 700, "lr3": 800}  # each run's top, reached at step 100 as k of 1024
    assert top == pytest.approx({r: round(t * (1 - math.exp(-100 / 30))) / 1024 for r, t in solved.items()})
    notes = [n for a in el.row_accounts(df) if "lr1" in a["source"] for n in a["notes"]]
    assert any("read as fractions, not as a percent" in n and "1024 problems" in n for n in notes)
    # a percent sweep whose failed run stayed below 1 %: whole counts either way, read with its peers
    _counted_run(tmp_path / "pct" / "ok", percent=True, top=800)
    _counted_run(tmp_path / "pct" / "failed", percent=True, top=10)
    with pytest.warns(EntropyLawWarning, match=r"read as a percent in 1 run whose values stay within \[0, 1\] "
                                               r"\(failed/metrics.jsonl\)"):
        pct = el.load(str(tmp_path / "pct"))
    assert _series(pct[pct["run_id"] == "failed"], "val/answer_accuracy").max() == pytest.approx(10 / 1024)


def test_a_run_in_fractions_computed_in_float32_keeps_them_too(tmp_path):
    """A fraction of 1319 problems computed in float32 (a tensor's mean) is up to 1319 * 2^-24 off a
    whole count as JSON writes it: within the rounding of its 8 decimals it was no whole count, and
    the run was read as a percent with its peer (0.72 as 0.0072)."""
    _counted_run(tmp_path / "sweep" / "lr1", percent=False, top=1000, n=1319, float32=True)
    _counted_run(tmp_path / "sweep" / "lr2", percent=True, top=900, n=1319, float32=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", EntropyLawWarning)  # nothing re-read as a percent: no warning
        df = el.load(str(tmp_path / "sweep"))
    top = {r: _series(df[df["run_id"] == r], "val/answer_accuracy").max() for r in el.run_ids(df)}
    assert top == pytest.approx({r: round(t * (1 - math.exp(-100 / 30))) / 1319
                                 for r, t in {"lr1": 1000, "lr2": 900}.items()}, rel=1e-6)


def test_an_eval_rows_accuracy_wins_over_its_reward(tmp_path):
    """A custom trainer's eval row holding its accuracy and its mean reward was read as the reward
    (TRL's name for its summed reward, ``eval/reward``): 0.55 where the accuracy went from 0.13 to 0.53.
    The accuracy is the validation score, and the account says why; TRL's own eval/reward is unchanged."""
    rows = []
    for s in range(1, 41):
        rows.append({"type": "train", "grpo_step": s, "token_entropy": 0.5 - 0.01 * s, "train_reward": 0.3})
        if s % 5 == 0:
            rows.append({"type": "eval", "grpo_step": s, "answer_accuracy": 0.1 + 0.01 * s, "reward": 0.55,
                         "format_reward": 0.9, "num_examples": 1024})
    (tmp_path / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    df = el.load(str(tmp_path / "metrics.jsonl"))
    val = df[df["metric"].str.startswith("val/")]
    assert set(val["metric"]) == {"val/answer_accuracy"}, set(val["metric"])
    np.testing.assert_allclose(val.sort_values("step")["value"], [0.1 + 0.01 * s for s in range(5, 41, 5)])
    notes = " ".join(n for d in df.attrs["row_accounts"] for n in d["notes"])
    assert "an accuracy by its name" in notes and "'eval/reward'" in notes, notes
    trl = detect_keys(["eval/reward", "eval/rewards/accuracy_reward/mean", "train/reward"])
    assert trl.val == {"val/mean": "eval/reward"}  # one reward function: its sum is it
    two = detect_keys(["eval/reward", "eval/answer_accuracy", "eval/accuracy"])
    assert two.val == {} and any("2 keys could be it" in w for w in two.warnings), two  # no silent guess


def test_a_lines_metrics_wrapped_in_a_dict_read_as_their_own_names(tmp_path):
    """``{"step": 5, "split": "eval", "metrics": {"accuracy": 0.3}}``: the wrapper made the keys
    ``train/metrics/entropy`` (no entropy found) and ``eval/metrics/accuracy`` (a benchmark named
    "metrics"). A wrapper that says only "metrics" adds no part to a key's name."""
    rows = []
    for s in range(1, 31):
        rows.append({"step": s, "split": "train", "metrics": {"entropy": 0.6 - 0.01 * s, "reward": 0.2 + 0.01 * s}})
        if s % 5 == 0:
            rows.append({"step": s, "split": "eval", "metrics": {"accuracy": 0.1 + 0.01 * s}})
    (tmp_path / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    df = el.load(str(tmp_path / "metrics.jsonl"))
    assert set(df["metric"]) == {"entropy", "score", "val/accuracy"}, set(df["metric"])
    np.testing.assert_allclose(_series(df, "entropy").to_numpy(), [0.6 - 0.01 * s for s in range(1, 31)])


def test_a_run_folders_samples_and_console_are_no_runs(tmp_path):
    """A run folder beside its metrics.jsonl keeps the samples the model wrote (``samples.jsonl``:
    a prompt, a response and a reward a line) and its console output: the samples were read as a run
    of their own ("samples", "samples-2" beside each real run), and each skipped file printed its own
    warning. The samples are no run; files skipped alike in several run folders are said once."""
    for name in ("lr1", "lr2"):
        run = tmp_path / name
        run.mkdir()
        rows = [{"type": "train", "grpo_step": s, "token_entropy": 0.5 - 0.01 * s, "train_reward": 0.3}
                for s in range(1, 31)]
        rows += [{"type": "eval", "grpo_step": s, "answer_accuracy": 0.1 + 0.01 * s} for s in range(5, 31, 5)]
        (run / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
        (run / "samples.jsonl").write_text("\n".join(json.dumps(
            {"step": s, "prompt": "What is 2 + 2?", "response": "<answer>4</answer>", "reward": 1.0})
            for s in range(5, 31, 5) for _ in range(4)) + "\n")
    res = run_cli("summary", str(tmp_path), "--json")
    assert res.returncode == 0, res.stderr
    runs = [r["run_id"] for r in json.loads(res.stdout)["runs"]]
    assert sorted(runs) == ["lr1", "lr2"], runs
    said = " ".join(res.stderr.split())
    assert said.count("samples.jsonl skipped") == 1 and "2 files named samples.jsonl skipped" in said, res.stderr
    assert "a file of generated samples" in said
    alone = run_cli("summary", str(tmp_path / "lr1" / "samples.jsonl"))  # given alone: one line, exit 2
    assert alone.returncode == 2 and "a file of generated samples" in alone.stderr and "Traceback" not in alone.stderr


def _eval_counts(path: Path, n: int, **eval_row) -> pd.DataFrame:
    """A custom trainer's metrics.jsonl whose eval rows hold ``num_correct`` / ``correct`` counts of
    ``n`` problems (``eval_row``: the names, each a function of the count); returns the eval rows as
    written, for pandas to compute what the validation is."""
    rows, evals = [], []
    for s in range(0, 100):
        rows.append({"split": "train", "step": s, "entropy": 0.15 + math.exp(-s / 30), "reward": 0.2 + s / 200})
        if s % 10 == 0:
            k = round(n * (0.2 + 0.4 * (1 - math.exp(-s / 30))))
            row = {"split": "val", "step": s, **{name: f(k) for name, f in eval_row.items()}}
            rows.append(row)
            evals.append({"step": s, "k": k})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return pd.DataFrame(evals)


def test_a_count_of_problems_solved_is_no_accuracy_and_is_read_as_its_share(tmp_path):
    """An eval row with ``num_correct`` beside ``accuracy`` made the count a second validation
    (``val/num``, 100..290) averaged into ``val/mean`` with the accuracy (50..145); an eval row with
    only ``correct`` and ``total`` read 29 of 50 as 29 % (0.29, not 0.58). A count is no accuracy
    where one is logged, and where it is all there is, it is read as its share of the stated total."""
    both = _eval_counts(tmp_path / "both.jsonl", 500, num_correct=int, total=lambda k: 500,
                        accuracy=lambda k: k / 500)
    df = el.load(str(tmp_path / "both.jsonl"), warn=False)
    assert json.loads(df["val_keys"].iloc[0]) == {"val/accuracy": "val/accuracy"}
    assert "val/mean" not in set(df["metric"])
    np.testing.assert_allclose(_series(df, "val/accuracy").sort_index().to_numpy(), both["k"] / 500)
    for name in ("correct", "num_correct"):
        alone = _eval_counts(tmp_path / f"{name}.jsonl", 50, **{name: int, "total": lambda k: 50})
        df = el.load(str(tmp_path / f"{name}.jsonl"), warn=False)
        [(canon, key)] = json.loads(df["val_keys"].iloc[0]).items()
        assert key == f"val/{name}", key
        np.testing.assert_allclose(_series(df, canon).sort_index().to_numpy(), alone["k"] / 50)
        notes = " ".join(n for a in el.row_accounts(df) for n in a["notes"])
        assert "read as a count of them (divided by 50)" in notes, notes


def test_a_count_of_correct_answers_with_no_total_is_no_percent(tmp_path):
    """``correct`` 10..40 with no number of problems in the log was read as a percent (29 of 50
    problems as 0.29, not 0.58): it is a count of problems we do not know, read in its own units and
    said; a name that says a share (``pct_correct``) is still read as a percent."""
    counted = _eval_counts(tmp_path / "bare.jsonl", 50, correct=int)
    df = el.load(str(tmp_path / "bare.jsonl"), warn=False)
    np.testing.assert_allclose(_series(df, "val/correct").sort_index().to_numpy(), counted["k"])
    notes = " ".join(n for a in el.row_accounts(df) for n in a["notes"])
    assert "whole numbers named for correct answers, and the log states no number of problems" in notes, notes
    assert "read as a percent" not in notes, notes
    share = _eval_counts(tmp_path / "pct.jsonl", 50, pct_correct=lambda k: 2 * k)
    df = el.load(str(tmp_path / "pct.jsonl"), warn=False)
    [val] = [m for m in df["metric"].unique() if str(m).startswith("val/")]
    np.testing.assert_allclose(_series(df, val).sort_index().to_numpy(), share["k"] / 50)


def test_a_count_beside_a_stated_total_is_not_said_to_have_none(tmp_path):
    """``correct`` beside ``total`` 50, every count even (as whole as a percent of 50 would be: the
    count rule keeps a percent's guess) was said "the log states no number of problems" and read
    in its own units; it is read as the count rule reads it, and no such thing is said."""
    rows = _eval_counts(tmp_path / "even.jsonl", 25, correct=lambda k: 2 * k, total=lambda k: 50)
    df = el.load(str(tmp_path / "even.jsonl"), warn=False)
    notes = " ".join(n for a in el.row_accounts(df) for n in a["notes"])
    assert "states no number of problems" not in notes, notes
    [(val, key)] = json.loads(df["val_keys"].iloc[0]).items()
    assert key == "val/correct", key
    np.testing.assert_allclose(_series(df, val).sort_index().to_numpy(), 2 * rows["k"] / 100)


@pytest.mark.parametrize("split", ["valid", "validation", "test", "eval", "val"])
def test_eval_rows_tagged_by_any_split_name_are_the_validation(tmp_path, split):
    """Rows tagged ``"split": "valid"`` were read as ``valid/acc``, which no name rule took as a
    validation: the run was fitted on its training reward. Every split name a trainer uses is one."""
    rows, acc = [], {}
    for s in range(0, 60):
        rows.append({"split": "train", "step": s, "entropy": 0.2 + math.exp(-s / 20), "reward": s / 100})
        if s % 10 == 0:
            acc[s] = round(0.3 + s / 200, 4)
            rows.append({"split": split, "step": s, "acc": acc[s], "mean_length": 310.5})
    pd.DataFrame(rows).to_json(tmp_path / "metrics.jsonl", orient="records", lines=True)
    df = el.load(str(tmp_path / "metrics.jsonl"), warn=False)
    assert _series(df, "val/acc").to_dict() == pytest.approx(acc)


def test_a_log_with_an_example_answer_a_line_and_two_wrappers_reads_as_written(tmp_path):
    """The review's cases: a log of one line a step keeping an example completion beside its metrics
    was refused as a file of samples; a line with two wrappers (``metrics`` and ``stats``, each with a
    ``reward``) had its mean and its std averaged into one reward."""
    rows = [{"step": s, "ent": 0.5 - 0.01 * s, "reward": 0.3, "val_acc": 0.1 + 0.01 * s,
             "completion": "<think>2 + 2</think><answer>4</answer>"} for s in range(1, 31)]
    (tmp_path / "one.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    df = el.load(str(tmp_path / "one.jsonl"), entropy_key="ent", score_key="reward")
    assert set(df["metric"]) >= {"entropy", "score"} and (df["metric"] == "entropy").sum() == 30
    rows = [{"step": s, "metrics": {"reward": 0.31, "entropy": 0.5}, "stats": {"reward": 0.05}} for s in range(1, 11)]
    (tmp_path / "two.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    df = el.load(str(tmp_path / "two.jsonl"), score_key="metrics/reward")
    assert _series(df, "score").tolist() == [0.31] * 10


def test_a_val_key_named_as_the_output_prints_it_reads_the_key_it_names(tmp_path):
    """The output names a custom trainer's eval/answer_accuracy ``val/answer_accuracy``: given so to
    --val-key (as rank's advice for runs of several scores says), every run was left out for lacking it."""
    names = _takeoff_sweep(tmp_path / "runs")
    res = run_cli("rank", str(tmp_path / "runs"), "--fit-frac", "0.2", "--n-boot", "60", "--json",
                  "--val-key", "val/answer_accuracy")
    assert res.returncode == 0, res.stderr
    assert sorted(d["run_id"] for d in json.loads(res.stdout)) == names


def test_every_run_left_out_for_one_reason_says_it_once(tmp_path):
    """A --val-key no run has listed the same reason for each file, 3 of them in a line 1,400 long."""
    _takeoff_sweep(tmp_path / "runs")
    bad = run_cli("rank", str(tmp_path / "runs"), "--val-key", "eval/nope")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    assert "every one of 4 files skipped: --val-key 'eval/nope' not found" in bad.stderr
    assert bad.stderr.count("not found") == 1


def test_a_step_that_restarts_with_each_epoch_is_counted_on_not_resumed(tmp_path):
    """A loop logging ``{"epoch": e, "step": s}`` with ``s`` from 0 each epoch was read as two
    resumes: each epoch superseded the one before (80 of 120 entropies dropped). Where every place the
    step goes back is where the epoch goes up, the steps are counted on across epochs; a restart
    inside an epoch is still a resume."""
    rows = []
    for e in (1, 2, 3):
        for s in range(40):
            g = (e - 1) * 40 + s  # the global step, written independently of the reader
            rows.append({"epoch": e, "step": s, "entropy": 0.9 - 0.005 * g, "reward": 0.2 + 0.004 * g})
            if s % 10 == 9:
                rows.append({"epoch": e, "step": s, "eval/accuracy": 0.1 + 0.003 * g})
    (tmp_path / "epochs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    pd.DataFrame([r for r in rows if "entropy" in r]).to_csv(tmp_path / "epochs.csv", index=False)
    for name in ("epochs.jsonl", "epochs.csv"):
        df = el.load(str(tmp_path / name), warn=False)
        h = _series(df, "entropy")
        assert h.index.tolist() == list(range(120)), name
        np.testing.assert_allclose(h.to_numpy(), [0.9 - 0.005 * g for g in range(120)])
        notes = " ".join(n for d in df.attrs["row_accounts"] for n in d["notes"])
        assert "restarts with each epoch" in notes and "superseded" not in notes.replace("nothing superseded", "")
    # a resume inside epoch 2 (steps 30..39 logged again from 25): superseded, as before
    resumed = rows[:40] + [{"epoch": 2, "step": s, "entropy": 0.5, "reward": 0.5} for s in list(range(30)) +
                           list(range(25, 40))]
    (tmp_path / "resumed.jsonl").write_text("".join(json.dumps(r) + "\n" for r in resumed))
    df = el.load(str(tmp_path / "resumed.jsonl"), warn=False)
    notes = " ".join(n for d in df.attrs["row_accounts"] for n in d["notes"])
    assert "restarts with each epoch" not in notes and "resumed run" in notes, notes


def test_a_comment_line_is_no_lost_value(tmp_path):
    """A script's comment at the top of its JSON lines (``# run grpo lr=1e-6``) was counted as a value
    dropped from an unparseable line, and warned about. It holds none: said, not counted."""
    rows = [{"step": s, "entropy": 0.5 - 0.01 * s, "reward": 0.1 * s} for s in range(1, 6)]
    (tmp_path / "m.jsonl").write_text("# run grpo lr=1e-6\n" + "".join(json.dumps(r) + "\n" for r in rows)
                                      + "// done\n")
    res = run_cli("summary", str(tmp_path / "m.jsonl"), "--json")
    assert res.returncode == 0 and "warning" not in res.stderr, res.stderr
    [account] = json.loads(res.stdout)["row_accounts"]
    assert account["rows_dropped"] == 0 and any("2 comment lines" in n for n in account["notes"]), account
