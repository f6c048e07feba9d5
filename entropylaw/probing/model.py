"""Loading a ``transformers`` causal LM and reading its final hidden states and lm_head.

The probe never calls the model's own lm_head: it takes the decoder's last hidden state
(after the final norm) and the lm_head weight, and streams over the vocabulary
(:mod:`entropylaw.probing.stream`).

>>> from entropylaw.probing.model import tiny_model
>>> m = tiny_model("qwen2", vocab=64, hidden=16, seed=0)
>>> lm_head_weight(m).shape
torch.Size([64, 16])
"""

from __future__ import annotations

import contextlib
import functools
from pathlib import Path

import torch

from entropylaw.errors import EntropyLawError


def resolve_device(device: str | None) -> torch.device:
    """``auto`` -> cuda when available else cpu; ``cuda`` without a GPU is a user error."""
    if device in (None, "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise EntropyLawError(f"`device` {device}: no CUDA GPU is available on this machine (use `device` cpu)")
    try:
        dev = torch.device(device)
    except RuntimeError:
        raise EntropyLawError(f"`device` {device}: not a torch device (expected cpu, cuda, cuda:N or auto)") from None
    if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
        raise EntropyLawError(f"`device` {device}: no CUDA GPU of that index on this machine (it has "
                              f"{torch.cuda.device_count()}: cuda:0 .. cuda:{torch.cuda.device_count() - 1})")
    return dev


def tiny_model(kind: str = "llama", vocab: int = 128, hidden: int = 32, layers: int = 1, seed: int = 0,
               max_positions: int = 256, dtype: torch.dtype = torch.float32):
    """A seeded random-weight LLaMA- or Qwen2-style causal LM built from its config (no download)."""
    from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

    cls, config_cls = {"llama": (LlamaForCausalLM, LlamaConfig), "qwen2": (Qwen2ForCausalLM, Qwen2Config)}[kind]
    config = config_cls(vocab_size=vocab, hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=layers,
                        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=max_positions,
                        tie_word_embeddings=False, bos_token_id=0, eos_token_id=1, pad_token_id=None)
    torch.manual_seed(seed)
    model = cls(config).to(dtype)
    model.eval()
    return model


DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16, "float64": torch.float64}


def _torch_dtype(dtype: str, gguf: bool):
    if dtype == "auto":
        # GGUF weights are dequantised: float32 unless asked otherwise (their own type is quantised)
        return torch.float32 if gguf else "auto"
    if dtype not in DTYPES:
        raise EntropyLawError(f"`dtype` {dtype}: expected auto, float32, float64, bfloat16 or float16")
    return DTYPES[dtype]


@contextlib.contextmanager
def _quiet_gguf_bar(show: bool):
    """transformers draws GGUF dequantisation with a bare tqdm that its logging switch misses."""
    import transformers.modeling_gguf_pytorch_utils as gguf_utils

    original = gguf_utils.tqdm
    if not show:
        gguf_utils.tqdm = functools.partial(original, disable=True)
    try:
        yield
    finally:
        gguf_utils.tqdm = original


def gguf_cache_dir(path) -> Path | None:
    """Where the dequantised copy of a GGUF file is kept (None: ``ENTROPYLAW_CACHE=off``).

    ``$ENTROPYLAW_CACHE`` (default ``$XDG_CACHE_HOME/entropylaw`` or ``~/.cache/entropylaw``),
    keyed by the file's resolved path, size and modification time and the transformers
    version: reading a GGUF file parses its whole vocabulary once per reader, and
    transformers builds four readers (config, tokenizer, weights), about 20 s for
    SmolLM2-135M on 2 CPU cores; the cached model directory loads in about 1 s.
    """
    import hashlib
    import os

    import transformers

    root = os.environ.get("ENTROPYLAW_CACHE")
    if root == "off":
        return None
    if not root:
        root = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "entropylaw")
    p = Path(path).resolve()
    st = p.stat()
    key = f"{p}|{st.st_size}|{st.st_mtime_ns}|{transformers.__version__}"
    return Path(root) / "gguf" / f"{p.stem}-{hashlib.sha256(key.encode()).hexdigest()[:16]}"


def _cache_gguf(model, tokenizer, cache: Path) -> None:
    """Save the dequantised model (float32) and its tokenizer; a failure only costs the next load its speed."""
    import warnings

    from entropylaw.errors import EntropyLawWarning
    from entropylaw.fileio import atomic_dir

    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        with atomic_dir(cache) as tmp:
            model.save_pretrained(tmp)
            if tokenizer is not None:
                tokenizer.save_pretrained(tmp)
            (tmp / "entropylaw-complete").write_text("ok\n")
    except (OSError, EntropyLawError) as err:
        warnings.warn(f"GGUF cache {cache}: not written ({err}); the next load dequantises again",
                      EntropyLawWarning, stacklevel=2)


def load_model(path: str, device: str | None = "auto", dtype: str = "auto", device_map: str | None = None,
               progress: bool = False, max_memory: dict | None = None):
    """Load a causal LM and (when there is one) its tokenizer; errors name the path.

    ``path`` is a transformers model directory or a ``.gguf`` file; a GGUF file is checked
    first (:func:`entropylaw.probing.gguf_file.inspect_gguf`) and its weights dequantised to
    ``dtype`` (``auto``: float32). Its tokenizer, when the file carries one, comes with it.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from entropylaw.probing.gguf_file import inspect_gguf, is_gguf

    p = Path(path)
    gguf = p.is_file() and is_gguf(p)
    cache = gguf_cache_dir(p) if gguf else None
    if cache is not None and (cache / "entropylaw-complete").is_file():
        try:
            return load_model(str(cache), device, "float32" if dtype == "auto" else dtype, device_map, progress,
                              max_memory)
        except EntropyLawError:
            pass  # a damaged cache: load the GGUF file again, and rewrite the cache
    if not p.exists():
        raise EntropyLawError(f"`model` {path}: no such file or directory (expected a transformers model "
                              "directory or a .gguf file)")
    if p.is_file() and not gguf:
        raise EntropyLawError(f"`model` {path}: a file that is not a .gguf (expected a transformers model "
                              "directory or a .gguf file)")
    info = inspect_gguf(p) if gguf else None
    if not gguf and not (p / "config.json").exists():
        raise EntropyLawError(f"`model` {path}: no config.json (expected a transformers model directory)")
    dev = resolve_device(device) if device_map is None else None
    torch_dtype = _torch_dtype(dtype, gguf)
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    kwargs = {"dtype": torch_dtype}
    if device_map is not None:
        import tempfile

        kwargs["device_map"] = device_map
        kwargs["offload_folder"] = tempfile.mkdtemp(prefix="entropylaw-offload-")  # weights past every device
        if max_memory:
            kwargs["max_memory"] = max_memory
    where, source = (str(p.parent), {"gguf_file": p.name}) if gguf else (str(p), {})
    try:
        with _quiet_gguf_bar(progress) if gguf else contextlib.nullcontext():
            model = AutoModelForCausalLM.from_pretrained(where, **source, **kwargs)
    except Exception as err:  # noqa: BLE001 -- the boundary: safetensors, huggingface_hub validation, torch
        text = " ".join(str(err).split())[:240]  # one line, whatever the library's layout
        raise EntropyLawError(f"`model` {path}: cannot load ({type(err).__name__}: {text})") from None
    if gguf:
        _drop_gguf_quantizer(model, path)
    if dev is not None:
        model.to(dev)
    model.eval()
    tokenizer = None
    has_tokenizer = info["has_tokenizer"] if gguf else \
        any((p / f).exists() for f in ("tokenizer.json", "tokenizer_config.json", "tokenizer.model"))
    if has_tokenizer:
        try:
            tokenizer = AutoTokenizer.from_pretrained(where, **source)
        except Exception as err:  # noqa: BLE001 -- the boundary: tokenizers, sentencepiece, json
            raise EntropyLawError(f"`model` {path}: cannot load its tokenizer ({type(err).__name__})") from None
    if cache is not None and all(t.dtype == torch.float32 for t in model.parameters()):
        _cache_gguf(model, tokenizer, cache)
    return model, tokenizer


def check_files(path: str, where: str = "`model`") -> None:
    """What :func:`load_model` would refuse, found from the files alone (no weight is read): a
    missing path, a directory without config.json or weights, a safetensors file whose header or
    data the file does not hold, a GGUF file that is not one or is cut short.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "config.json").write_text("{}")
    >>> check_files(str(d), "checkpoint")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    entropylaw.errors.EntropyLawError: checkpoint ...: no weights (expected model.safetensors, ...)
    """
    from entropylaw.probing.gguf_file import inspect_gguf, is_gguf

    p = Path(path)
    if not p.exists():
        raise EntropyLawError(f"{where} {path}: no such file or directory (expected a transformers model "
                              "directory or a .gguf file)")
    if p.is_file():
        if not is_gguf(p):
            raise EntropyLawError(f"{where} {path}: a file that is not a .gguf (expected a transformers model "
                                  "directory or a .gguf file)")
        inspect_gguf(p, where)
        return
    if not (p / "config.json").is_file():
        raise EntropyLawError(f"{where} {path}: no config.json (expected a transformers model directory)")
    # the files transformers loads (not any *.safetensors: an adapter_model.safetensors beside them is not read)
    shards = [p / "model.safetensors"] if (p / "model.safetensors").is_file() else []
    index = p / "model.safetensors.index.json"
    if index.is_file():
        import json

        try:
            names = sorted(set(json.loads(index.read_text())["weight_map"].values()))
            if not all(isinstance(n, str) for n in names):
                raise TypeError("a shard's name is no text")
        except (ValueError, KeyError, TypeError, AttributeError):
            raise EntropyLawError(f"{where} {path}: {index.name} is not a safetensors index (no weight_map)") from None
        missing = [n for n in names if not (p / n).is_file()]
        if missing:
            raise EntropyLawError(f"{where} {path}: {index.name} names {len(missing)} missing shard"
                                  f"{'s' if len(missing) != 1 else ''} ({', '.join(missing[:3])})")
        shards = [p / n for n in names]
    if not shards and not (p / "pytorch_model.bin").is_file() and not (p / "pytorch_model.bin.index.json").is_file():
        raise EntropyLawError(f"{where} {path}: no weights (expected model.safetensors, a sharded "
                              "model.safetensors.index.json or pytorch_model.bin beside config.json)")
    for f in shards:
        _check_safetensors(f, f"{where} {path}")


def _check_safetensors(f: Path, where: str) -> None:
    """The 8-byte header length, the JSON header and every tensor's data within the file's size."""
    import json

    size = f.stat().st_size
    try:
        with open(f, "rb") as fh:
            n = int.from_bytes(fh.read(8), "little")
            if size < 8 or 8 + n > size:
                raise ValueError("header")
            header = json.loads(fh.read(n))
        end = max((int(v["data_offsets"][1]) for k, v in header.items() if k != "__metadata__"), default=0)
    except (ValueError, KeyError, TypeError, IndexError, AttributeError):
        raise EntropyLawError(f"{where}: {f.name} is corrupt or truncated (its safetensors header is not "
                              f"whole: {size} bytes)") from None
    if 8 + n + end > size:
        raise EntropyLawError(f"{where}: {f.name} is truncated (its tensors need {8 + n + end} bytes, the file "
                              f"has {size})")


def _drop_gguf_quantizer(model, path) -> None:
    """A GGUF model whose weights were all dequantised is a plain model: let it be trained and saved.

    transformers keeps its GGUF "quantizer" on the model even when it unpacked every block to
    floating point, which makes ``save_pretrained`` (and so a Trainer's checkpoints) refuse it.
    """
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is None:
        return
    tensors = list(model.parameters()) + list(model.buffers())
    if not all(t.is_floating_point() or t.dtype in (torch.int64, torch.bool) for t in tensors):
        raise EntropyLawError(f"`model` {path}: transformers kept GGUF blocks packed; the probe needs them "
                              "dequantised (update transformers, or convert the file to a model directory)")
    quantizer.remove_quantization_config(model)


def _offloaded(module, name: str):
    """A weight accelerate offloaded (``--device-map`` past every device's memory), on its execution device."""
    hook = getattr(module, "_hf_hook", None)
    weights = getattr(hook, "weights_map", None)
    if weights is None:
        raise EntropyLawError(f"{type(module).__name__}.{name} is on the meta device and no offload hook holds it")
    return weights[name].to(getattr(hook, "execution_device", None) or "cpu")


def offloaded(model) -> bool:
    """Some weights live on disk/meta (accelerate offload): readable for a forward, not updatable in place."""
    return any(p.device.type == "meta" for p in model.parameters())


def lm_head_weight(model) -> torch.Tensor:
    head = model.get_output_embeddings()
    if head is None or not hasattr(head, "weight"):
        raise EntropyLawError(f"{type(model).__name__}: no output embedding (lm_head) to stream over")
    if head.weight.device.type == "meta":
        return _offloaded(head, "weight")
    if getattr(head, "bias", None) is not None:
        raise EntropyLawError(f"{type(model).__name__}: lm_head has a bias, which the streamed probe does not support")
    for attr in ("final_logit_softcapping", "logit_scale", "output_multiplier_scale"):
        if getattr(model.config, attr, None) not in (None, 1, 1.0):
            raise EntropyLawError(f"{type(model).__name__}: config.{attr} rescales the logits, which the streamed "
                                  "probe does not support")
    return head.weight


def vocab_size(model) -> int:
    return int(lm_head_weight(model).shape[0])


def context_length(model) -> int | None:
    for attr in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
        value = getattr(model.config, attr, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


def check_tokenizer(model, tokenizer, where: str = "`model`") -> None:
    """A tokenizer with more tokens than the lm_head rows, or under half of them, is not this model's."""
    if tokenizer is None:
        return
    n_tok, V = len(tokenizer), vocab_size(model)
    if n_tok > V or n_tok < V // 2:
        raise EntropyLawError(f"{where}: tokenizer has {n_tok} tokens but the model's vocabulary has {V} "
                              "(tokenizer and model do not match)")


def final_hidden(model, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Last hidden state (after the final norm) [B, L, d] of the decoder stack."""
    decoder = model.get_decoder()
    out = decoder(input_ids=input_ids, attention_mask=attention_mask, use_cache=False)
    return out.last_hidden_state if hasattr(out, "last_hidden_state") else out[0]


def input_device(model) -> torch.device:
    emb = model.get_input_embeddings()
    if emb.weight.device.type == "meta":  # offloaded: the hook runs it on its execution device
        return torch.device(getattr(getattr(emb, "_hf_hook", None), "execution_device", None) or "cpu")
    return emb.weight.device
