"""One probe run end to end: forward, analysis, ladder, what-ifs, outputs (rank 0 writes).

>>> from entropylaw.readers.rollouts.encode import Sequence
>>> from entropylaw.probing.model import tiny_model
>>> m = tiny_model(vocab=32, hidden=16, seed=1)
>>> seqs = [Sequence("p", i, [2, 3], [4 + i, 5, 6], float(i % 2)) for i in range(4)]
>>> frame, summary = run_probe(m, seqs, ProbeConfig(), None)
>>> summary["n_tokens"], len(frame)
(12, 12)
"""

from __future__ import annotations

from pathlib import Path

import torch

from entropylaw.errors import EntropyLawError
from entropylaw.fileio import atomic_dir, dumps, summary_in
from entropylaw.probing import dist
from entropylaw.progress import Progress
from entropylaw.probing.core import ProbeConfig, analyse
from entropylaw.probing.forward import collect_stats
from entropylaw.probing.ladder import LadderConfig, ladder_report, one_step, whatif_row
from entropylaw.probing.update import token_partials
from entropylaw.probing.signal import NoSignal, informative, no_signal_message, signal_checks, signal_report, \
    with_advantages


def _progress(total: int, enabled: bool):
    if not enabled:
        return None
    return Progress(total, "probe", "tok")


def _tok_arrays(frame_cols: dict, stats: dict) -> dict:
    # full-precision log-probs: on-policy, old must equal log p exactly (ratio 1, zero KL penalty)
    old = frame_cols["old_logprob"].to(stats["logp"].dtype)
    return {"adv": frame_cols["advantage"], "old": torch.where(torch.isnan(old), stats["logp"], old),
            "entropy0": stats["entropy"], "logprob": stats["logp"], "entropy": stats["entropy"],
            "sum_p2": stats["sum_p2"]}


def run_probe(model, seqs: list, cfg: ProbeConfig, ladder: LadderConfig | None = None, progress: bool = False,
              where: str = "probe", generated: bool = False):
    """Returns (per-token frame, summary) on rank 0, (None, None) on other ranks.

    Only the prompt groups that carry a learning signal are probed (:mod:`entropylaw.probing.signal`);
    a batch with none raises :class:`~entropylaw.probing.signal.NoSignal` naming ``where``.
    """
    trainer = bool(seqs) and all(s.advantage is not None for s in seqs)
    seqs = with_advantages(seqs, cfg.estimator, cfg.eps)
    signal = signal_report(seqs, "the trainer's (kept)" if trainer else f"computed ({cfg.estimator})")
    if signal["informative_groups"] == 0:
        raise NoSignal(no_signal_message(signal, where, generated))
    seqs = informative(seqs)
    if dist.world() > signal["informative_groups"]:
        raise EntropyLawError(f"{where}: {dist.world()} processes for {signal['informative_groups']} informative "
                              "prompt groups: use at most as many processes as groups")
    a, b = dist.group_shard_bounds([tuple(s.prompt_ids) for s in seqs])
    local = seqs[a:b]
    bar = _progress(sum(len(s.response_ids) for s in local), progress and dist.rank() == 0)
    stats_local = collect_stats(model, local, cfg.temperature, cfg.chunk_size, cfg.clamp_p, cfg.batch_tokens,
                                keep_hidden=ladder is not None, progress=bar)
    if bar is not None:
        bar.close()
    hidden = stats_local.pop("hidden", None)
    stats = dist.gather_dict(stats_local)
    frame = summary = tok_all = None
    if dist.rank() == 0:
        frame, summary = analyse(seqs, stats, cfg)
        summary = {"signal": signal, **summary}
        cols = {c: torch.tensor(frame[c].to_numpy()) for c in ("advantage", "old_logprob", "logprob")}
        tok_all = _tok_arrays(cols, stats)
        tok_all["seq_of"] = torch.repeat_interleave(torch.arange(len(seqs)),
                                                    torch.tensor([len(s.response_ids) for s in seqs]))
        scope = "_mb" if ladder is not None and ladder.scope == "microbatch" else ""
        tok_all["sel_clip_cov"] = torch.tensor(frame["clip_cov" + scope].to_numpy())
        tok_all["sel_kl_cov"] = torch.tensor(frame["kl_cov" + scope].to_numpy())
        tok_all["w_steer"] = torch.tensor(frame["steer_weight" + scope].to_numpy())
    if ladder is None:
        if summary is not None:
            summary["checks"] = signal_checks(signal, summary["table1"]["all"], summary["table1_all_se"], None)
        return frame, summary
    tok_all = dist.broadcast(tok_all)
    n_total = len(tok_all["adv"])
    ta = sum(len(s.response_ids) for s in seqs[:a])
    tb = ta + sum(len(s.response_ids) for s in local)
    tok = {k: v[ta:tb] for k, v in tok_all.items()}
    stats_local["hidden"] = hidden
    results = {}
    etas = base = None
    lbar = None
    if progress and dist.rank() == 0:
        lbar = Progress(None, "ladder", "rung")
    for name in ladder.whatif:
        iv_cfg = cfg.intervention(name)
        sub = {k: tok[k] for k in ("adv", "old", "entropy0")}
        if name in ("clip_cov", "kl_cov"):
            sub["selected"] = tok["sel_" + name]
        if name == "steer":
            sub["weights"] = tok["w_steer"]
        if lbar is not None:
            lbar.set_postfix_str(name)
        res = one_step(model, local, stats_local, sub, iv_cfg, n_total, cfg, ladder,
                       etas=None if name == "none" else etas[:1], bar=lbar, base=base)
        if name == "none":
            base = {**res, "partials": token_partials(stats_local, sub, iv_cfg, n_total, cfg)[0]}
            etas = res["etas"]
        meta = {k: res.pop(k) for k in ("etas", "search", "bound", "too_large", "same_update_as",
                                         "reweighted_sequences") if k in res}
        res = {k: v for k, v in res.items() if k != "direction"}  # plain values, not per-token tensors
        results[name] = {**meta, **(dist.gather_dict(res) or {})}
    if lbar is not None:
        lbar.close()
    if etas is None:
        raise ValueError("the ladder needs 'none' among the what-ifs (it sets the step size)")
    if dist.rank() != 0:
        return None, None
    groups = [s.prompt_id for s in seqs]
    summary["ladder"] = ladder_report(tok_all, results["none"], tok_all["seq_of"], groups, ladder.slope_range,
                                      ladder.linearity_tol)
    summary["ladder"]["config"] = {**ladder.to_dict(), "optimizer": ladder.optimizer}
    summary["whatif"] = {name: whatif_row(r, tok_all) for name, r in results.items()}
    summary["checks"] = signal_checks(signal, summary["table1"]["all"], summary["table1_all_se"], summary["ladder"])
    frame["dH_measured"] = results["none"]["dH_0"].numpy()
    frame["dH_lemma1"] = results["none"]["lemma1_0"].numpy()
    frame["loss_weight"] = results["none"]["w"].numpy()
    return frame, summary


def write_outputs(out_dir: str | Path, frame, summary: dict) -> str | None:
    """Write tokens.parquet and summary.json; both appear together or not at all. An earlier
    summary there is replaced, said, and its audit (``entropylaw audit --out`` the same folder)
    kept; a file there that is no summary is refused. Returns what was replaced, in words."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise EntropyLawError(f"`out` {out}: exists and is not a directory")
    said, doc = None, summary_in(out)
    if doc is not None:
        if "audit" in doc:
            summary = {**summary, "audit": doc["audit"]}
        said = f"replaced the summary.json there{' (its audit kept)' if 'audit' in doc else ''}"
    with atomic_dir(out) as tmp:
        frame.to_parquet(tmp / "tokens.parquet", index=False)
        (tmp / "summary.json").write_text(dumps(summary, indent=2) + "\n")
    return said
