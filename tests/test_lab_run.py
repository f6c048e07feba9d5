"""A micro lab configuration end to end: train, log, checkpoint, resume, read back."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from entropylaw.errors import EntropyLawError
from entropylaw.lab.config import RunConfig
from entropylaw.lab.trainer import LabRun

MICRO = dict(size="d16l1", steps=4, n_terms=3, prompts_per_step=4, group_size=4, minibatches=2,
             val_every=2, val_size=16, val_samples=2, ckpt_every=2, sft_steps=10)


def _rows(run_dir: Path) -> list[tuple[int, dict]]:
    out = []
    for line in (run_dir / "metrics.jsonl").read_text().splitlines():
        obj = json.loads(line)
        out.append((obj["step"], {k: v for k, v in obj["data"].items() if not k.startswith("timing")}))
    return out


@pytest.fixture(scope="module")
def micro_run(tmp_path_factory):
    """One micro run with all three loggers (shared by the read-back tests)."""
    out = tmp_path_factory.mktemp("lab") / "run"
    summary = LabRun(RunConfig(**MICRO, intervention="clip_cov"), out, ["jsonl", "csv", "wandb"],
                     device="cpu", progress=False).run()
    return out, summary


@pytest.mark.slow
def test_micro_run_writes_every_log_and_checkpoint(micro_run):
    out, summary = micro_run
    rows = _rows(out)
    assert [s for s, _ in rows] == [0, 1, 2, 3, 4]
    step1 = rows[1][1]
    for key in ("actor/entropy", "actor/entropy_seq_mean", "critic/score/mean", "response_length/mean",
                "actor/pg_clipfrac", "actor/ppo_kl", "cov/token_mean", "cov/top0.2pct_mean",
                "cov/response_level", "actor/entropy_delta"):
        assert key in step1
    assert step1["actor/entropy_delta"] == pytest.approx(step1["actor/entropy_after"] - step1["actor/entropy"])
    assert "val-core/sum3x1/acc/mean@2" in rows[2][1] and "val-core/sum3x1/acc/mean@2" not in rows[1][1]
    csv_lines = (out / "metrics.csv").read_text().splitlines()
    assert csv_lines[0].startswith("step,actor/entropy,") and len(csv_lines) == 6
    ckpts = sorted(p.name for p in (out / "checkpoints").iterdir())
    assert ckpts == ["global_step_0", "global_step_2", "global_step_4"]
    assert list(out.glob("wandb/offline-run-*/run-*.wandb"))
    assert summary["steps"] == 4 and (out / "done.json").exists()
    # a finished run is not rerun
    again = LabRun(RunConfig(**MICRO, intervention="clip_cov"), out, ["jsonl"], device="cpu", progress=False).run()
    assert again == json.loads((out / "done.json").read_text()) and len(_rows(out)) == 5


@pytest.mark.slow
def test_same_seed_same_logs_and_resume_duplicates_nothing(tmp_path):
    ws = tmp_path / "ws"
    cfg = RunConfig(**MICRO)
    LabRun(cfg, tmp_path / "a", ["jsonl"], "cpu", ws, progress=False).run()
    LabRun(cfg, tmp_path / "b", ["jsonl"], "cpu", tmp_path / "ws2", progress=False).run()
    assert _rows(tmp_path / "a") == _rows(tmp_path / "b")  # warm start and RL both deterministic
    # interrupted after step 3 (last checkpoint at 2): resuming continues bit for bit
    stopped = LabRun(cfg, tmp_path / "c", ["jsonl", "csv"], "cpu", ws, progress=False).run(stop_after=3)
    assert stopped == {"interrupted_at": 3}
    assert [s for s, _ in _rows(tmp_path / "c")] == [0, 1, 2]
    LabRun(cfg, tmp_path / "c", ["jsonl", "csv"], "cpu", ws, progress=False).run()
    assert _rows(tmp_path / "c") == _rows(tmp_path / "a")
    steps = [line.split(",")[0] for line in (tmp_path / "c" / "metrics.csv").read_text().splitlines()[1:]]
    assert steps == ["0", "1", "2", "3", "4"]
    # another run's settings in the same directory is refused
    with pytest.raises(EntropyLawError, match=r"other settings \(seed: 0 there, 1 here; .*run.json\)"):
        LabRun(RunConfig(**{**MICRO, "seed": 1}), tmp_path / "c", ["jsonl"], "cpu", ws, progress=False).run()


@pytest.mark.parametrize("device, said", [("tpu", "not a torch device"), ("cuda:99", "no CUDA GPU")])
def test_a_device_that_is_none_is_one_line_and_writes_nothing(tmp_path, capsys, device, said):
    """--device tpu was "internal error: RuntimeError", exit 1, and left a run.json that then refused
    every later run into the folder as "other settings"."""
    from entropylaw.cli.main import main

    code = main(["lab", "run", "--size", "xs", "--steps", "2", "--out", str(tmp_path / "run"), "--device", device,
                 "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and said in err and "internal error" not in err and not (tmp_path / "run").exists()


@pytest.mark.slow
def test_logs_read_back_through_ingest(micro_run, cli, tmp_path):
    out, _ = micro_run
    res = cli("ingest", str(out / "metrics.jsonl"), "-o", str(tmp_path / "t.parquet"))
    assert res.returncode == 0, res.stderr
    from entropylaw import table

    t = table.read(tmp_path / "t.parquet")
    assert {"entropy", "score", "val/sum3x1", "response_length"} <= set(t["metric"])
    rows = _rows(out)
    assert table.series(t, table.run_ids(t)[0], "entropy").tolist() == [r["actor/entropy"] for _, r in rows[1:]]
    assert table.series(t, table.run_ids(t)[0], "val/sum3x1").tolist() == \
        [r["val-core/sum3x1/acc/mean@2"] for _, r in rows if "val-core/sum3x1/acc/mean@2" in r]
    res = cli("ingest", str(out / "metrics.csv"), "-o", str(tmp_path / "c.parquet"))
    assert res.returncode == 0, res.stderr
    c = table.read(tmp_path / "c.parquet")
    assert table.series(c, table.run_ids(c)[0], "entropy").tolist() == pytest.approx(
        [r["actor/entropy"] for _, r in rows[1:]])


@pytest.mark.slow
def test_wandb_offline_file_reads_back(micro_run):
    if importlib.util.find_spec("entropylaw.readers.wandb_offline") is None:
        pytest.skip("entropylaw.readers.wandb_offline is not in this tree")
    from entropylaw.readers.common import finalize
    from entropylaw.readers.wandb_offline import read_wandb_offline

    out, _ = micro_run
    [raw] = read_wandb_offline(next(out.glob("wandb/offline-run-*")))
    t = finalize(raw)
    ent = t[t["metric"] == "entropy"].sort_values("step")["value"].tolist()
    assert ent == [r["actor/entropy"] for _, r in _rows(out)[1:]]


@pytest.mark.slow
def test_export_table_has_lab_metadata(micro_run):
    from entropylaw.lab.export import run_table
    from entropylaw.lab.models import nonembedding_params, size_spec

    out, _ = micro_run
    t = run_table(out)
    meta = t.iloc[0]
    assert meta["model"] == "lab-d16l1" and meta["algorithm"] == "grpo+clip_cov" and meta["dataset"] == "sum3x1"
    assert meta["n_params_nonembedding"] == nonembedding_params(size_spec("d16l1")) and meta["seed"] == 0
    assert meta["entropy_key"] == "actor/entropy" and json.loads(meta["val_keys"]) == {
        "val/sum3x1": "val-core/sum3x1/acc/mean@2"}


@pytest.mark.slow
def test_checkpoint_loads_with_its_tokenizer_and_rollouts(micro_run):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out, _ = micro_run
    ckpt = out / "checkpoints" / "global_step_4"
    model = AutoModelForCausalLM.from_pretrained(str(ckpt))
    tok = AutoTokenizer.from_pretrained(str(ckpt))
    lines = [json.loads(x) for x in (ckpt / "rollouts.jsonl").read_text().splitlines()]
    assert len(lines) == MICRO["prompts_per_step"] * MICRO["group_size"]
    first = lines[0]
    assert tok(first["prompt_id"]).input_ids == first["prompt_ids"]
    assert len(first["old_logprobs"]) == len(first["response_ids"])
    import torch

    ids = torch.tensor([first["prompt_ids"] + first["response_ids"]])
    with torch.no_grad():
        logp = torch.log_softmax(model(ids).logits[0, len(first["prompt_ids"]) - 1:-1], -1)
    want = logp.gather(-1, torch.tensor(first["response_ids"])[:, None]).squeeze(-1)
    assert want.tolist() == pytest.approx(first["old_logprobs"], abs=1e-5)


@pytest.mark.slow
def test_probe_runs_on_a_lab_checkpoint(micro_run, tmp_path):
    if importlib.util.find_spec("entropylaw.cli.probe") is None:
        pytest.skip("entropylaw probe is not in this tree")
    from entropylaw.cli.main import main

    out, _ = micro_run
    ckpt = out / "checkpoints" / "global_step_4"
    rows = [json.loads(x) for x in (ckpt / "rollouts.jsonl").read_text().splitlines() if x.strip()]
    groups = {}
    for r in rows:
        groups.setdefault(r["prompt_id"], set()).add(r["reward"])
    mixed = sum(len(v) > 1 for v in groups.values())
    rc = main(["probe", "--model", str(ckpt), "--rollouts", str(ckpt / "rollouts.jsonl"), "--out",
               str(tmp_path / "probe"), "--device", "cpu", "--no-progress", "--whatif", "none,clip_cov"])
    assert rc == (0 if mixed else 2)  # a batch whose groups all agree has no signal: refused, said
    # the same checkpoint with rewards that vary inside every group: the ladder runs on it
    with open(tmp_path / "mixed.jsonl", "w") as f:
        for i, r in enumerate(rows):
            print(json.dumps({**r, "reward": float(i % 2)}), file=f)
    rc = main(["probe", "--model", str(ckpt), "--rollouts", str(tmp_path / "mixed.jsonl"), "--out",
               str(tmp_path / "probe2"), "--device", "cpu", "--no-progress", "--whatif", "none,clip_cov"])
    assert rc == 0
    summary = json.loads((tmp_path / "probe2" / "summary.json").read_text())
    assert "ladder" in summary and summary["signal"]["informative_groups"] == len(groups)


def _main(capsys, *args) -> tuple[int, str]:
    from entropylaw.cli.main import main

    rc = main(list(args))
    return rc, capsys.readouterr().err


def test_cli_bad_input_is_one_line(capsys, tmp_path):
    rc, err = _main(capsys, "lab", "run", "--algo", "ppo2", "--out", str(tmp_path / "x"))
    assert rc == 2 and "unknown algorithm 'ppo2'" in err and "valid: grpo, rloo" in err
    assert len(err.strip().splitlines()) == 1
    rc, err = _main(capsys, "lab", "run", "--intervention", "kl-cov", "--out", str(tmp_path / "x"))
    assert rc == 2 and "did you mean 'kl_cov'" in err and "valid: none, entropy_bonus" in err
    rc, err = _main(capsys, "lab", "run", "--size", "d8192l96", "--out", str(tmp_path / "y"))
    assert rc == 2 and "GiB" in err
    assert not (tmp_path / "y").exists()
    bad = tmp_path / "sweep.toml"
    bad.write_text('[[group]]\nsizes = ["xs"]\n[[group]]\nsize = "s"\ninterventions = ["none", "clip_covv"]\n')
    rc, err = _main(capsys, "lab", "sweep", str(bad), "--out", str(tmp_path / "sw"))
    assert rc == 2 and "[[group]] 2" in err and "clip_covv" in err
    bad.write_text('[defaults]\nstesp = 10\n[[group]]\nsizes = ["xs"]\n')
    rc, err = _main(capsys, "lab", "sweep", str(bad), "--out", str(tmp_path / "sw"))
    assert rc == 2 and "unknown key 'stesp' (did you mean 'steps'?)" in err
    assert not (tmp_path / "sw").exists()  # failed before the first run


@pytest.mark.slow
def test_sweep_is_resumable_and_exports(tmp_path):
    from entropylaw import table
    from entropylaw.lab.export import sweep_table
    from entropylaw.lab.sweep import run_sweep

    defaults = "\n".join(f"{k} = {json.dumps(v)}" for k, v in MICRO.items() if k not in ("size", "steps"))
    config = tmp_path / "sweep.toml"
    config.write_text(f"[defaults]\nsteps = 2\n{defaults}\n[[group]]\nsize = \"d16l1\"\n"
                      "algos = [\"grpo\", \"rloo\"]\n")
    said: list[str] = []
    run_sweep(config, tmp_path / "sw", "cpu", progress=False, echo=said.append)
    assert said == ["[1/2] d16l1-grpo-none-s0: running", "[2/2] d16l1-rloo-none-s0: running"]
    before = (tmp_path / "sw" / "runs" / "d16l1-rloo-none-s0" / "metrics.jsonl").read_text()
    said.clear()
    run_sweep(config, tmp_path / "sw", "cpu", progress=False, echo=said.append)
    assert said == ["d16l1-grpo-none-s0: already finished", "d16l1-rloo-none-s0: already finished"]
    assert (tmp_path / "sw" / "runs" / "d16l1-rloo-none-s0" / "metrics.jsonl").read_text() == before
    t = sweep_table(tmp_path / "sw")
    assert sorted(table.runs(t)["algorithm"]) == ["grpo", "rloo"]


@pytest.mark.slow
@pytest.mark.parametrize("algo,intervention", [("reinforce++", "kl_cov"), ("rloo", "steer"), ("grpo", "aent")])
def test_group_filter_and_interventions_run(tmp_path, algo, intervention):
    cfg = RunConfig(**{**MICRO, "steps": 2, "ckpt_every": 2}, algo=algo, intervention=intervention,
                    filter_groups=True)
    LabRun(cfg, tmp_path / "r", ["jsonl"], "cpu", tmp_path / "ws", progress=False).run()
    for step, row in _rows(tmp_path / "r")[1:]:
        n_groups = MICRO["prompts_per_step"]
        assert row["batch/groups_kept"] == n_groups - row["batch/groups_all_correct"] - row["batch/groups_all_wrong"]
        if row["batch/groups_kept"] == 0:  # nothing to learn from: no update, entropy unchanged
            assert row["actor/entropy_delta"] == 0.0
        elif intervention == "kl_cov":  # the top max(1, floor(N * 2e-3)) tokens of each minibatch
            assert row["intervention/n_selected"] >= 1
        if intervention == "steer" and row["batch/groups_kept"]:
            assert 0.8 <= row["intervention/mean_weight"] <= 1.0


@pytest.mark.slow
def test_probe_checkpoints_reads_the_lab_checkpoints(micro_run, tmp_path):
    if importlib.util.find_spec("entropylaw.cli.probe_checkpoints") is None:
        pytest.skip("entropylaw probe-checkpoints is not in this tree")
    from entropylaw import table
    from entropylaw.cli.main import main

    out, _ = micro_run
    ckpts = sorted(str(p) for p in (out / "checkpoints").glob("global_step_*"))
    rc = main(["probe-checkpoints", *ckpts, "--prompts", str(out / "val_prompts.jsonl"), "--reward",
               "entropylaw.lab.task:answer_reward", "--samples", "2", "--max-new-tokens", "12",
               "--device", "cpu", "--out", str(tmp_path / "ck.parquet")])
    assert rc == 0
    t = table.read(tmp_path / "ck.parquet")
    run = table.run_ids(t)[0]
    assert table.series(t, run, "entropy").index.tolist() == [0, 2, 4]
    acc = table.series(t, run, "val/val_prompts")
    assert ((acc >= 0) & (acc <= 1)).all()


def test_an_interrupted_lab_run_says_the_same_command_resumes_it(tmp_path, monkeypatch, capsys):
    """Ctrl-C printed "entropylaw: interrupted" alone; the run keeps its checkpoint and resumes."""
    import entropylaw.api as api
    from entropylaw.cli.main import main

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "lab_run", stopped)
    assert main(["lab", "run", "--out", str(tmp_path / "runs"), "--steps", "3"]) == 130
    err = capsys.readouterr().err
    assert f"the same command resumes it from the last checkpoint it wrote in {tmp_path / 'runs'}" in err
    assert err.strip().endswith("entropylaw: interrupted")
