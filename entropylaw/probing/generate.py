"""Sampling G responses per prompt with ``model.generate`` and scoring them.

Prompt files are JSONL (or parquet) with ``prompt`` (text) or ``prompt_ids``, optional
``prompt_id`` and ``answer``.
"""

from __future__ import annotations

import math

import torch

from entropylaw.errors import EntropyLawError
from entropylaw.readers.rollouts.encode import Sequence, checked_ids, prompt_ids
from entropylaw.readers.rollouts.own import read_prompts_frame
from entropylaw.probing.model import context_length, input_device


def read_prompts(path, tokenizer, vocab_size: int, chat_template: bool | None = None) -> list:
    """[(prompt_id, prompt_ids, answer)] from a prompt file (text prompts: see :func:`prompt_ids`)."""
    df = read_prompts_frame(path)
    out, seen = [], {}
    lines = df.attrs.get("lines") or list(range(1, len(df) + 1))
    for i, row in enumerate(df.to_dict("records")):
        line = lines[i]
        prompt = row.get("prompt")
        if row.get("prompt_ids") is not None and not (isinstance(row.get("prompt_ids"), float)):
            ids = checked_ids(row["prompt_ids"], path, line, "prompt_ids", vocab_size)
        elif isinstance(prompt, str) or (prompt is not None and not isinstance(prompt, float)):
            ids = checked_ids(prompt_ids(prompt, tokenizer, chat_template, f"{path}:{line}"), path, line,
                              "prompt", vocab_size)
        else:
            raise EntropyLawError(f"{path}:{line}: no prompt or prompt_ids")
        if not ids:
            raise EntropyLawError(f"{path}:{line}: empty prompt")
        answer = row.get("answer")
        if isinstance(answer, float) and math.isnan(answer):
            answer = None
        pid = row.get("prompt_id")
        pid = str(i) if pid is None or (isinstance(pid, float) and math.isnan(pid)) else str(pid)
        if pid in seen and seen[pid][1] != ids:  # one prompt_id is one GRPO group: two prompts would share a baseline
            raise EntropyLawError(f"{path}:{line}: prompt_id {pid!r} holds another prompt than at {path}:{seen[pid][0]} "
                                  "(the responses drawn under one prompt_id are one group: give each prompt its own)")
        seen.setdefault(pid, (line, ids))  # the same prompt again (a set's duplicate problem): its samples, one group
        out.append((pid, ids, answer))
    return out


def _chunks(prompts: list, n: int, max_new_tokens: int, batch_tokens: int) -> list:
    """Prompt chunks whose n x (longest prompt + max_new_tokens) stays within batch_tokens."""
    out, cur, longest = [], [], 0
    for p in prompts:
        L = max(longest, len(p[1]))
        if cur and (len(cur) + 1) * n * (L + max_new_tokens) > batch_tokens:
            out.append(cur)
            cur, L = [], len(p[1])
        cur.append(p)
        longest = L
    return out + ([cur] if cur else [])


def check_room(model, prompts: list, n: int, max_new_tokens: int, chunks: list, count: str = "generate") -> None:
    """Before sampling: every sequence fits the model's context (as rollouts read must), and the
    largest ``model.generate`` call and the samples kept fit the memory (a chunk holds one prompt's
    ``n`` responses at least: a huge ``n`` is one huge call)."""
    from entropylaw.probing.memory import check_generation

    longest = max((len(ids) for _, ids, _ in prompts), default=0)
    limit = context_length(model)
    if limit is not None and longest + max_new_tokens > limit:
        raise EntropyLawError(f"`max_new_tokens` {max_new_tokens}: the longest prompt ({longest} tokens) and its "
                              f"response could reach {longest + max_new_tokens} tokens, past the model's context of "
                              f"{limit}: expected at most {max(limit - longest, 0)}")
    c = model.config
    heads = getattr(c, "num_attention_heads", None) or 1
    head_dim = getattr(c, "head_dim", None) or (getattr(c, "hidden_size", None) or 1) // heads
    kv_width = (getattr(c, "num_key_value_heads", None) or heads) * head_dim
    weight = next(model.parameters(), None)
    dev = input_device(model)
    available = torch.cuda.mem_get_info(dev)[0] if dev.type == "cuda" else None
    shape = {"n_layers": getattr(c, "num_hidden_layers", None) or 1, "kv_width": kv_width,
             "vocab": getattr(c, "vocab_size", None) or 1,
             "bytes_per_value": weight.element_size() if weight is not None else 4}
    rows = max((len(ch) for ch in chunks), default=0) * n
    check_generation(shape, rows, longest + max_new_tokens, len(prompts) * n * (longest + max_new_tokens), count, n,
                     available)


@torch.no_grad()
def sample(model, prompts: list, n: int, temperature: float = 1.0, max_new_tokens: int = 256,
           eos_token_id=None, seed: int = 0, tokenizer=None, reward_fn=None, batch_tokens: int = 4096,
           progress: bool = False, count: str = "generate", where: str = "`model`") -> list:
    """G sampled responses per prompt as :class:`Sequence` with rewards (0 without reward_fn).

    Prompts are left-padded into batches (``batch_tokens`` bounds rows x (prompt + new
    tokens)) and decoded together with the KV cache; a response ends at its first eos
    (kept: it was sampled). Refused before sampling when the responses would pass the model's
    context or the memory (:func:`check_room`; ``count`` names the option that sets ``n``); logits
    that are not finite are an error naming ``where`` (the model).
    """
    chunks = _chunks(prompts, n, max_new_tokens, batch_tokens)
    check_room(model, prompts, n, max_new_tokens, chunks, count)
    torch.manual_seed(seed)
    dev = input_device(model)
    eos = eos_token_id if eos_token_id is not None else getattr(model.generation_config, "eos_token_id", None)
    eos_set = set(eos if isinstance(eos, (list, tuple)) else ([eos] if eos is not None else []))
    pad = next(iter(eos_set), 0)
    seqs = []
    bar = None
    if progress:
        from entropylaw.progress import Progress

        bar = Progress(len(prompts) * n, "generate", "resp")
    for chunk in chunks:
        L = max(len(ids) for _, ids, _ in chunk)
        inp = torch.full((len(chunk), L), pad, dtype=torch.long)
        mask = torch.zeros((len(chunk), L), dtype=torch.long)
        for b, (_, ids, _) in enumerate(chunk):
            inp[b, L - len(ids):] = torch.tensor(ids)
            mask[b, L - len(ids):] = 1
        try:
            out = model.generate(inp.to(dev), attention_mask=mask.to(dev), do_sample=True, temperature=temperature,
                                 top_p=1.0, top_k=0, max_new_tokens=max_new_tokens, num_return_sequences=n,
                                 pad_token_id=pad, eos_token_id=list(eos_set) or None)
        except RuntimeError as err:  # torch.multinomial on NaN probabilities: the model, not a bug
            if "probability tensor contains" not in str(err):
                raise
            from entropylaw.probing.forward import nonfinite_why

            raise EntropyLawError(f"{where}: sampling met logits that are not finite; "
                                  f"{nonfinite_why(model.dtype)}") from None
        for b, (pid, ids, answer) in enumerate(chunk):
            for j in range(n):
                resp = out[b * n + j, L:].tolist()
                for k, t in enumerate(resp):  # cut after the first eos
                    if t in eos_set:
                        resp = resp[:k + 1]
                        break
                if not resp:
                    continue
                reward = 0.0
                if reward_fn is not None:
                    text = tokenizer.decode(resp, skip_special_tokens=True) if tokenizer is not None else \
                        " ".join(map(str, resp))
                    reward = float(reward_fn(text, answer))
                cut = len(resp) == max_new_tokens and resp[-1] not in eos_set  # no end: the answer may be cut
                seqs.append(Sequence(pid, j, list(ids), resp, reward, extra={"answer": answer, "cut": cut}))
        if bar is not None:
            bar.update(len(chunk) * n)
    if bar is not None:
        bar.close()
    return seqs


def cut_note(seqs: list, max_new_tokens: int, where: str = "") -> str | None:
    """What to say of responses that reached ``max_new_tokens`` with no end of sequence: their
    rewards judge an answer the limit may have cut (None when none did)."""
    cut = sum(1 for s in seqs if (s.extra or {}).get("cut"))
    if not cut:
        return None
    return (f"{where}{cut} of {len(seqs)} responses reached `max_new_tokens` {max_new_tokens} with no end of "
            "sequence: cut, their rewards judge an answer that may not be finished (a larger `max_new_tokens`)")


def sample_informative(model, prompts: list, n: int, min_informative: int, max_rounds: int, estimator: str = "grpo",
                       eps: float = 1e-6, seed: int = 0, **kwargs) -> tuple:
    """DAPO-style dynamic sampling: resample the groups with no signal until ``min_informative`` have one.

    Round r draws G new responses (seed + r) for every prompt whose group still has a zero
    advantage on every response, replacing that group (DAPO discards such groups and draws
    again), at most ``max_rounds`` rounds in all: the budget is max_rounds x prompts x G
    responses. Returns (sequences, {"rounds", "responses_generated", "informative_groups"}).
    """
    from entropylaw.probing.signal import with_advantages

    def informative_ids(seqs):
        groups: dict = {}
        for s in with_advantages(seqs, estimator, eps):
            groups[s.prompt_id] = groups.get(s.prompt_id, False) or s.advantage != 0.0
        return {pid for pid, ok in groups.items() if ok}

    seqs = sample(model, prompts, n, seed=seed, **kwargs)
    generated, rounds = len(seqs), 1
    good = informative_ids(seqs)
    while len(good) < min_informative and rounds < max_rounds:
        redo = [p for p in prompts if p[0] not in good]
        if not redo:
            break
        fresh = sample(model, redo, n, seed=seed + rounds, **kwargs)
        generated += len(fresh)
        rounds += 1
        redo_ids = {p[0] for p in redo}
        seqs = [s for s in seqs if s.prompt_id not in redo_ids] + fresh
        good = informative_ids(seqs)
    order = {p[0]: i for i, p in enumerate(prompts)}
    seqs.sort(key=lambda s: (order[s.prompt_id], s.response_index))
    return seqs, {"rounds": rounds, "max_rounds": max_rounds, "responses_generated": generated,
                  "informative_groups": len(good), "min_informative": min_informative}
