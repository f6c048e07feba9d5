"""A 2-process torchrun (gloo, CPU) probe gives the same summary as one process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest
import torch

from _probe_inputs import rollout_rows, write_jsonl

from entropylaw.probing.model import tiny_model


RANK_SCRIPT = """
import os, sys
from entropylaw.cli.main import main
code = main(sys.argv[1:])
names = [open(f"/proc/self/task/{t}/comm").read().strip() for t in os.listdir("/proc/self/task")]
print(f"rank {os.environ['RANK']}: gloo threads left {sum('gloo' in n for n in names)}", file=sys.stderr)
sys.exit(code)
"""
FINALIZED = """
import atexit, os, sys
atexit.register(lambda: print(f"rank {os.environ.get('RANK')}: finalized", file=sys.stderr))
"""


def _torchrun(tmp_path, args, in_process=True):
    """``entropylaw ARGS`` in 2 torchrun processes (gloo). ``in_process``: the command called in a script
    that then says the gloo threads its process still runs: none, where the process group ended with
    the command (else its threads end at the interpreter's exit, where they sometimes abort the process
    after its work). Else ``python -m entropylaw``, which under torchrun ends each process without the
    interpreter's finalization (the group FSDP's DTensors hold is never let go)."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    if in_process:
        (tmp_path / "ranks.py").write_text(RANK_SCRIPT)
        launch = [str(tmp_path / "ranks.py")]
    else:
        (tmp_path / "site").mkdir()
        (tmp_path / "site" / "sitecustomize.py").write_text(FINALIZED)
        env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "site"), *filter(None, [env.get("PYTHONPATH")])])
        launch = ["-m", "entropylaw"]
    two = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
                          *launch, *args], capture_output=True, text=True, env=env, timeout=300)
    assert two.returncode == 0, two.stderr[-3000:]
    for rank in (0, 1):
        if in_process:
            assert f"rank {rank}: gloo threads left 0" in two.stderr, two.stderr[-3000:]
        else:
            assert f"rank {rank}: finalized" not in two.stderr, two.stderr[-3000:]


@pytest.mark.slow
def test_torchrun_two_processes_match_one(tmp_path):
    V = 100
    tiny_model("llama", vocab=V, hidden=16, layers=1, seed=4).save_pretrained(tmp_path / "model")
    write_jsonl(tmp_path / "r.jsonl", rollout_rows(V, n_prompts=5, lengths=(3, 10), seed=1, prompt_id=int))
    common = ["probe", "--model", str(tmp_path / "model"), "--rollouts", str(tmp_path / "r.jsonl"), "--dtype",
              "float64", "--device", "cpu", "--whatif", "none,clip_cov,steer", "--set", "clip_cov_lb=0.01",
              "--microbatch-tokens", "40", "--no-progress"]
    from entropylaw.cli.main import main

    assert main([*common, "--out", str(tmp_path / "one")]) == 0  # one process, in this one
    _torchrun(tmp_path, [*common, "--out", str(tmp_path / "two")])
    a = json.loads((tmp_path / "one" / "summary.json").read_text())
    b = json.loads((tmp_path / "two" / "summary.json").read_text())
    assert a["n_tokens"] == b["n_tokens"] and a["selection"]["clip_cov"] == b["selection"]["clip_cov"]
    for key in a["table1"]:
        assert a["table1"][key] == pytest.approx(b["table1"][key], rel=1e-9, abs=1e-12)
    assert a["ladder"]["eta"] == pytest.approx(b["ladder"]["eta"], rel=1e-9)
    for est, row in a["ladder"]["estimators"].items():
        for k, v in row.items():
            if isinstance(v, float):
                assert v == pytest.approx(b["ladder"]["estimators"][est][k], rel=1e-6, abs=1e-12), (est, k)
    for name, row in a["whatif"].items():
        for k, v in row.items():
            assert v == pytest.approx(b["whatif"][name][k], rel=1e-6, abs=1e-12), (name, k)


def _rollouts(path, V, groups=5):
    g = torch.Generator().manual_seed(1)
    with open(path, "w") as f:
        for p in range(groups):
            prompt = torch.randint(2, V, (4,), generator=g).tolist()
            for i in range(3):
                resp = torch.randint(2, V, (int(torch.randint(3, 10, (1,), generator=g)),), generator=g).tolist()
                print(json.dumps({"prompt_id": p, "prompt_ids": prompt, "response_ids": resp,
                                  "reward": float((p + i) % 2)}), file=f)


def _same(a, b, rel):
    """Every number of two summaries agrees (recursively), to ``rel``."""
    if isinstance(a, dict):
        assert set(a) == set(b)
        for k in a:
            if k not in ("model", "rollouts", "memory_gib", "source"):
                _same(a[k], b[k], rel)
    elif isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y, rel)
    elif isinstance(a, float):
        assert a == pytest.approx(b, rel=rel, abs=1e-15)
    else:
        assert a == b


def test_fsdp2_sharded_weights_give_the_one_process_result(tmp_path):
    """--shard: FSDP2 fully_shard of every decoder layer over 2 gloo processes on the CPU, the
    ladder's step searched (each rung a sharded step: a fixed step is one of them)."""
    V = 100
    tiny_model("llama", vocab=V, hidden=16, layers=2, seed=4).save_pretrained(tmp_path / "model")
    _rollouts(tmp_path / "r.jsonl", V)
    common = ["probe", "--model", str(tmp_path / "model"), "--rollouts", str(tmp_path / "r.jsonl"), "--dtype",
              "float64", "--device", "cpu", "--whatif", "none,clip_cov,steer,entropy_bonus", "--no-progress"]
    from entropylaw.cli.main import main

    assert main([*common, "--out", str(tmp_path / "one")]) == 0
    _torchrun(tmp_path, [*common, "--shard", "--out", str(tmp_path / "two")], in_process=False)
    a = json.loads((tmp_path / "one" / "summary.json").read_text())
    b = json.loads((tmp_path / "two" / "summary.json").read_text())
    _same(a, b, 1e-5)
    ta, tb = pd.read_parquet(tmp_path / "one" / "tokens.parquet"), pd.read_parquet(tmp_path / "two" / "tokens.parquet")
    pd.testing.assert_frame_equal(ta, tb, rtol=1e-5)


def test_shard_without_torchrun_is_one_line(tmp_path, capsys):
    from entropylaw.cli.main import main

    tiny_model("llama", vocab=50, hidden=16, seed=4).save_pretrained(tmp_path / "model")
    _rollouts(tmp_path / "r.jsonl", 50, groups=2)
    code = main(["probe", "--model", str(tmp_path / "model"), "--rollouts", str(tmp_path / "r.jsonl"), "--out",
                 str(tmp_path / "o"), "--shard", "--no-progress"])
    err = [x for x in capsys.readouterr().err.splitlines() if x.startswith("entropylaw:")]
    assert code == 2 and len(err) == 1 and err[0].startswith("entropylaw: error: --shard: the weights are sharded")
    assert "launch 'entropylaw probe --shard' under torchrun --nproc_per_node K" in err[0]


def test_device_map_over_memory_capped_places_equals_one_device(tmp_path, capsys):
    """--device-map auto with a memory cap that cannot hold the model: accelerate splits it between
    the CPU and disk offload; the statistics are the undispatched model's, and the ladder, which
    updates weights in place, is refused in one line."""
    pytest.importorskip("accelerate")
    from entropylaw.cli.main import main
    from entropylaw.probing.model import load_model

    V = 100
    tiny_model("llama", vocab=V, hidden=16, layers=4, seed=4).save_pretrained(tmp_path / "model")
    _rollouts(tmp_path / "r.jsonl", V)
    model, _ = load_model(str(tmp_path / "model"), device_map="auto", max_memory={"cpu": "30KB"})
    places = set(model.hf_device_map.values())
    assert len(places) > 1, model.hf_device_map  # really split
    common = ["probe", "--model", str(tmp_path / "model"), "--rollouts", str(tmp_path / "r.jsonl"), "--no-progress",
              "--no-ladder"]
    assert main([*common, "--out", str(tmp_path / "one")]) == 0
    assert main([*common, "--device-map", "auto", "--max-memory", "cpu=30KB", "--out", str(tmp_path / "split")]) == 0
    a, b = pd.read_parquet(tmp_path / "one" / "tokens.parquet"), pd.read_parquet(tmp_path / "split" / "tokens.parquet")
    pd.testing.assert_frame_equal(a, b, rtol=1e-5, atol=1e-6)
    capsys.readouterr()
    code = main([*common[:-1], "--device-map", "auto", "--max-memory", "cpu=30KB", "--out", str(tmp_path / "x")])
    err = [x for x in capsys.readouterr().err.splitlines() if x.startswith("entropylaw:")]
    assert code == 2 and len(err) == 1 and "offloaded past every device's memory" in err[0]
