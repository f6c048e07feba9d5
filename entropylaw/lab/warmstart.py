"""Supervised warm start on imperfect demonstrations: the lab's "base model".

A fresh policy is trained with cross-entropy on the response tokens of demonstrations
from :meth:`SumTask.demonstration`, where a fraction ``error_rate`` of them slip once in
their running sums. The result behaves like a base model before RL: it knows the format,
gets some answers right, and is uncertain (high entropy) exactly where the
demonstrations disagree. Short training (``sft_steps``) keeps it imperfect.

The warm start depends only on (size, seed, task, SFT settings), so it is cached on disk
under a key of those and shared by every RL run that starts from it.

>>> cfg = WarmStartConfig(sft_steps=2, batch_size=4)
>>> cache_key("xs", 0, {"n_terms": 5, "digits": 1, "val_frac": 0.1}, cfg)[:9]
'xs-seed0-'
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class WarmStartConfig:
    sft_steps: int = 300
    batch_size: int = 64
    lr: float = 3e-3
    error_rate: float = 0.5


def cache_key(size: str, seed: int, task_config: dict, cfg: WarmStartConfig) -> str:
    blob = json.dumps({"task": task_config, "sft": asdict(cfg)}, sort_keys=True)
    return f"{size}-seed{seed}-{hashlib.sha1(blob.encode()).hexdigest()[:10]}"


def demo_batch(task, tok, n: int, rng: np.random.Generator, error_rate: float):
    """Token ids [n, L] (prompt + demonstration + <eos>, <pad> after) and a loss mask on the response."""
    import torch

    terms = task.sample(n, rng, split="train")
    rows, masks = [], []
    width = task.prompt_len + 1 + task.max_response_len + 2
    for t in terms:
        p = tok.encode(task.prompt_text(t))
        r = tok.encode(task.demonstration(t, rng, error_rate), bos=False) + [tok.eos_id]
        ids = (p + r)[:width]
        m = [0] * len(p) + [1] * (len(ids) - len(p))
        rows.append(ids + [tok.pad_id] * (width - len(ids)))
        masks.append(m + [0] * (width - len(m)))
    return torch.tensor(rows), torch.tensor(masks, dtype=torch.float32)


def train_warm_start(model, task, tok, cfg: WarmStartConfig, seed: int, device: str = "cpu",
                     progress=None) -> list[float]:
    """Train ``model`` in place; returns the loss per step."""
    import torch

    rng = np.random.default_rng([seed, 1])
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 20))
    model.train()
    losses = []
    for _ in range(cfg.sft_steps):
        ids, mask = demo_batch(task, tok, cfg.batch_size, rng, cfg.error_rate)
        ids, mask = ids.to(device), mask.to(device)
        logits = model(input_ids=ids, use_cache=False).logits[:, :-1]
        nll = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(),
                                                ids[:, 1:].reshape(-1), reduction="none")
        target_mask = mask[:, 1:].reshape(-1)
        loss = (nll * target_mask).sum() / target_mask.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(loss.item())
        if progress is not None:
            progress.update(1)
    model.eval()
    return losses


def load_or_train(cache_dir: Path, size: str, seed: int, task, tok, cfg: WarmStartConfig, build,
                  device: str = "cpu", progress=None):
    """The warm-started model for (size, seed): from ``cache_dir`` if there, else trained and saved."""
    import torch
    from transformers import AutoModelForCausalLM

    path = Path(cache_dir) / cache_key(size, seed, task.config(), cfg)
    if (path / "config.json").exists():
        model = AutoModelForCausalLM.from_pretrained(str(path), attn_implementation="eager")
        return model.to(device).eval(), path
    torch.manual_seed(seed)
    model = build().to(device)
    losses = train_warm_start(model, task, tok, cfg, seed, device, progress)
    tmp = path.with_name(path.name + ".tmp")
    model.save_pretrained(str(tmp), safe_serialization=True)
    tok.save(tmp)
    (tmp / "warmstart.json").write_text(json.dumps({"size": size, "seed": seed, "task": task.config(),
                                                    "sft": asdict(cfg), "final_loss": losses[-1] if losses else None}))
    tmp.replace(path) if not path.exists() else None
    return model.eval(), path
