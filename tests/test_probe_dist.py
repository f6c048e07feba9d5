"""A 2-process torchrun (gloo, CPU) probe gives the same summary as one process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

from entropylaw.probe.model import tiny_model


@pytest.mark.slow
def test_torchrun_two_processes_match_one(tmp_path):
    V = 100
    tiny_model("llama", vocab=V, hidden=16, layers=1, seed=4).save_pretrained(tmp_path / "model")
    g = torch.Generator().manual_seed(1)
    with open(tmp_path / "r.jsonl", "w") as f:
        for p in range(5):
            prompt = torch.randint(2, V, (4,), generator=g).tolist()
            for i in range(3):
                resp = torch.randint(2, V, (int(torch.randint(3, 10, (1,), generator=g)),), generator=g).tolist()
                print(json.dumps({"prompt_id": p, "prompt_ids": prompt, "response_ids": resp,
                                  "reward": float((p + i) % 2)}), file=f)
    common = ["probe", "--model", str(tmp_path / "model"), "--rollouts", str(tmp_path / "r.jsonl"), "--dtype",
              "float64", "--device", "cpu", "--whatif", "none,clip_cov,steer", "--set", "clip_cov_lb=0.01",
              "--microbatch-tokens", "40", "--no-progress"]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    from entropylaw.cli.main import main

    assert main([*common, "--out", str(tmp_path / "one")]) == 0  # one process, in this one
    two = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
                          "-m", "entropylaw", *common, "--out", str(tmp_path / "two")],
                         capture_output=True, text=True, env=env, timeout=300)
    assert two.returncode == 0, two.stderr[-3000:]
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
