"""A character-level tokenizer built locally (no downloads).

One token per character of ``0123456789+:,>`` plus ``<pad>``, ``<bos>``, ``<eos>``,
``<unk>``. :meth:`CharTokenizer.to_hf` wraps the same vocabulary in a
``transformers.PreTrainedTokenizerFast`` so checkpoints carry a tokenizer that
``AutoTokenizer.from_pretrained`` loads.

>>> tok = CharTokenizer()
>>> ids = tok.encode("3+5:")
>>> ids
[1, 7, 14, 9, 15]
>>> tok.decode(ids + [tok.eos_id, tok.pad_id])
'3+5:'
>>> tok.vocab_size
18
"""

from __future__ import annotations

from pathlib import Path

SPECIALS = ["<pad>", "<bos>", "<eos>", "<unk>"]
CHARS = "0123456789+:,>"


class CharTokenizer:
    """Characters <-> ids; ``encode`` prepends ``<bos>``, ``decode`` stops at ``<eos>``."""

    def __init__(self):
        self.vocab = {tok: i for i, tok in enumerate(SPECIALS)}
        for ch in CHARS:
            self.vocab[ch] = len(self.vocab)
        self.inverse = {i: t for t, i in self.vocab.items()}
        self.pad_id, self.bos_id, self.eos_id, self.unk_id = (self.vocab[t] for t in SPECIALS)

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def encode(self, text: str, bos: bool = True) -> list[int]:
        ids = [self.vocab.get(ch, self.unk_id) for ch in text]
        return [self.bos_id] + ids if bos else ids

    def decode(self, ids) -> str:
        out = []
        for i in ids:
            i = int(i)
            if i == self.eos_id:
                break
            if i in (self.pad_id, self.bos_id):
                continue
            out.append(self.inverse.get(i, "?"))
        return "".join(out)

    def to_hf(self):
        """The same vocabulary as a ``PreTrainedTokenizerFast`` (for checkpoints)."""
        from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors
        from transformers import PreTrainedTokenizerFast

        core = Tokenizer(models.WordLevel(dict(self.vocab), unk_token="<unk>"))
        core.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
        core.decoder = decoders.Fuse()
        # prompts start with <bos> in training, so the saved tokenizer adds it too
        core.post_processor = processors.TemplateProcessing(
            single="<bos> $A", special_tokens=[("<bos>", self.bos_id)])
        return PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", bos_token="<bos>",
                                       eos_token="<eos>", unk_token="<unk>")

    def save(self, directory: str | Path) -> None:
        self.to_hf().save_pretrained(str(directory))
