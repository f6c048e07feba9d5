"""The ladder's automatic step: it shrinks until Lemma 1 is first order, and says when it never got there."""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest
import torch

from entropylaw.errors import EntropyLawWarning
from entropylaw.readers.rollouts.encode import Sequence
from entropylaw.probing.core import ProbeConfig
from entropylaw.probing.ladder import LadderConfig, first_order
from entropylaw.probing.model import tiny_model
from entropylaw.probing.runner import run_probe

V = 90


def _seqs(n_prompts=4, G=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    out = []
    for p in range(n_prompts):
        prompt = torch.randint(2, V, (4,), generator=g).tolist()
        for i in range(G):
            L = int(torch.randint(3, 10, (1,), generator=g))
            out.append(Sequence(f"p{p}", i, prompt, torch.randint(2, V, (L,), generator=g).tolist(),
                                float((i + p) % 3 == 0)))
    return out


def _probe(ladder, dtype=torch.float64, seed=5):
    model = tiny_model("llama", vocab=V, hidden=16, layers=1, seed=seed, dtype=dtype)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, summary = run_probe(model, _seqs(), ProbeConfig(), ladder)
    return summary["ladder"], [w for w in caught if issubclass(w.category, EntropyLawWarning)]


def test_first_order_slope_is_the_least_squares_slope():
    etas, errs = np.array([0.3, 0.15, 0.075]), np.array([2e-3, 5.5e-4, 1.3e-4])
    x, y = np.log(etas), np.log(errs)
    by_hand = ((x - x.mean()) * (y - y.mean())).sum() / ((x - x.mean()) ** 2).sum()
    res = first_order(etas, errs, [0.05, 0.02], linearity_tol=0.05)
    assert res["slope"] == pytest.approx(by_hand, rel=1e-12) and res["ok"]
    assert not first_order(etas, errs, [0.5, 0.02])["ok"]            # dH not linear in eta
    assert not first_order(etas, errs, [0.04, 0.06])["ok"]           # the default tolerance is 0.05
    assert first_order(etas, errs, [0.04, 0.06], linearity_tol=0.1)["ok"]
    assert not first_order(etas, errs * etas, [0.01, 0.01])["ok"]    # error ~ eta^3
    assert first_order(etas, [1e-3, 0.0, 1e-5], [0.01, 0.01])["slope"] is None


def test_search_shrinks_a_step_that_is_far_too_large():
    lad, warned = _probe(LadderConfig(rel_step=0.5))
    chk = lad["eta_squared_check"]
    search = chk["search"]
    assert chk["first_order"] and 1.8 <= chk["loglog_slope"] <= 2.2 and not warned
    # rungs that are not a step (they move entropy or a probability too far) are cut by 16 and
    # say why; from the first real step on, the search halves
    cut = [r for r in search if "too_large" in r and "lemma1_mean_abs_error" not in r]
    search = [r for r in search if "lemma1_mean_abs_error" in r]
    if cut:
        np.testing.assert_allclose([r["eta"] for r in cut] + [search[0]["eta"]],
                                   cut[0]["eta"] / 16.0 ** np.arange(len(cut) + 1))
        assert all("of H" in r["too_large"] or "its mass" in r["too_large"] for r in cut)
    k = len(search) - 3  # the chosen window is the last three rungs tried
    assert k + len(cut) >= 1, "a step of half the weights' norm should not be first order"
    np.testing.assert_allclose([r["eta"] for r in search], search[0]["eta"] * 0.5 ** np.arange(len(search)))
    assert lad["eta"] == search[k]["eta"] and chk["etas"] == [r["eta"] for r in search[k:]]
    # every earlier window failed the test; the errors the search saw are the report's
    for i in range(k):
        assert not (1.8 <= search[i]["window_slope"] <= 2.2) or max(
            x["nonlinearity"] for x in search[i + 1:i + 3]) > 0.05
    np.testing.assert_allclose(chk["lemma1_mean_abs_error"], [r["lemma1_mean_abs_error"] for r in search[k:]],
                               rtol=1e-12)
    # --lr at the chosen step reproduces the same ladder (a fixed ladder is the search's window)
    fixed, _ = _probe(LadderConfig(lr=lad["eta"]))
    assert fixed["eta_squared_check"]["chosen"] == "fixed" and "search" not in fixed["eta_squared_check"]
    np.testing.assert_allclose(fixed["eta_squared_check"]["lemma1_mean_abs_error"], chk["lemma1_mean_abs_error"],
                               rtol=1e-9)
    assert fixed["estimators"]["lemma1"]["pearson"] == pytest.approx(lad["estimators"]["lemma1"]["pearson"],
                                                                     rel=1e-9)
    assert lad["estimators"]["lemma1"]["pearson"] > 0.98


def test_a_search_that_never_reaches_the_regime_is_marked_and_warned():
    lad, warned = _probe(LadderConfig(rel_step=20.0, max_rungs=3))
    chk = lad["eta_squared_check"]
    assert not chk["first_order"] and len(chk["search"]) == 3
    said = [str(w.message) for w in warned]
    assert len(said) == 2 and any("not first order" in m and "3 halvings" in m for m in said), said
    assert any("hit its bound (max halvings: 3 rungs" in m for m in said), said  # and the search says it ran out
    assert chk["bound"].startswith("max halvings")


def test_lr_override_outside_the_regime_is_marked_in_the_cli(tmp_path, capsys):
    from entropylaw.cli.main import main

    model = tiny_model("llama", vocab=V, hidden=16, layers=1, seed=5)
    model.save_pretrained(tmp_path / "m")
    with open(tmp_path / "r.jsonl", "w") as f:
        for s in _seqs():
            print(json.dumps({"prompt_id": s.prompt_id, "prompt_ids": s.prompt_ids, "response_ids": s.response_ids,
                              "reward": s.reward}), file=f)
    common = ["probe", "--model", str(tmp_path / "m"), "--rollouts", str(tmp_path / "r.jsonl"), "--whatif", "none",
              "--no-progress", "--dtype", "float64"]
    assert main([*common, "--out", str(tmp_path / "big"), "--lr", "50"]) == 0
    out = capsys.readouterr()
    said = " ".join(out.out.split())  # the report's long lines wrap
    assert "fixed by --lr" in said and "NOT FIRST ORDER" in said
    assert "entropylaw: warning: probe ladder: not first order" in out.err
    summary = json.loads((tmp_path / "big" / "summary.json").read_text())
    assert summary["ladder"]["eta_squared_check"]["first_order"] is False
    assert main([*common, "--out", str(tmp_path / "auto")]) == 0
    out = capsys.readouterr()
    said = " ".join(out.out.split())  # the report's long lines wrap
    assert re.search(r"searched from [\d.e+-]+: (\d+ cuts? by 16 while too large, then )?\d+ halvings?;? ", said)
    assert "first order: yes" in said and "warning" not in out.err
