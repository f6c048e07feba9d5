"""Checking a ``.gguf`` file before transformers dequantises it.

transformers loads GGUF checkpoints (``from_pretrained(dir, gguf_file=name)``), but a
truncated or corrupt file fails deep inside numpy's memmap, and an architecture it has no
mapping for fails with a generic ``ValueError``. :func:`inspect_gguf` reads only the
header (metadata and tensor table, no weights), checks that every tensor's bytes lie
inside the file, and that the architecture is one transformers can load; each failure
is one :class:`EntropyLawError` line naming the file.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "x.gguf")
>>> _ = open(path, "wb").write(b"not a gguf file at all")
>>> try:
...     inspect_gguf(path)
... except EntropyLawError as err:
...     print(str(err).split(": ", 1)[1])
not a GGUF file (it does not start with the GGUF magic bytes)
"""

from __future__ import annotations

from pathlib import Path

from entropylaw._optional import require
from entropylaw.errors import EntropyLawError

MAGIC = b"GGUF"


def is_gguf(path) -> bool:
    """A regular file named ``*.gguf`` (the magic bytes are checked by :func:`inspect_gguf`)."""
    p = Path(path)
    return p.suffix.lower() == ".gguf" and not p.is_dir()


def _supported_architectures() -> list:
    from transformers.modeling_gguf_pytorch_utils import GGUF_SUPPORTED_ARCHITECTURES

    return [a for a in GGUF_SUPPORTED_ARCHITECTURES if a not in ("general", "tokenizer")]


def _field(reader, key):
    field = reader.fields.get(key)
    if field is None:
        return None
    try:
        return field.contents()
    except Exception:  # a malformed value: treat as absent, the loader will complain precisely
        return None


def inspect_gguf(path, where: str = "`model`") -> dict:
    """Header facts of a GGUF file: ``architecture``, ``has_tokenizer``, ``chat_template``, ``n_tensors``."""
    p = Path(path)
    if not p.is_file():
        raise EntropyLawError(f"{where} {path}: no such file")
    with open(p, "rb") as f:
        head = f.read(4)
    if head != MAGIC:
        raise EntropyLawError(f"{where} {path}: not a GGUF file (it does not start with the GGUF magic bytes)")
    gguf = require("gguf", extra="real", purpose=f"{where} {path}")
    try:
        reader = gguf.GGUFReader(str(p))
    except Exception as err:  # truncated headers raise ValueError, IndexError, struct errors ...
        raise EntropyLawError(f"{where} {path}: corrupt or truncated GGUF file ({type(err).__name__}: "
                              f"{str(err).splitlines()[0] if str(err) else 'unreadable header'})") from None
    size = p.stat().st_size
    for t in reader.tensors:
        end = int(t.data_offset) + int(t.n_bytes)
        if end > size or int(t.data.nbytes) != int(t.n_bytes):
            raise EntropyLawError(f"{where} {path}: truncated GGUF file (tensor {t.name} needs bytes up to {end}, "
                                  f"the file has {size})")
    if not reader.tensors:
        raise EntropyLawError(f"{where} {path}: the GGUF file holds no tensors")
    arch = _field(reader, "general.architecture")
    if not isinstance(arch, str):
        raise EntropyLawError(f"{where} {path}: GGUF metadata has no general.architecture")
    supported = _supported_architectures()
    if arch not in supported:
        raise EntropyLawError(f"{where} {path}: GGUF architecture {arch!r} cannot be loaded by transformers "
                              f"(it loads {', '.join(supported)})")
    layers, hidden = _field(reader, f"{arch}.block_count"), _field(reader, f"{arch}.embedding_length")
    return {"architecture": arch, "has_tokenizer": _field(reader, "tokenizer.ggml.model") is not None,
            "chat_template": _field(reader, "tokenizer.chat_template"), "n_tensors": len(reader.tensors),
            "n_params": sum(int(t.n_elements) for t in reader.tensors),
            "n_layers": int(layers) if isinstance(layers, (int, float)) else None,
            "hidden": int(hidden) if isinstance(hidden, (int, float)) else None}
