"""The probe's memory budget, stated before the model is loaded.

A CPU machine killed by the kernel's OOM killer gives no message at all; the probe instead
estimates its peak from the model's size and ``--batch-tokens`` and refuses, in one line,
a run the machine cannot hold:

- the weights: parameters x bytes per value (a GGUF file is dequantised to float32);
- the ladder keeps the weights before the update, the plain update's direction, the
  gradient being formed and a what-if's direction: four more copies;
- activations of one forward with gradient over ``batch_tokens`` positions: per layer
  and position about 16 values of the hidden size saved for backward (norm inputs,
  queries/keys/values, attention output, the MLP's ~2.7x-wide gate, up and activation), plus the vocabulary
  tiles of the streamed head.

>>> b = budget(n_params=135e6, bytes_per_value=4, n_layers=30, hidden=576, batch_tokens=4096, ladder=True)
>>> round(b["total"] / 2**30, 1), round(b["weights"] / 2**30, 2)
(6.8, 0.5)
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from entropylaw.errors import EntropyLawError

LADDER_COPIES = 4
VALUES_PER_ACTIVATION = 16
HEAD_TILES = 6 * 8 * 2 ** 20  # a few float32 logits tiles of the streamed head (stream.DEFAULT_TILE)
BYTES = {"float32": 4, "float64": 8, "bfloat16": 2, "float16": 2}


def budget(n_params: float, bytes_per_value: int, n_layers: int, hidden: int, batch_tokens: int,
           ladder: bool) -> dict:
    """Bytes by part, and ``total``."""
    weights = n_params * bytes_per_value
    parts = {"weights": weights, "ladder": LADDER_COPIES * weights if ladder else 0.0,
             "activations": batch_tokens * n_layers * hidden * VALUES_PER_ACTIVATION * max(bytes_per_value, 4),
             "head": HEAD_TILES}
    parts["total"] = sum(parts.values())
    return parts


def available_bytes() -> int | None:
    """MemAvailable of /proc/meminfo (None where there is none)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _config_shape(config: dict) -> tuple:
    layers = config.get("num_hidden_layers") or config.get("n_layer") or config.get("num_layers") or 1
    hidden = config.get("hidden_size") or config.get("n_embd") or config.get("d_model") or 1
    return int(layers), int(hidden)


def model_shape(path, dtype: str) -> dict | None:
    """n_params, bytes_per_value, n_layers, hidden of a model directory or GGUF file (None: unknown)."""
    p = Path(path)
    if p.is_dir() and (p / "config.json").is_file():
        try:
            config = json.loads((p / "config.json").read_text())
        except (OSError, json.JSONDecodeError):
            return None
        stored = config.get("torch_dtype") or config.get("dtype") or "float32"
        files = list(p.glob("*.safetensors")) or list(p.glob("*.bin"))
        size = sum(f.stat().st_size for f in files)
        if not size:
            return None
        n_params = size / BYTES.get(str(stored), 4)
        layers, hidden = _config_shape(config)
        return {"n_params": n_params, "bytes_per_value": BYTES.get(dtype, BYTES.get(str(stored), 4)),
                "n_layers": layers, "hidden": hidden}
    if p.is_file() and p.suffix.lower() == ".gguf":
        from entropylaw.probing.gguf_file import inspect_gguf
        from entropylaw.probing.model import gguf_cache_dir

        cache = gguf_cache_dir(p)
        if cache is not None and (cache / "entropylaw-complete").is_file():
            return model_shape(cache, "float32" if dtype == "auto" else dtype)
        info = inspect_gguf(p)
        return {"n_params": info["n_params"], "bytes_per_value": BYTES.get(dtype, 4),  # dequantised: float32
                "n_layers": info["n_layers"] or 1, "hidden": info["hidden"] or 1}
    return None


def check(path, dtype: str, batch_tokens: int, ladder: bool, available: int | None = None) -> dict | None:
    """The budget of a probe run; an :class:`EntropyLawError` when the machine cannot hold it."""
    shape = model_shape(path, dtype)
    if shape is None:
        return None
    parts = budget(shape["n_params"], shape["bytes_per_value"], shape["n_layers"], shape["hidden"], batch_tokens,
                   ladder)
    avail = available_bytes() if available is None else available
    out = {k: round(v / 2 ** 30, 6) for k, v in parts.items()}
    out["available"] = None if avail is None else round(avail / 2 ** 30, 6)
    if avail is not None and parts["total"] > 0.9 * avail and os.environ.get("ENTROPYLAW_MEMORY_CHECK") != "off":
        fixes = "`no_ladder`, " if ladder else ""
        raise EntropyLawError(
            f"`model` {path}: the probe needs about {out['total']:.1f} GiB (weights {out['weights']:.1f}, the "
            f"ladder's copies {out['ladder']:.1f}, activations at `batch_tokens` {batch_tokens} "
            f"{out['activations']:.1f}) and this machine has {out['available']:.1f} GiB available: try "
            f"{fixes}a smaller `batch_tokens`, `dtype` bfloat16, or `shard` / `device_map` over more devices "
            "(ENTROPYLAW_MEMORY_CHECK=off to try anyway)")
    return out


HELD_BYTES_PER_TOKEN = 40  # a sampled token kept as a Python int in a list until the statistics are taken
LOGITS_COPIES = 3  # a decoding step's float32 logits: raw, processed, softmaxed


def check_generation(shape: dict, rows: int, length: int, n_tokens: int, count: str, n_per_prompt: int,
                     available: int | None = None) -> dict:
    """Refuse, in one line, sampling the machine cannot hold: the KV cache of the largest
    ``model.generate`` call (``rows`` sequences of ``length`` positions), its step logits, and
    the ``n_tokens`` sampled in all, kept until the statistics. ``shape``: n_layers, kv_width,
    vocab, bytes_per_value; ``count``: the option that sets the responses per prompt, ``n_per_prompt``."""
    parts = {"kv_cache": 2 * shape["n_layers"] * shape["kv_width"] * shape["bytes_per_value"] * rows * length,
             "logits": LOGITS_COPIES * rows * shape["vocab"] * 4, "responses": HELD_BYTES_PER_TOKEN * n_tokens}
    parts["total"] = sum(parts.values())
    avail = available_bytes() if available is None else available
    out = {k: round(v / 2 ** 30, 6) for k, v in parts.items()}
    if avail is not None and parts["total"] > 0.9 * avail and os.environ.get("ENTROPYLAW_MEMORY_CHECK") != "off":
        raise EntropyLawError(
            f"`{count}` {n_per_prompt}: sampling needs about {out['total']:.1f} GiB ({rows} sequences of "
            f"{length} positions at once: KV cache {out['kv_cache']:.1f}, logits {out['logits']:.1f}; "
            f"{n_tokens} sampled tokens kept {out['responses']:.1f}) and this machine has {avail / 2 ** 30:.1f} "
            f"GiB available: try a smaller `{count}`, `max_new_tokens` or prompt file "
            "(ENTROPYLAW_MEMORY_CHECK=off to try anyway)")
    return out
