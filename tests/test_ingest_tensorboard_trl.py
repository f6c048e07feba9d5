"""TensorBoard dirs written by torch's SummaryWriter and TRL states written by transformers."""

from __future__ import annotations

import json

import numpy as np
import pytest

from entropylaw import table
from entropylaw.errors import EntropyLawError
from entropylaw.readers.dispatch import detect_format, load

rng = np.random.default_rng(1)


def test_tensorboard_round_trip_and_resume(tmp_path):
    from torch.utils.tensorboard import SummaryWriter

    logdir = tmp_path / "tb"
    h, r = rng.random(8) * 2, rng.random(8)
    w = SummaryWriter(str(logdir / "grpo_qwen2.5-3b"))
    for step in range(8):
        w.add_scalar("actor/entropy", h[step], step)
        w.add_scalar("critic/score/mean", r[step], step)
    w.close()
    # a resumed run: a second event file in the same directory restarting at step 5
    h2 = rng.random(4)
    w = SummaryWriter(str(logdir / "grpo_qwen2.5-3b"))
    for i, step in enumerate(range(5, 9)):
        w.add_scalar("actor/entropy", h2[i], step)
    w.close()
    w = SummaryWriter(str(logdir / "other"))
    w.add_scalar("train/entropy", 0.75, 3)
    w.close()

    assert detect_format(logdir) == "tensorboard"
    df, reports = load([str(logdir)])
    assert sorted(df["run_id"].unique()) == ["grpo_qwen2.5-3b", "other"]
    ent = table.series(df, "grpo_qwen2.5-3b", "entropy")
    expected = np.concatenate([h[:5], h2]).astype(np.float32)  # TensorBoard stores float32
    assert ent.index.tolist() == list(range(9))
    assert np.array_equal(ent.to_numpy().astype(np.float32), expected)
    assert np.array_equal(table.series(df, "grpo_qwen2.5-3b", "score").to_numpy().astype(np.float32),
                          r.astype(np.float32))
    rep = next(x for x in reports if x.rows_dropped)
    assert dict(rep.dropped) == {"superseded by resumed segment": 3} and rep.balanced()
    assert any("restart at 5" in n for n in rep.notes)
    assert table.series(df, "other", "entropy").to_dict() == {3: 0.75}
    assert df[df["run_id"] == "grpo_qwen2.5-3b"]["n_params"].iloc[0] == 3e9


def test_trl_trainer_state_round_trip(tmp_path):
    from transformers import TrainerState

    history = []
    values = {}
    for step in range(1, 11):
        entry = {"epoch": step / 10, "step": step, "loss": float(rng.random()), "entropy": float(rng.random()),
                 "reward": float(rng.random()), "completions/mean_length": float(100 + step),
                 "rewards/accuracy_reward/mean": float(rng.random()), "learning_rate": 1e-6}
        history.append(entry)
        values[step] = entry
        if step % 5 == 0:
            history.append({"epoch": step / 10, "step": step, "eval_reward": step / 20, "eval_loss": 0.5})
    history.append({"epoch": 1.0, "step": 10, "train_runtime": 12.5, "total_flos": 0.0, "train_loss": 0.1})
    out = tmp_path / "qwen-grpo" / "checkpoint-10"
    out.mkdir(parents=True)
    TrainerState(global_step=10, log_history=history).save_to_json(str(out / "trainer_state.json"))
    (out / "config.json").write_text(json.dumps({"_name_or_path": "Qwen/Qwen2.5-0.5B-Instruct"}))
    older = tmp_path / "qwen-grpo" / "checkpoint-5"
    older.mkdir()
    TrainerState(global_step=5, log_history=history[:6]).save_to_json(str(older / "trainer_state.json"))

    root = tmp_path / "qwen-grpo"
    assert detect_format(root) == "trl"
    df, [report] = load([str(root)])
    run = "qwen-grpo"
    assert df["run_id"].unique().tolist() == [run]
    assert table.series(df, run, "entropy").to_dict() == {s: e["entropy"] for s, e in values.items()}
    assert table.series(df, run, "score").to_dict() == {s: e["reward"] for s, e in values.items()}
    assert table.series(df, run, "response_length").to_dict() == {s: 100.0 + s for s in values}
    assert table.series(df, run, "val/mean").to_dict() == {5: 0.25, 10: 0.5}
    meta = df.iloc[0]
    assert (meta.model, meta.n_params, meta.entropy_key, meta.score_key) == \
        ("Qwen2.5-0.5B-Instruct", 0.5e9, "entropy", "reward")
    # epoch repeats in the eval entries and in the final summary entry: bookkeeping, not data loss
    assert dict(report.dropped) == {} and report.balanced()
    assert "not counted as rows: epoch x3" in " ".join(report.notes)


@pytest.mark.parametrize("content, message", [("", "empty file"), ("{}", "no 'log_history' list"),
                                              ("{not json", "not valid JSON")])
def test_trl_bad_state(tmp_path, content, message):
    p = tmp_path / "trainer_state.json"
    p.write_text(content)
    with pytest.raises(EntropyLawError, match=f"{p}.*{message}"):
        load([str(p)])


def test_a_summary_writers_tags_named_metric_then_split_and_its_add_scalars_folders(tmp_path):
    """PyTorch's tutorial tags (``Entropy/train``, ``Reward/train``, ``Accuracy/val``) were found as no
    entropy, score or validation; ``add_scalars("Loss", {"val": ..., "train": ...})``, which writes each
    series to a folder of its own (``run/Loss_val``), made two more runs, ``run/Loss_val`` and
    ``run/Loss_train``. The tags fill their roles, and the folders are the run's keys ``Loss/val``..."""
    from torch.utils.tensorboard import SummaryWriter

    h, r, acc = 0.2 + rng.random(30), rng.random(30), rng.random(30)
    w = SummaryWriter(str(tmp_path / "tb" / "run"))
    for step in range(30):
        w.add_scalar("Entropy/train", h[step], step)
        w.add_scalar("Reward/train", r[step], step)
        if step % 5 == 0:
            w.add_scalar("Accuracy/val", acc[step], step)
            w.add_scalars("Loss", {"val": h[step] / 2, "train": h[step] / 3}, step)
    w.close()
    df, _ = load([str(tmp_path / "tb")])
    assert list(df["run_id"].unique()) == ["run"]
    np.testing.assert_allclose(table.series(df, "run", "entropy"), h.astype(np.float32), rtol=1e-7)
    np.testing.assert_allclose(table.series(df, "run", "score"), r.astype(np.float32), rtol=1e-7)
    np.testing.assert_allclose(table.series(df, "run", "val/Accuracy"), acc[::5].astype(np.float32), rtol=1e-7)
    np.testing.assert_allclose(table.series(df, "run", "Loss/val"), (h[::5] / 2).astype(np.float32), rtol=1e-7)
    np.testing.assert_allclose(table.series(df, "run", "Loss/train"), (h[::5] / 3).astype(np.float32), rtol=1e-7)
    (tmp_path / "tb" / "run" / "Loss_val").rename(tmp_path / "tb" / "Loss_val")  # no longer beside its run: a run
    df, _ = load([str(tmp_path / "tb")])
    assert sorted(df["run_id"].unique()) == ["Loss_val", "run"]


def test_a_runs_tensorboard_folder_is_named_for_its_run(tmp_path):
    """NeMo-RL writes <log_dir>/tensorboard/: the run read from it was named 'tensorboard' (a sweep of
    such runs: 'a/tensorboard', 'b/tensorboard')."""
    from torch.utils.tensorboard import SummaryWriter

    for run in ("exp-a", "exp-b"):
        w = SummaryWriter(str(tmp_path / "sweep" / run / "tensorboard"))
        for step in range(4):
            w.add_scalar("train/approx_entropy", 0.5 - 0.05 * step, step)
            w.add_scalar("train/reward", 0.2 + 0.1 * step, step)
        w.close()
    for given, want in [(tmp_path / "sweep" / "exp-a" / "tensorboard", ["exp-a"]),
                        (tmp_path / "sweep" / "exp-a", ["exp-a"]), (tmp_path / "sweep", ["exp-a", "exp-b"])]:
        df, _ = load([str(given)])
        assert sorted(df["run_id"].unique()) == want, given
