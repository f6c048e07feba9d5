"""A character-level tokenizer with a ChatML-like template, for tiny random language models in tests."""

from __future__ import annotations

CHARS = [chr(c) for c in range(32, 127)] + ["\n"]
TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
            "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def char_tokenizer(template: str | None = TEMPLATE):
    """One token per printable character plus <|im_end|> (eos, pad) and <|im_start|>: 98 tokens."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel({c: i for i, c in enumerate(CHARS)}, unk_token=" "))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("."), "isolated")
    tok.decoder = decoders.Fuse()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|im_end|>")
    fast.add_special_tokens({"additional_special_tokens": ["<|im_start|>"]})
    fast.chat_template = template
    return fast
