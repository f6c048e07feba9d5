"""Families of runs, short run labels, and which runs are interventions, for tables and
figures with many runs.

A family is the runs of one model (the table's ``model`` metadata); models with a
single run are pooled as "other runs". Within a family a run is labelled by what sets it
apart: the parts of its id (split at ``_`` and ``-``) that not every member shares, cut
in the middle to ``max_len`` characters. The full id stays available (hover, footnote).

>>> ids = ["qwen2.5-7b__exp1a__rho0.10_seed43", "qwen2.5-7b__exp1a__rho1.00_seed42",
...        "verl_ppo_deepseek-llm-7b-chat_gsm8k", "verl_grpo_deepseek-llm-7b-chat_gsm8k", "lone-run"]
>>> models = ["Qwen2.5-7B", "Qwen2.5-7B", "deepseek", "deepseek", "other-model"]
>>> fam = families(ids, models)
>>> list(fam)
['Qwen2.5-7B', 'deepseek', 'other runs']
>>> labels = short_labels(fam)
>>> labels["qwen2.5-7b__exp1a__rho0.10_seed43"], labels["verl_grpo_deepseek-llm-7b-chat_gsm8k"]
('rho0.10_seed43', 'grpo')
>>> shorten("a-very-long-run-identifier-that-goes-on", 16)
'a-very-l…goes-on'
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Mapping, Sequence

from entropylaw.terminal import shorts

OTHER = "other runs"


def natural_key(text: str) -> list:
    """Sort key that reads the numbers in a name as numbers: a size series runs 0.5b, 1.5b,
    3b, 7b, 14b, 72b (not 0.5b, 1.5b, 14b, 3b ...).

    >>> sorted(["q-14b", "q-0.5b", "q-3b", "q-72b", "q-1.5b"], key=natural_key)
    ['q-0.5b', 'q-1.5b', 'q-3b', 'q-14b', 'q-72b']
    >>> sorted(["rho1.00", "rho0.10", "rho0.7"], key=natural_key)
    ['rho0.10', 'rho0.7', 'rho1.00']
    """
    return [(0, float(p), "") if re.fullmatch(r"\d+(?:\.\d+)?", p) else (1, 0.0, p)
            for p in re.split(r"(\d+(?:\.\d+)?)", str(text)) if p]


def families(run_ids: Sequence[str], models: Sequence[str] | None = None) -> dict[str, list[str]]:
    """``family name -> run ids`` (runs in natural order, :func:`natural_key`; families by
    size, then name; single-run models pooled last as :data:`OTHER`)."""
    models = list(models) if models is not None else [""] * len(run_ids)
    order = sorted(range(len(run_ids)), key=lambda i: natural_key(run_ids[i]))
    run_ids, models = [run_ids[i] for i in order], [models[i] for i in order]
    groups: dict[str, list[str]] = {}
    for run_id, model in zip(run_ids, models):
        key = str(model) if model and model == model else ""
        groups.setdefault(key, []).append(run_id)
    if len(groups) == 1:
        ((key, members),) = groups.items()
        return {key or "all runs": members}
    out, other = {}, []
    for key, members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), natural_key(kv[0]))):
        if len(members) > 1 and key:
            out[key] = members
        else:
            other += members
    if other:
        out[OTHER] = sorted(other, key=natural_key)
    return out


def _tokens(run_id: str) -> list[str]:
    return [t for t in re.split(r"[_\-\s]+", str(run_id)) if t]


def _kept(run_id: str, common: set) -> str:
    """The parts of ``run_id`` not in ``common``, as written: neighbours keep the separator
    between them (``gemma-2-2b-it`` stays whole), a gap where parts were dropped is a space.

    >>> _kept("trl_ppo_gemma-2-2b-it_gsm8k", {"trl", "gsm8k"}), _kept("a_b_c", {"b"}), _kept("a_b", {"a", "b"})
    ('ppo_gemma-2-2b-it', 'a c', 'a_b')
    """
    pieces = re.split(r"([_\-\s]+)", str(run_id))
    if all(t in common for t in pieces[::2] if t):
        return str(run_id)
    out, last = "", None  # last: the index of the last part kept
    for i in range(0, len(pieces), 2):
        part = pieces[i]
        if not part or part in common:
            continue
        if part.isdigit() and i >= 2 and last != i - 2 and pieces[i - 2]:
            # a number alone reads as a row's number ("3 tracking" beside # 1-4): it keeps the part
            # before it, as the id writes them ("7_3 tracking")
            part, i0 = pieces[i - 2] + pieces[i - 1] + part, i - 2
        else:
            i0 = i
        if out:
            out += pieces[i0 - 1] if last == i0 - 2 else " "
        out, last = out + part, i
    return out


ID_LIKE = re.compile(r"(?=[a-z0-9]*\d)(?=[a-z0-9]*[a-z])[a-z0-9]{6,}")  # letters and digits: 8jla7krl, batch128


def _stem(token: str) -> str:
    return re.sub(r"[\d.]+", "", token)


def shorten(text: str, max_len: int) -> str:
    """Cut ``text`` in the middle to ``max_len`` characters (an ellipsis marks the cut)."""
    if len(text) <= max_len:
        return text
    head = (max_len - 1) // 2 + (max_len - 1) % 2
    tail = max_len - 1 - head
    return text[:head] + "…" + (text[-tail:] if tail else "")


def short_labels(groups: Mapping[str, Sequence[str]], max_len: int = 28) -> dict[str, str]:
    """``run_id -> short label``, unique within each family (the full id when the parts
    that tell members apart are not unique): the parts as the id writes them, cut in the middle
    to ``max_len`` characters."""
    out = {}
    for members in groups.values():
        tokens = {r: _tokens(r) for r in members}
        common = set.intersection(*(set(t) for t in tokens.values())) if len(members) > 1 else set()
        labels = {}
        for r in members:
            labels[r] = _kept(r, common)
        if len(set(labels.values())) < len(labels):
            labels = {r: r for r in members}
        if any(len(v) > max_len for v in labels.values()):
            labels = _without_run_ids(members, tokens, common, labels, max_len)
        cut = {r: shorten(v, max_len) for r, v in labels.items()}
        alike: dict = {}
        for r, v in cut.items():
            alike.setdefault(v, []).append(r)
        for group in (g for g in alike.values() if len(g) > 1):  # cut in the middle alike: cut where they differ
            cut.update(zip(group, shorts([labels[r] for r in group], max_len)))
        out.update(cut if len(set(cut.values())) == len(cut) else labels)
    return out


def _without_run_ids(members, tokens, common, labels, max_len: int = 0) -> dict:
    """``labels`` less the tracker's run ids (:data:`ID_LIKE` parts that end one run's id and are in
    no other, their letters in no other part; a run alone keeps every part). Cut in the middle, a
    label kept the id and lost what tells the runs apart (``clip_lr1e epoc…h64__tmeb8iyd``). A run whose label is then another's keeps its id.

    >>> ids = ["clip_lr1e_epoch1_batch64__tmeb8iyd", "clip_lr1e_epoch3_batch128__4c2lw1ul",
    ...        "clip_lr1e_epoch3_batch128__6sse57zp"]
    >>> toks = {r: _tokens(r) for r in ids}
    >>> labels = {r: _kept(r, {"clip", "lr1e"}) for r in ids}
    >>> sorted(_without_run_ids(ids, toks, {"clip", "lr1e"}, labels, 20).values())
    ['epoch1_batch64', 'epoch3_batch128__4c2lw1ul', 'epoch3_batch128__6sse57zp']
    """
    seen = Counter(t for r in members for t in set(tokens[r]))
    # a tracker's run id: in one run's id only, and no other part shares its letters (batch128 beside
    # batch64, epoch1, seed43 are settings: their letters recur with another number)
    stems = Counter(map(_stem, seen))
    # and its id's last part (W&B's name__id): a run alone, or the ids of runs of other models (the
    # pooled "other runs"), hold parts once each too, and one in the middle names a setting, a model or a
    # benchmark (epoch1, batch64, llama3, aime24: "verl_opd_qwen3-4b collapse" lost its benchmark)
    lasts = {tokens[r][-1] for r in members if tokens[r]} if len(members) > 1 else set()
    ids = {t for t, n in seen.items() if n == 1 and t in lasts and ID_LIKE.fullmatch(t) and stems[_stem(t)] == 1}
    if not ids:
        return labels
    short = {r: _kept(r, common | ids) for r in members}
    counts = Counter(short.values())
    # only a label too long loses its id (one that fits keeps every part: aime24 is no run id)
    out = {r: short[r] if counts[short[r]] == 1 and short[r] != r and len(labels[r]) > max_len else labels[r]
           for r in members}
    return out if len(set(out.values())) == len(out) else labels


def run_labels(t, run_ids: Sequence[str] | None = None, max_len: int = 28):
    """``(families, labels)`` for the runs of a tidy table (all of them, or ``run_ids``)."""
    import entropylaw.table as tt

    meta = tt.runs(t).set_index("run_id")
    ids = list(run_ids) if run_ids is not None else list(meta.index)
    models = [meta.at[r, "model"] if r in meta.index and "model" in meta else "" for r in ids]
    groups = families(ids, models)
    return groups, short_labels(groups, max_len)


def is_intervention(algorithm: str) -> bool:
    """``grpo+clip_cov``: an intervention on an algorithm (Figs. 9-13), not an algorithm (Fig. 6);
    ``reinforce++`` is an algorithm.

    >>> is_intervention("grpo+clip_cov"), is_intervention("reinforce++"), is_intervention("grpo")
    (True, False, False)
    """
    return re.search(r"\+[A-Za-z0-9_]", str(algorithm or "")) is not None
