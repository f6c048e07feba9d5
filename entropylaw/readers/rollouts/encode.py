"""Rollout rows to token ids: :class:`Sequence`, the chat-template rule, micro-batches.

The tokenizer is any object with the transformers tokenizer calls (``__call__``,
``decode``, ``apply_chat_template``, ``chat_template``): nothing here imports transformers
or torch. :func:`chat_template_for` is the one rule, shared by ``probe`` and ``audit``, of
whether a text prompt goes through the tokenizer's chat template.

>>> import json, tempfile, os
>>> from entropylaw.readers.rollouts.formats import read_rollouts
>>> path = os.path.join(tempfile.mkdtemp(), "r.jsonl")
>>> with open(path, "w") as f:
...     for i, r in enumerate([1, 0]):
...         print(json.dumps({"prompt_id": "p0", "prompt_ids": [3, 4], "response_ids": [5, 6 + i], "reward": r}),
...               file=f)
>>> seqs = encode(read_rollouts(path), path, vocab_size=16)
>>> [(s.prompt_id, s.response_index, s.response_ids) for s in seqs]
[('p0', 0, [5, 6]), ('p0', 1, [5, 7])]
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import pandas as pd

from entropylaw.errors import EntropyLawError


@dataclass
class Sequence:
    """One response and its prompt as token ids (``row``: the 1-based row it was read from)."""

    prompt_id: str
    response_index: int
    prompt_ids: list
    response_ids: list
    reward: float
    old_logprobs: list | None = None
    row: int = 0
    advantage: float | None = None  # the trainer's, when its log has one (kept, not recomputed)
    extra: dict = field(default_factory=dict)


def checked_ids(value, path, line, column, vocab_size):
    """``value`` as a list of token ids inside ``[0, vocab_size)`` (None when missing), or one
    error naming the file, the row and the column."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    try:
        if isinstance(value, (str, bytes, dict)):
            raise TypeError
        values = list(value)
    except TypeError:
        raise EntropyLawError(f"{path}:{line}: {column} must be a list of integer token ids") from None
    for k, v in enumerate(values):  # 3.5 or true is no token id: never truncated to one
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not float(v).is_integer():
            raise EntropyLawError(f"{path}:{line}: {column} must be a list of integer token ids ({v!r} at "
                                  f"position {k})")
    ids = [int(v) for v in values]
    bad = [i for i in ids if i < 0 or i >= vocab_size]
    if bad:
        raise EntropyLawError(f"{path}:{line}: {column} has token id {bad[0]} outside the vocabulary "
                              f"[0, {vocab_size})")
    return ids


def chat_template_for(fmt: str | None, asked: bool | None) -> bool | None:
    """The ``chat_template`` to :func:`encode` rollouts of format ``fmt`` with, from what the user
    asked (``--chat-template`` True, ``--no-chat-template`` False, not said None).

    A trainer's own log (``verl-dump``, ``trl-completions``) keeps None, automatic: veRL's
    prompt is matched against the template and rebuilt (:func:`verl_prompt_ids`), TRL's
    prompts go through the template when the tokenizer has one, as TRL did. The project's
    file (or any other) holds the prompt as the policy saw it: the template only when asked.

    >>> [chat_template_for(f, None) for f in ("verl-dump", "trl-completions", "entropylaw")]
    [None, None, False]
    >>> chat_template_for("trl-completions", False), chat_template_for("entropylaw", True)
    (False, True)
    """
    return asked if fmt in ("verl-dump", "trl-completions") else bool(asked)


def uses_chat_template(tokenizer, chat_template: bool | None) -> bool:
    """``chat_template`` None (auto): when the tokenizer has one; True without one is a user error."""
    has = tokenizer is not None and bool(getattr(tokenizer, "chat_template", None))
    if chat_template and not has:
        raise EntropyLawError("`chat_template`: the tokenizer has no chat template (leave `chat_template` off)")
    return has if chat_template is None else bool(chat_template)


def prompt_ids(prompt, tokenizer, chat_template: bool | None, where: str) -> list:
    """Token ids of a text prompt or a list of chat messages ({"role", "content"}).

    Text goes through the tokenizer's chat template as one user turn, with the assistant's
    generation prompt after it, when :func:`uses_chat_template` says so; else it is tokenised
    as it is (no special tokens added).
    """
    if tokenizer is None:
        raise EntropyLawError(f"{where}: prompt is text but the model has no tokenizer (give prompt_ids, "
                              "or `tokenizer` DIR)")
    if isinstance(prompt, str):
        if not uses_chat_template(tokenizer, chat_template):
            return list(tokenizer(prompt, add_special_tokens=False)["input_ids"])
        messages = [{"role": "user", "content": prompt}]
    else:
        messages = list(prompt)
        if not all(isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
                   for m in messages):
            raise EntropyLawError(f"{where}: prompt must be text or a list of {{\"role\", \"content\"}} messages")
        if not uses_chat_template(tokenizer, True if chat_template is None else chat_template):
            raise EntropyLawError(f"{where}: chat messages need a chat template (`chat_template` is off)")
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


_SENTINEL = "<<entropylaw-sentinel>>"  # plain ASCII: it survives any tokenizer's round trip


def verl_prompt_ids(text: str, tokenizer) -> tuple:
    """(ids, how) of a prompt veRL dumped with ``skip_special_tokens=True``.

    When the text is the tokenizer's chat template around one user turn with its special
    tokens stripped, the user turn is cut out and the template applied again: the ids the
    policy saw (checked: they decode to the dumped text). Otherwise the text is tokenised as
    it is, and ``how`` says so.
    """
    if tokenizer is not None and getattr(tokenizer, "chat_template", None):
        rendered = tokenizer.apply_chat_template([{"role": "user", "content": _SENTINEL}], tokenize=False,
                                                 add_generation_prompt=True)
        skeleton = tokenizer.decode(tokenizer(rendered, add_special_tokens=False)["input_ids"],
                                    skip_special_tokens=True)
        if skeleton.count(_SENTINEL) == 1:
            head, tail = skeleton.split(_SENTINEL)
            if text.startswith(head) and text.endswith(tail) and len(text) >= len(head) + len(tail):
                content = text[len(head):len(text) - len(tail)]
                ids = prompt_ids(content, tokenizer, True, "veRL prompt")
                if tokenizer.decode(ids, skip_special_tokens=True) == text:
                    return ids, "chat template rebuilt"
    return (list(tokenizer(text, add_special_tokens=False)["input_ids"]),
            "tokenised as dumped (no chat template matched)")


def _present(row, column):
    v = row.get(column)
    return v is not None and not (isinstance(v, float) and math.isnan(v))


def _finite_number(row, column, path, line, named: str | None = None) -> float:
    """``row[column]`` as a finite float, or one line naming the file, the row and the value (by the
    file's own name for the column, ``named``: a veRL dump's ``score`` is the reward)."""
    said, what = (named, f"the {column}: ") if named else (column, "")
    try:
        v = float(row[column])
    except (TypeError, ValueError):
        raise EntropyLawError(f"{path}:{line}: {said} {row[column]!r} is not a number ({what}expected a finite "
                              "number)") from None
    if math.isnan(v):  # JSON null, NaN and a row without the key all read as NaN
        raise EntropyLawError(f"{path}:{line}: no {said} ({what}missing, null or NaN; expected a finite number)")
    if not math.isfinite(v):
        raise EntropyLawError(f"{path}:{line}: {said} is {v} ({what}expected a finite number)")
    return v


def encode(df: pd.DataFrame, path, vocab_size: int, tokenizer=None, max_length: int | None = None,
           chat_template: bool | None = False) -> list:
    """Check every row and turn it into a :class:`Sequence` (text through ``tokenizer``).

    A text ``prompt`` goes through the chat template as :func:`prompt_ids` says
    (``chat_template`` False by default here: rollout files usually hold the prompt as the
    policy saw it); ``*_ids`` columns are used as they are.
    """
    verl = df.attrs.get("format") == "verl-dump"
    path = str(df.attrs.get("source", path))
    lines = df.attrs.get("lines")  # the file's own line of each row, when the reader kept it
    if lines is not None and len(lines) != len(df):
        lines = None
    seqs, counts, hows = [], {}, {}
    empty = texts = 0  # responses written as "" and rewards written as text: counted, said
    eos = getattr(tokenizer, "eos_token_id", None) if tokenizer is not None else None
    for i, row in enumerate(df.to_dict("records")):
        line = lines[i] if lines is not None else i + 1  # 1-based: the file's line, else the row
        ids = {}
        for part in ("prompt", "response"):
            if _present(row, f"{part}_ids"):
                ids[part] = checked_ids(row[f"{part}_ids"], path, line, f"{part}_ids", vocab_size)
            elif _present(row, part):
                if tokenizer is None:
                    raise EntropyLawError(f"{path}:{line}: {part} is text but the model has no tokenizer "
                                          f"(give {part}_ids or `tokenizer`)")
                text = row[part]
                if part == "prompt" and not isinstance(text, str) and hasattr(text, "__len__"):
                    ids[part] = checked_ids(prompt_ids(text, tokenizer, chat_template, f"{path}:{line}"), path, line,
                                     part, vocab_size)
                    continue
                if not isinstance(text, str):
                    raise EntropyLawError(f"{path}:{line}: {part} must be a string")
                if verl and part == "prompt" and chat_template is not False:
                    tokens, how = verl_prompt_ids(text, tokenizer)
                    ids[part] = checked_ids(tokens, path, line, part, vocab_size)
                    hows[how] = hows.get(how, 0) + 1
                    continue
                tokens = prompt_ids(text, tokenizer, chat_template, f"{path}:{line}") if part == "prompt" else \
                    tokenizer(text, add_special_tokens=False)["input_ids"]
                ids[part] = checked_ids(tokens, path, line, part, vocab_size)
            else:
                raise EntropyLawError(f"{path}:{line}: no {part} or {part}_ids")
        if len(ids["response"]) == 0 and not _present(row, "response_ids") and isinstance(eos, int):
            # the text of a response whose first token was the end of sequence: trainers decode it
            # without special tokens, as "" (TRL's completions, veRL's dumps); its one token is eos
            ids["response"] = [eos]
            empty += 1
        if len(ids["response"]) == 0:
            raise EntropyLawError(f"{path}:{line}: empty response (expected at least one token)")
        if len(ids["prompt"]) == 0:
            raise EntropyLawError(f"{path}:{line}: empty prompt (the first response token needs a context)")
        total = len(ids["prompt"]) + len(ids["response"])
        if max_length is not None and total > max_length:
            raise EntropyLawError(f"{path}:{line}: prompt + response is {total} tokens, longer than the model's "
                                  f"context of {max_length}")
        reward = _finite_number(row, "reward", path, line, df.attrs.get("named", {}).get("reward"))
        if isinstance(row["reward"], str):  # "1.0": read as the number it writes, said
            texts += 1
        old = None
        if _present(row, "old_logprobs"):
            old = [float(v) for v in list(row["old_logprobs"])]
            if len(old) != len(ids["response"]):
                raise EntropyLawError(f"{path}:{line}: old_logprobs has {len(old)} values for "
                                      f"{len(ids['response'])} response tokens")
            if not all(math.isfinite(v) and v <= 1e-6 for v in old):
                raise EntropyLawError(f"{path}:{line}: old_logprobs must be finite log-probabilities (<= 0)")
        pid = str(row["prompt_id"])
        index = counts.get(pid, 0)
        counts[pid] = index + 1
        adv = None
        if _present(row, "advantage"):
            adv = _finite_number(row, "advantage", path, line)
        seqs.append(Sequence(pid, index, ids["prompt"], ids["response"], reward, old, row=line, advantage=adv,
                             extra={"answer": row.get("answer")} if _present(row, "answer") else {}))
    if hows:
        df.attrs.setdefault("notes", []).append("prompts: " + ", ".join(f"{n} {h}" for h, n in hows.items()))
    if texts:
        df.attrs.setdefault("notes", []).append(f"{texts} reward{'s' if texts != 1 else ''} written as text (\"1.0\") "
                                                "read as the numbers they write")
    if empty:
        df.attrs.setdefault("notes", []).append(
            f"{empty} empty response{'s' if empty != 1 else ''} read as the end-of-sequence token alone (sampled "
            "first, it is written as '' when the text is decoded without special tokens)")
    if any(s.advantage is not None for s in seqs) and not all(s.advantage is not None for s in seqs):
        without = [s.row for s in seqs if s.advantage is None]
        raise EntropyLawError(f"{path}: advantage is given for some responses and not others ({len(without)} "
                              f"without, first at row {without[0]}; give it for all, or for none to have it computed)")
    return seqs


def group_sizes(seqs: list) -> dict:
    sizes: dict = {}
    for s in seqs:
        sizes[s.prompt_id] = sizes.get(s.prompt_id, 0) + 1
    return sizes


def microbatches(seqs: list, token_budget: int) -> list:
    """Micro-batch id of each sequence: greedy packing in file order under ``token_budget`` tokens.

    This mirrors veRL's dynamic batch size: a new micro-batch starts when the next
    sequence would push the total (prompt + response) length over the budget.
    """
    ids, current, used = [], 0, 0
    for s in seqs:
        n = len(s.prompt_ids) + len(s.response_ids)
        if used and used + n > token_budget:
            current, used = current + 1, 0
        ids.append(current)
        used += n
    return ids
