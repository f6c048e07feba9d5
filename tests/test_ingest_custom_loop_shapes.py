"""Shapes a hand-written RL loop's logs take that were misread: metrics named as printed
(``Policy Entropy``, ``Val Accuracy``: no role found), a loss term logged as ``train/entropy_loss``
(minus the entropy times its coefficient: read as the entropy, below 0), and a count of problems
solved beside its stated total that reaches past 100 (112 of 200: read as 112 %, dropped)."""

from __future__ import annotations

import json
import math

import pytest

import entropylaw as el
from entropylaw import table


def _ent(s: int) -> float:
    return 0.8 * math.exp(-s / 30) + 0.05


def _acc(s: int) -> float:
    return 0.15 + 0.45 * (1 - math.exp(-s / 25))


def _series(df, metric):
    return df[df["metric"] == metric].set_index("step")["value"].sort_index()


def _notes(df) -> str:
    return " ".join(n for a in el.row_accounts(df) for n in a["notes"])


def test_metric_names_with_spaces_and_capitals_fill_their_roles(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps({"step": s, "Policy Entropy": _ent(s), "Mean Reward": 0.2 + s / 200,
                                        **({"Val Accuracy": _acc(s)} if s % 10 == 0 else {})}) + "\n"
                            for s in range(1, 61)))
    df = el.load(path, warn=False)
    [row] = table.runs(df).to_dict("records")
    assert (row["entropy_key"], row["score_key"]) == ("Policy Entropy", "Mean Reward")
    assert json.loads(row["val_keys"]) == {"val/Accuracy": "Val Accuracy"}
    assert _series(df, "val/Accuracy").to_dict() == pytest.approx({s: _acc(s) for s in range(10, 61, 10)})
    assert len(_series(df, "entropy")) == 60 and el.row_accounts(df)[0]["dropped"] == {}


def test_tensorboard_tags_with_spaces_fill_their_roles(tmp_path):
    SummaryWriter = pytest.importorskip("torch.utils.tensorboard").SummaryWriter
    writer = SummaryWriter(log_dir=str(tmp_path / "run1"))
    for s in range(1, 31):
        writer.add_scalar("Policy Entropy", _ent(s), s)
        writer.add_scalar("Reward/train", 0.2 + s / 100, s)
    writer.close()
    df = el.load(tmp_path / "run1", warn=False)
    assert table.runs(df)["entropy_key"].tolist() == ["Policy Entropy"]
    assert _series(df, "entropy").iloc[-1] == pytest.approx(_ent(30), rel=1e-6)


def test_a_negative_entropy_loss_is_not_the_entropy(tmp_path):
    """``train/entropy_loss`` = -0.01 * entropy (a loop's, Stable-Baselines3's loss term) was read as the
    entropy (-0.008 .. -0.002) beside the entropy itself, logged as ``train/ent``, and said nothing."""
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps({"step": s, "train/entropy_loss": -0.01 * _ent(s), "train/ent": _ent(s),
                                        "train/reward": 0.2 + s / 200}) + "\n" for s in range(1, 41)))
    with pytest.warns(Warning, match="below 0: a loss"):  # said on the console too
        df = el.load(path, warn=False)
    assert table.runs(df)["entropy_key"].tolist() == ["train/ent"]
    assert _series(df, "entropy").min() > 0
    assert "'train/entropy_loss' ranges -0.008" in _notes(df) and "not the entropy" in _notes(df)
    # veRL's and OpenRLHF's entropy_loss is the entropy (positive): still read as it
    path.write_text("".join(json.dumps({"step": s, "train/entropy_loss": _ent(s), "train/reward": 0.2}) + "\n"
                            for s in range(1, 41)))
    assert table.runs(el.load(path, warn=False))["entropy_key"].tolist() == ["train/entropy_loss"]


@pytest.mark.parametrize("prefix", ["eval/", "eval_"])
def test_a_count_past_100_of_its_stated_total_is_read_as_its_share(tmp_path, prefix):
    """``eval/correct`` 60..112 of ``eval/total`` 200: every count even, as whole as a percent of 200
    would be, so it was guessed a percent (0.60 .. 1.12, the 102 and 112 dropped as above 100 %);
    no percent lies above 100: it is a count, 60 / 200 = 0.30."""
    path = tmp_path / "log.jsonl"
    lines = []
    for s in range(1, 61):
        row = {"step": s, "entropy": _ent(s), "reward": 0.2 + s / 200}
        if s % 10 == 0:
            row.update({f"{prefix}correct": 2 * round(_acc(s) * 100), f"{prefix}total": 200})
        lines.append(json.dumps(row) + "\n")
    path.write_text("".join(lines))
    df = el.load(path, warn=False)
    [(canon, key)] = json.loads(df["val_keys"].iloc[0]).items()
    assert key == f"{prefix}correct"
    assert _series(df, canon).to_dict() == pytest.approx({s: 2 * round(_acc(s) * 100) / 200
                                                          for s in range(10, 61, 10)})
    assert el.row_accounts(df)[0]["dropped"] == {} and "divided by 200" in _notes(df)


def test_ent_is_the_entropy_by_name_and_names_are_read_as_their_words():
    from entropylaw.readers.key_names import by_name

    assert by_name(["ent", "reward"])[0] == "ent" and by_name(["train/ent"])[0] == "train/ent"
    assert by_name(["ent_coef"])[0] == "" and by_name(["H"])[0] == ""  # a coefficient; a letter says nothing
    assert by_name(["train/Policy Entropy", "train/Mean Reward", "eval/Accuracy"])[:3] == (
        "train/Policy Entropy", "train/Mean Reward", {"val/Accuracy": "eval/Accuracy"})


def test_a_csv_of_several_seeds_with_a_seed_column_is_a_run_per_seed(tmp_path):
    """A sweep's seeds in one ``pandas.to_csv`` (its unnamed index column, a ``seed`` column): read as one
    run whose step went back at each new seed, 2 of its 3 seeds were dropped as a resume's superseded rows."""
    pd = pytest.importorskip("pandas")
    rows = [{"seed": seed, "step": s, "entropy": _ent(s) * (1 + 0.05 * seed), "reward": 0.2 + s / 200 - 0.02 * seed,
             "val_acc": _acc(s) if s % 10 == 0 else None} for seed in (0, 1, 2) for s in range(1, 41)]
    pd.DataFrame(rows).to_csv(tmp_path / "sweep.csv")
    df = el.load(tmp_path / "sweep.csv", warn=False)
    runs = table.runs(df).set_index("run_id")
    assert sorted(runs.index) == ["sweep_seed0", "sweep_seed1", "sweep_seed2"]
    assert runs["seed"].to_dict() == {"sweep_seed0": 0, "sweep_seed1": 1, "sweep_seed2": 2}
    one = df[df["run_id"] == "sweep_seed2"]
    assert _series(one, "entropy").to_dict() == pytest.approx({s: _ent(s) * 1.1 for s in range(1, 41)})
    assert "seed" not in set(df["metric"])
    assert all(a["dropped"] == {} for a in el.row_accounts(df))
    # a seed column of one seed, or whose seeds share no step, parts nothing
    pd.DataFrame(rows[:40]).to_csv(tmp_path / "one.csv", index=False)
    assert table.runs(el.load(tmp_path / "one.csv", warn=False))["run_id"].tolist() == ["one"]


def test_a_printed_key_of_several_words_keeps_them(tmp_path):
    """``logger.info(f"Eval at step {s}: Val Accuracy={100 * acc:.2f}")`` was read as a key ``Accuracy`` (no
    validation: the run was fitted on its training reward), ``| Policy Entropy: 0.82`` as ``Entropy``."""
    import logging

    logger = logging.getLogger(f"grpo-{tmp_path.name}")
    handler = logging.FileHandler(tmp_path / "train.log", "w")
    handler.setFormatter(logging.Formatter("%(asctime)s - %(name)s - %(levelname)s - %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    for s in range(1, 46):
        logger.info(f"Step {s}/45: loss=0.1000, entropy={_ent(s):.4f}, reward={0.2 + s / 200:.4f}")
        if s % 5 == 0:
            logger.info(f"Eval at step {s}: Val Accuracy={100 * _acc(s):.2f}")
    handler.close()
    logger.removeHandler(handler)
    df = el.load(tmp_path / "train.log", warn=False)
    [row] = table.runs(df).to_dict("records")
    assert json.loads(row["val_keys"]) == {"val/Accuracy": "Val Accuracy"}
    assert _series(df, "val/Accuracy").to_dict() == pytest.approx({s: _acc(s) for s in range(5, 46, 5)}, abs=1e-4)
    lines = [f"Iter {s} | Policy Entropy: {_ent(s):.4f} | Mean Reward: {0.2 + s / 200:.4f}\n" for s in range(1, 31)]
    (tmp_path / "caps.log").write_text("".join(lines))
    [row] = table.runs(el.load(tmp_path / "caps.log", warn=False)).to_dict("records")
    assert (row["entropy_key"], row["score_key"]) == ("Policy Entropy", "Mean Reward")


def test_a_printed_count_of_its_total_is_read_as_its_share(tmp_path):
    """``step 10 | eval correct 60/500`` was not read at all (a line with no value, said nowhere), and
    ``acc: 60/500`` read as 60 (a percent: 0.60, not 0.12)."""
    lines = []
    for s in range(1, 46):
        lines.append(f"step {s} | entropy {_ent(s):.4f} | reward {0.2 + s / 200:.4f}\n")
        if s % 10 == 0:
            lines.append(f"step {s} | eval correct {round(_acc(s) * 500)}/500\n")
    (tmp_path / "count.log").write_text("".join(lines))
    df = el.load(tmp_path / "count.log", warn=False)
    [(canon, key)] = json.loads(df["val_keys"].iloc[0]).items()
    assert key == "eval correct"
    assert _series(df, canon).to_dict() == pytest.approx({s: round(_acc(s) * 500) / 500 for s in range(10, 41, 10)})
    assert "read as its share" in _notes(df)
    (tmp_path / "colon.log").write_text("".join(f"Step {s}: entropy={_ent(s):.4f}, val_acc: {60 + s}/500\n"
                                                for s in range(1, 11)))
    assert _series(el.load(tmp_path / "colon.log", warn=False), "val/acc").iloc[0] == pytest.approx(61 / 500)


def test_rewards_logged_a_value_a_sample_are_read_as_their_mean(tmp_path):
    """``"rewards": [0, 1, 1, 0]`` (the group's rewards as a loop has them) was dropped as a non-numeric value
    on every line: the run had no training score."""
    lines = [json.dumps({"step": s, "entropy": _ent(s), "rewards": [int(i < s % 8) for i in range(8)]}) + "\n"
             for s in range(1, 41)]
    (tmp_path / "log.jsonl").write_text("".join(lines))
    df = el.load(tmp_path / "log.jsonl", warn=False)
    assert table.runs(df)["score_key"].tolist() == ["rewards"]
    assert _series(df, "score").to_dict() == pytest.approx({s: (s % 8) / 8 for s in range(1, 41)})
    [acct] = el.row_accounts(df)
    assert acct["dropped"] == {} and "read as their mean: 'rewards' (8 values)" in _notes(df)
    # a list of text or of lists is still no number: dropped, counted
    (tmp_path / "text.jsonl").write_text("".join(json.dumps({"step": s, "entropy": 0.5, "reward": 0.1,
                                                             "samples": ["a", "b"]}) + "\n" for s in range(1, 4)))
    assert el.row_accounts(el.load(tmp_path / "text.jsonl", warn=False))[0]["dropped"] == {"non-numeric value": 3}


def test_a_printed_step_that_restarts_each_epoch_is_counted_on(tmp_path):
    """``Epoch 2/3 | Step 1/20 | ...``: the step went back at each epoch, read as two resumes that dropped the
    first two epochs (124 of 186 values), and its 20 taken as the run's planned last step (it has 60)."""
    lines, g = [], 0
    for e in range(1, 4):
        for s in range(1, 21):
            g += 1
            lines.append(f"Epoch {e}/3 | Step {s}/20 | entropy {_ent(g):.4f} | reward {0.2 + g / 200:.4f}\n")
        lines.append(f"Epoch {e}/3 | Step 20/20 | val_acc {_acc(g):.4f}\n")
    (tmp_path / "train.log").write_text("".join(lines))
    df = el.load(tmp_path / "train.log", warn=False)
    assert _series(df, "entropy").to_dict() == pytest.approx({g: round(_ent(g), 4) for g in range(1, 61)})
    assert _series(df, "val/acc").to_dict() == pytest.approx({g: round(_acc(g), 4) for g in (20, 40, 60)})
    assert el.row_accounts(df)[0]["dropped"] == {} and "restarts with each epoch" in _notes(df)
    assert json.loads(df["config"].iloc[0]) == {"total_steps": 60}
    # with no planned epochs printed, the step's total plans nothing; a step that does not restart keeps its plan
    (tmp_path / "bare.log").write_text("".join(ln.replace("/3", "") for ln in lines))
    assert json.loads(el.load(tmp_path / "bare.log", warn=False)["config"].iloc[0]) == {}
    (tmp_path / "plan.log").write_text("".join(f"Epoch 1 | step {s}/500 | entropy 0.5 | reward 0.1\n"
                                               for s in range(1, 6)))
    assert json.loads(el.load(tmp_path / "plan.log", warn=False)["config"].iloc[0]) == {"total_steps": 500}


def test_a_count_beside_its_eval_n_is_read_as_its_share(tmp_path):
    """``{"eval": {"correct": 232, "n": 500}}``: ``n`` was no size, and the count was read in its own units
    (116 .. 232), a ceiling in problems solved."""
    lines = []
    for s in range(1, 31):
        row = {"step": s, "entropy": _ent(s), "reward": 0.2 + s / 200}
        if s % 5 == 0:
            row["eval"] = {"correct": round(_acc(s) * 500), "n": 500}
        lines.append(json.dumps(row) + "\n")
    (tmp_path / "log.jsonl").write_text("".join(lines))
    df = el.load(tmp_path / "log.jsonl", warn=False)
    assert _series(df, "val/correct").to_dict() == pytest.approx({s: round(_acc(s) * 500) / 500
                                                                  for s in range(5, 31, 5)})
    assert "of the 500 problems the log states" in _notes(df)


def test_a_config_line_before_the_first_step_is_the_runs_config(tmp_path):
    """A loop's ``json.dumps(vars(args))`` first, then its metrics: the config line was "unparseable" and its
    numbers counted as values dropped (a warning on every command), and the model it names went unread."""
    config = {"model": "Qwen/Qwen2.5-0.5B-Instruct", "lr": 1e-6, "seed": 3, "group_size": 8}
    lines = [json.dumps(config) + "\n"] + [json.dumps({"step": s, "entropy": _ent(s), "reward": 0.2 + s / 200}) + "\n"
                                           for s in range(1, 31)]
    (tmp_path / "metrics.jsonl").write_text("".join(lines))
    df = el.load(tmp_path / "metrics.jsonl", warn=False)
    [acct] = el.row_accounts(df)
    assert acct["dropped"] == {} and acct["rows_read"] == 60
    assert "the run's config (line 1): not read as values" in _notes(df)
    [row] = table.runs(df).to_dict("records")
    assert row["model"] == "Qwen/Qwen2.5-0.5B-Instruct" and row["seed"] == 3
    # a line of numbers with no step is no config: dropped and counted, as before
    (tmp_path / "numbers.jsonl").write_text(json.dumps({"loss": 0.5}) + "\n" + "".join(lines[1:]))
    assert el.row_accounts(el.load(tmp_path / "numbers.jsonl", warn=False))[0]["dropped"] == \
        {"missing or non-integer step": 1}
    # no line with a step at all: still refused, naming the keys
    (tmp_path / "none.jsonl").write_text(json.dumps(config) + "\n")
    with pytest.raises(el.EntropyLawError, match="no line has a step"):
        el.load(tmp_path / "none.jsonl", warn=False)


def test_a_capitalised_step_is_the_step_and_a_log_of_epochs_says_what_a_step_is(tmp_path):
    """``{"Step": 3, ...}`` was refused ("no line has a step"); a printed log of ``epoch 0.07 | ...`` lines was
    refused as "no veRL step lines", which named no shape a custom loop prints."""
    (tmp_path / "caps.jsonl").write_text("".join(json.dumps({"Step": s, "entropy": _ent(s), "reward": 0.3}) + "\n"
                                                 for s in range(1, 11)))
    df = el.load(tmp_path / "caps.jsonl", warn=False)
    assert sorted(_series(df, "entropy").index) == list(range(1, 11)) and "seen" not in _notes(df)
    # (two lines of them: from three on, a log of no step reads its lines as records, tests/test_ingest_followups.py)
    (tmp_path / "epochs.log").write_text("".join(f"epoch {s / 15:.2f} | entropy {_ent(s):.4f} | reward 0.3\n"
                                                 for s in range(1, 3)))
    with pytest.raises(el.EntropyLawError, match=r"epochs.log: .*a loop's printed steps \('step 10 \| entropy"):
        el.load(tmp_path / "epochs.log", warn=False)


def test_a_line_an_evaluation_printed_holds_the_validation(tmp_path):
    """``[Eval] step 10: accuracy = 0.45`` beside training lines that print their own ``accuracy``: the two were
    averaged into one value at each evaluated step, and the run had no validation."""
    lines = []
    for s in range(1, 41):
        lines.append(f"step {s} | entropy {_ent(s):.4f} | reward {0.2 + s / 200:.4f} | accuracy {0.1 + s / 100:.4f}\n")
        if s % 10 == 0:
            lines.append(f"[Eval] step {s}: accuracy = {_acc(s):.4f}\n")
    (tmp_path / "train.log").write_text("".join(lines))
    df = el.load(tmp_path / "train.log", warn=False)
    assert _series(df, "val/accuracy").to_dict() == pytest.approx({s: round(_acc(s), 4) for s in range(10, 41, 10)})
    assert _series(df, "accuracy").to_dict() == pytest.approx({s: round(0.1 + s / 100, 4) for s in range(1, 41)})
    assert el.row_accounts(df)[0]["dropped"] == {} and "each key read as eval/<key>" in _notes(df)
    # a logger's name before the step is no evaluation's word (logging's "INFO:test:step 1 ...")
    (tmp_path / "named.log").write_text("".join(f"INFO:test:step {s} entropy={_ent(s):.4f} reward=0.3\n"
                                                for s in range(1, 11)))
    assert len(_series(el.load(tmp_path / "named.log", warn=False), "entropy")) == 10


def test_a_printed_list_of_numbers_is_read_as_its_mean(tmp_path):
    """``step 5 | entropy 0.5 | rewards [0, 1, 1, 0]`` (a loop printing its group's rewards): the list was passed
    over, said nowhere, and the run had no training score."""
    (tmp_path / "train.log").write_text("".join(
        f"step {s} | entropy {_ent(s):.4f} | rewards [{', '.join(str(int(i < s % 4)) for i in range(4))}]\n"
        for s in range(1, 21)) + "step 21 | entropy 0.3 | rewards [inf, -inf]\n")
    df = el.load(tmp_path / "train.log", warn=False)
    assert table.runs(df)["score_key"].tolist() == ["rewards"]
    assert _series(df, "score").to_dict() == pytest.approx({s: (s % 4) / 4 for s in range(1, 21)})
    [acct] = el.row_accounts(df)
    assert acct["dropped"] == {"non-finite value": 1} and "read as their mean: rewards (4 values)" in _notes(df)


def test_a_printed_field_with_a_number_no_shape_reads_is_said(tmp_path):
    """``step 10 | entropy 0.5 | time 3.2s``: a field the reader cannot take as a key and its value was passed
    over silently (a score printed so was lost unsaid)."""
    (tmp_path / "train.log").write_text("".join(f"step {s} | entropy {_ent(s):.4f} | reward 0.3 | time {s}.2s\n"
                                                for s in range(1, 11)) + "step 11 | took 3.2s\n")
    df = el.load(tmp_path / "train.log", warn=False)
    assert "11 fields with a number not read as a key and its value (the first at line 1: 'time 1.2s')" in _notes(df)
    assert len(_series(df, "entropy")) == 10


def test_a_seed_that_changes_within_a_step_is_a_samples_and_parts_no_runs(tmp_path):
    """A rollout dump's rows (a sample each, its own seed, 8 rows a step) were parted on the seed column as a
    sweep's: 240 runs of one step. The rule: a seed column parts runs where the seed changes only where the step
    goes back (a sweep written seed after seed); a seed that changes between rows of one step is a sample's."""
    pd = pytest.importorskip("pandas")
    rows = [{"step": s, "seed": 1000 * s + 37 * k, "entropy": _ent(s), "reward": 0.2 + s / 200 + 0.01 * (k - 3.5)}
            for s in range(1, 31) for k in range(8)]
    pd.DataFrame(rows).to_csv(tmp_path / "rollouts.csv", index=False)
    # a seed twice in one step (a prompt's seed, its samples beside it): a sample's too
    pd.DataFrame([dict(r, seed=s_k // 2) for s_k, r in enumerate(rows)]).to_csv(tmp_path / "prompts.csv",
                                                                                   index=False)
    for name in ("rollouts", "prompts"):
        df = el.load(tmp_path / f"{name}.csv", warn=False)
        assert table.runs(df)["run_id"].tolist() == [name]
        assert _series(df, "score").to_dict() == pytest.approx({s: 0.2 + s / 200 for s in range(1, 31)})
        assert "seed" not in set(df["metric"])
        [account] = el.row_accounts(df)
        assert account["dropped"] == {"averaged with its step's other rows": 2 * 30 * 7}
        assert "seed (a sample's seed" in _notes(df)
    # the sweep's seed, each seed's steps in a block of its own, still parts its runs
    sweep = [{"seed": seed, "step": s, "entropy": _ent(s), "reward": 0.2 + s / 200}
             for seed in (0, 1) for s in range(1, 31)]
    pd.DataFrame(sweep).to_csv(tmp_path / "sweep.csv", index=False)
    assert table.runs(el.load(tmp_path / "sweep.csv", warn=False))["run_id"].tolist() == ["sweep_seed0", "sweep_seed1"]
    # the same sweep sorted by step (seeds 0, 1, 0, 1, ...: each seed once at every step) is still a run per seed
    pd.DataFrame(sweep).sort_values(["step", "seed"]).to_csv(tmp_path / "by_step.csv", index=False)
    df = el.load(tmp_path / "by_step.csv", warn=False)
    assert table.runs(df)["run_id"].tolist() == ["by_step_seed0", "by_step_seed1"]
    assert len(df[(df["run_id"] == "by_step_seed1") & (df["metric"] == "score")]) == 30


def test_a_sweep_sorted_by_step_with_evaluation_rows_is_a_run_per_seed(tmp_path):
    """A sweep's CSV sorted by step, each seed's evaluation a row of its own beside its training row at every
    10th step (the seed twice at that step), was read as one run, its seeds averaged: a prompt's seed twice
    in one step fills the same cells, a seed's training and evaluation rows do not."""
    pd = pytest.importorskip("pandas")
    rows = []
    for s in range(1, 31):
        for seed in (0, 1, 2):
            rows.append({"step": s, "seed": seed, "entropy": _ent(s), "reward": 0.2 + s / 200 - 0.02 * seed})
            if s % 10 == 0:
                rows.append({"step": s, "seed": seed, "val_acc": _acc(s) - 0.01 * seed})
    pd.DataFrame(rows).to_csv(tmp_path / "sweep.csv", index=False)
    df = el.load(tmp_path / "sweep.csv", warn=False)
    assert table.runs(df)["run_id"].tolist() == ["sweep_seed0", "sweep_seed1", "sweep_seed2"]
    one = df[df["run_id"] == "sweep_seed1"]
    assert one[one["metric"] == "val/acc"].set_index("step")["value"].to_dict() == pytest.approx(
        {s: _acc(s) - 0.01 for s in (10, 20, 30)})


@pytest.mark.parametrize("kept", [
    lambda seed, s: not (seed == 2 and s > 20),  # seed 2 crashed at step 20
    lambda seed, s: not (seed == 2 and s < 10),  # seed 2 started at step 10
])
def test_a_sweep_sorted_by_step_with_a_seed_that_crashed_or_started_late_is_a_run_per_seed(tmp_path, kept):
    """A sweep's CSV sorted by step whose seed 2 crashed at step 20 (or started at step 10) was read as one run,
    its seeds averaged, the seed column taken for a sample's: a seed once a step at many steps is a sweep's."""
    pd = pytest.importorskip("pandas")
    rows = [{"step": s, "seed": seed, "entropy": _ent(s) * (1 + 0.05 * seed), "reward": 0.2 + s / 200 - 0.02 * seed}
            for s in range(1, 31) for seed in (0, 1, 2) if kept(seed, s)]
    pd.DataFrame(rows).to_csv(tmp_path / "sweep.csv", index=False)
    df = el.load(tmp_path / "sweep.csv", warn=False)
    assert table.runs(df)["run_id"].tolist() == ["sweep_seed0", "sweep_seed1", "sweep_seed2"]
    assert len(df[(df["run_id"] == "sweep_seed2") & (df["metric"] == "score")]) == sum(kept(2, s) for s in range(1, 31))


def test_a_json_lines_sample_seed_is_no_metric(tmp_path):
    """A rollout dump's JSON lines, each its own seed, read the seed as a metric: its mean a step (500000 or so),
    a key of no quantity beside the reward. A seed that changes between two lines of one step is set aside, said;
    a sweep's seeds written one after the other (the seed changing where the step goes back) are not."""
    path = tmp_path / "rollouts.jsonl"
    path.write_text("".join(json.dumps({"step": s, "seed": 1000 * s + 37 * k, "entropy": _ent(s),
                                        "reward": 0.2 + s / 200 + 0.01 * (k - 3.5)}) + "\n"
                            for s in range(1, 31) for k in range(8)))
    df = el.load(path, warn=False)
    assert set(df["metric"]) == {"entropy", "score"}
    assert _series(df, "score").to_dict() == pytest.approx({s: 0.2 + s / 200 for s in range(1, 31)})
    [account] = el.row_accounts(df)
    assert account["rows_read"] == 2 * 240 and account["dropped"] == {"averaged with its step's other rows": 2 * 210}
    assert "seed (a sample's seed" in _notes(df)
    sweep = tmp_path / "sweep.jsonl"
    sweep.write_text("".join(json.dumps({"seed": seed, "step": s, "entropy": _ent(s)}) + "\n"
                             for seed in (0, 1) for s in range(1, 31)))
    assert "a sample's seed" not in _notes(el.load(sweep, warn=False))


def test_a_json_lines_sweep_written_seed_after_seed_is_a_run_per_seed(tmp_path):
    """A sweep's JSON lines, seed 1's steps then seed 2's and 3's, were read as one run resumed twice: the first two
    seeds dropped as superseded by a resumed segment, ``seed`` read as a metric. Read as the CSV of that shape is:
    a run per seed, named ``<file>_seed<k>``, its seed in the run's metadata."""
    path = tmp_path / "sweep.jsonl"
    path.write_text("".join(json.dumps({"seed": seed, "step": s, "entropy": _ent(s) * (1 + 0.05 * seed),
                                        "reward": 0.2 + s / 200 - 0.02 * seed}) + "\n"
                            for seed in (1, 2, 3) for s in range(1, 41)))
    df = el.load(path, warn=False)
    runs = table.runs(df).set_index("run_id")
    assert sorted(runs.index) == ["sweep_seed1", "sweep_seed2", "sweep_seed3"]
    assert runs["seed"].to_dict() == {"sweep_seed1": 1, "sweep_seed2": 2, "sweep_seed3": 3}
    assert "seed" not in set(df["metric"])
    one = df[df["run_id"] == "sweep_seed1"]
    assert _series(one, "entropy").to_dict() == pytest.approx({s: _ent(s) * 1.05 for s in range(1, 41)})
    accounts = el.row_accounts(df)
    assert all(a["dropped"] == {} and a["rows_read"] == a["rows_kept"] == 80 for a in accounts)
    assert "lines of seed 2 (the file's 'seed' key parts its runs: 3 seeds)" in _notes(df)
    # a bad line of the file is counted once, in the first seed's account (the file's drops are no one seed's)
    lines = path.read_text().splitlines(keepends=True)
    lines.insert(50, '{"seed": 2, "step": "oops", "entropy": 0.5}\n')
    path.write_text("".join(lines))
    assert [sum(a["dropped"].values()) for a in el.row_accounts(el.load(path, warn=False))] == [2, 0, 0]
