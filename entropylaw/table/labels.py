"""Families of runs, short run labels, and which runs are interventions, for tables and
figures with many runs.

A family is the runs of one model (the table's ``model`` metadata); models with a
single run are pooled as "other runs". Within a family a run is labelled by what sets it
apart: the parts of its id (split at ``_`` and ``-``) that not every member shares. A label
longer than ``max_len`` characters loses its tracker's run id (runs of one setting keep its
start: ``clip_lr1e-05_epoch3 batch64 4c``), then the parts most runs share while it still tells
its run apart, its settings written by their initial where it must (``lr1e-05_e3 b128 mean_no_use``);
what is still too long is cut in the middle. The label is a handle: the full id stays available
(hover, footnote).

>>> ids = ["qwen2.5-7b__exp1a__rho0.10_seed43", "qwen2.5-7b__exp1a__rho1.00_seed42",
...        "verl_ppo_deepseek-llm-7b-chat_gsm8k", "verl_grpo_deepseek-llm-7b-chat_gsm8k", "lone-run"]
>>> models = ["Qwen2.5-7B", "Qwen2.5-7B", "deepseek", "deepseek", "other-model"]
>>> fam = families(ids, models)
>>> list(fam)
['Qwen2.5-7B', 'deepseek', 'other runs']
>>> list(families(["q-0.5b", "q-7b"], ["Qwen2.5-0.5B", "Qwen2.5-7B"]))  # a size series: no run is "other"
['all runs']
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
ALL = "all runs"  # the one family of runs that share no model with another run


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
        return {key or ALL: members}
    out, other = {}, []
    for key, members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), natural_key(kv[0]))):
        if len(members) > 1 and key:
            out[key] = members
        else:
            other += members
    if other:  # every run a model of its own (a size series): they are all the runs, not "other" ones
        out[OTHER if out else ALL] = sorted(other, key=natural_key)
    return out


# a run id's parts lie between underscores, hyphens and spaces; a hyphen in a number's exponent
# (lr1e-05) is no gap: split there, lr1e-05 and lr2e-05 would both lose their shared "05"; one after
# a number's e and before a word is (run1e-final, gemma-2e-it)
SEP = r"(?:[_\s]|(?<![0-9][eE])-|(?<=[0-9][eE])-(?![0-9]))+"


def _tokens(run_id: str) -> list[str]:
    """The parts of a run id.

    >>> _tokens("grpo_clip_lr1e-05_epoch1-b64"), _tokens("run1e-final")
    (['grpo', 'clip', 'lr1e-05', 'epoch1', 'b64'], ['run1e', 'final'])
    """
    return [t for t in re.split(SEP, str(run_id)) if t]


def _kept(run_id: str, common: set, renamed: Mapping[str, str] | None = None) -> str:
    """The parts of ``run_id`` not in ``common``, as written (or as ``renamed``): neighbours keep the
    separator between them (``gemma-2-2b-it`` stays whole), a gap where parts were dropped is a space.

    >>> _kept("trl_ppo_gemma-2-2b-it_gsm8k", {"trl", "gsm8k"}), _kept("a_b_c", {"b"}), _kept("a_b", {"a", "b"})
    ('ppo_gemma-2-2b-it', 'a c', 'a_b')
    >>> _kept("clip_lr1e_epoch3_batch128", {"clip"}, {"epoch3": "e3", "batch128": "b128"})
    'lr1e_e3_b128'
    """
    renamed = renamed or {}
    pieces = re.split(f"({SEP})", str(run_id))
    if all(t in common for t in pieces[::2] if t):
        return str(run_id)
    out, last = "", None  # last: the index of the last part kept
    for i in range(0, len(pieces), 2):
        part = pieces[i]
        if not part or part in common:
            continue
        part = renamed.get(part, part)
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
# a word that belongs to the part after it: "no_clip" is one setting, and "no" alone would say nothing
BOUND = {"no", "not", "non", "with", "without"}
SETTING = re.compile(r"([A-Za-z]{4,})(\d[\d.]*)")  # a word and its value: epoch3, batch128, seed43


def _stem(token: str) -> str:
    return re.sub(r"[\d.]+", "", token)


def _value(token: str) -> str:
    """``token`` with its numbers read as numbers: rho1.0 and rho1.00 are one setting."""
    return re.sub(r"\d+(?:\.\d+)?", lambda m: repr(float(m.group())), token.lower())


def shorten(text: str, max_len: int) -> str:
    """Cut ``text`` in the middle to ``max_len`` characters (an ellipsis marks the cut)."""
    if len(text) <= max_len:
        return text
    head = (max_len - 1) // 2 + (max_len - 1) % 2
    tail = max_len - 1 - head
    return text[:head] + "…" + (text[-tail:] if tail else "")


def short_labels(groups: Mapping[str, Sequence[str]], max_len: int = 30) -> dict[str, str]:
    """``run_id -> short label``, unique within each family (the full id when the parts
    that tell members apart are not unique). A label too long loses its tracker's run id
    (:func:`_without_run_ids`), then the parts that tell its run apart least (:func:`_fit`), and
    is then cut in the middle to ``max_len`` characters."""
    out = {}
    for members in groups.values():
        tokens = {r: _tokens(r) for r in members}
        common = set.intersection(*(set(t) for t in tokens.values())) if len(members) > 1 else set()
        labels = {r: _kept(r, common) for r in members}
        if len(set(labels.values())) < len(labels):
            labels = {r: r for r in members}
        elif any(len(v) > max_len for v in labels.values()):
            ends = _id_ends(members, tokens, common, labels, max_len)
            labels = {r: _kept(r, drop) + tail for r, (drop, tail) in ends.items()}
            if len(members) > 1:
                labels = _fit(members, tokens, common, ends, labels, max_len)
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
    label kept the id and lost what tells the runs apart (``clip_lr1e epoc…h64__tmeb8iyd``). Runs whose
    labels are then alike (one setting run twice) keep the id's shortest start, of two characters at
    least, that tells them apart, one length for them all (``epoch3_batch128 4c2``).

    >>> ids = ["clip_lr1e_epoch1_batch64__tmeb8iyd", "clip_lr1e_epoch3_batch128__4c2lw1ul",
    ...        "clip_lr1e_epoch3_batch128__6sse57zp", "clip_lr1e_epoch3_batch128__6s7xk2pq"]
    >>> toks = {r: _tokens(r) for r in ids}
    >>> labels = {r: _kept(r, {"clip", "lr1e"}) for r in ids}
    >>> sorted(_without_run_ids(ids, toks, {"clip", "lr1e"}, labels, 20).values())
    ['epoch1_batch64', 'epoch3_batch128 4c2', 'epoch3_batch128 6s7', 'epoch3_batch128 6ss']
    """
    ends = _id_ends(members, tokens, common, labels, max_len)
    return {r: _kept(r, drop) + tail for r, (drop, tail) in ends.items()}


def _id_ends(members, tokens, common, labels, max_len) -> dict:
    """``run_id -> (parts dropped, text after the label)``: see :func:`_without_run_ids`."""
    keep = {r: (common, "") for r in members}
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
        return keep
    short = {r: _kept(r, common | ids) for r in members}
    alike: dict = {}
    for r in members:
        alike.setdefault(short[r], []).append(r)
    out = dict(keep)
    for rest, group in alike.items():
        # only a label too long loses its id (one that fits keeps every part: aime24 is no run id)
        if rest in group or not any(len(labels[r]) > max_len for r in group):  # the id itself, or fits
            continue
        if len(group) == 1:
            out[group[0]] = (common | ids, "")
            continue
        ends = [tokens[r][-1] for r in group]
        if not all(e in ids for e in ends):
            continue  # a run of the group without an id: the ids tell nothing apart
        n = next((k for k in range(2, max(map(len, ends)) + 1) if len({e[:k] for e in ends}) == len(ends)), 0)
        out.update((r, (common | ids, " " + e[:n])) for r, e in zip(group, ends))
    shown = [_kept(r, drop) + tail for r, (drop, tail) in out.items()]
    return out if len(set(shown)) == len(shown) else keep


def _key(unit: tuple) -> str:
    return _value("_".join(unit))


def _units(tokens) -> list[tuple]:
    """``tokens`` as the settings they name: a word of :data:`BOUND` with the part after it."""
    out: list[tuple] = []
    for t in tokens:
        if out and out[-1][-1].lower() in BOUND and len(out[-1]) == 1:
            out[-1] = out[-1] + (t,)
        else:
            out.append((t,))
    return out


def _fit(members, tokens, common, ends, labels, max_len) -> dict:
    """``labels`` where those too long lose, one at a time, the parts that the most runs of the family
    share (they say the least; of parts as widely shared, the last first), each only while the rest still
    tells the run apart: no other run's id holds every part left (runs of one setting run twice: but
    theirs, told apart by the start of their tracker's id). A setting (a word whose value the family
    sweeps: epoch1, epoch3) is never dropped: once what is left to drop is shared by fewer runs than the
    most shared of the label's settings, these are written by their initial (epoch3 -> e3, batch128 ->
    b128, where no two such words of the family share one; whole again if the label then fits). The
    parts dropped are those that least tell runs apart, not the end or the middle of the id, and
    ``no_clip`` drops whole (:data:`BOUND`).

    >>> ids = ["clip_lr1e_epoch3_batch128_mean_no_use_std", "clip_lr1e_epoch3_batch128_mean_use_std",
    ...        "clip_lr1e_epoch2_batch128", "clip_lr1e_epoch3_batch128", "clip_lr1e_epoch3_batch64"]
    >>> toks, common = {r: _tokens(r) for r in ids}, {"clip", "lr1e"}
    >>> ends = {r: (common, "") for r in ids}
    >>> got = _fit(ids, toks, common, ends, {r: _kept(r, common) for r in ids}, 20)
    >>> got[ids[0]], got[ids[1]], got[ids[2]]
    ('e3_b128_mean_no_use', 'e3_b128_mean_use_std', 'epoch2_batch128')
    """
    units = {r: _units([t for t in tokens[r] if t not in common]) for r in members}
    held: dict = {}  # a part -> the runs holding it
    for r in members:
        for u in units[r]:
            held.setdefault(_key(u), set()).add(r)
    values: dict = {}  # a setting's word -> its values in the family
    for key in held:
        if re.search("[a-z]", _stem(key)):
            values.setdefault(_stem(key), set()).add(key)
    swept = {k for k in held if len(values.get(_stem(k), ())) > 1}
    every = {t for r in members for t in tokens[r]}
    settings = {t: m for t in every if (m := SETTING.fullmatch(t)) and _value(t) in swept}
    initials = Counter(w[0] for w in {m[1].lower() for m in settings.values()})
    renamed = {t: m[1][0] + m[2] for t, m in settings.items()
               if initials[m[1][0].lower()] == 1 and m[1][0] + m[2] not in every}
    out = dict(labels)
    for r in (r for r in members if len(labels[r]) > max_len):
        drop, tail = ends[r]
        # runs of one setting run twice: their labels are alike but for the start of the tracker's id
        mates = {s for s in members if tail and ends[s][1] and _kept(s, drop) == _kept(r, drop)} | {r}
        parts = [u for u in units[r] if not set(u) <= drop]
        count = {u: len(held[_key(u)]) for u in parts}

        def show(left, short):
            gone = drop | {t for u in parts if u not in left for t in u}
            return _kept(r, gone, renamed if short else None) + tail

        # (runs holding, a drop before the initials, the last part first, the part dropped or None)
        moves = [(count[u], 0, -i, u) for i, u in enumerate(parts) if _key(u) not in swept]
        short_ones = [count[u] for u in parts if len(u) == 1 and u[0] in renamed]
        moves += [(max(short_ones), 1, 0, None)] if short_ones else []
        left, short = list(parts), False
        for _, _, _, u in sorted(moves, key=lambda m: (-m[0], m[1], m[2])):
            rest = [v for v in left if v != u]
            if u is None:
                short = True
            elif rest and set.intersection(*(held[_key(v)] for v in rest)) <= mates:
                left = rest
            if len(show(left, short)) <= max_len:
                break
        out[r] = show(left, short and len(show(left, False)) > max_len)
    return out if len(set(out.values())) == len(out) else labels


def handles(run_ids: Sequence[str], width: int) -> tuple[list[str], bool]:
    """Names of at most ``width`` characters for a terminal table's rows, and whether they are
    labels: the ids where they fit; else the short labels (:func:`short_labels`: what sets each
    run apart, its settings whole) where they fit, stay unique and keep at least as much of what
    sets the runs apart (:func:`_said`) as the ids cut (each still told from the others:
    :func:`~entropylaw.terminal.shorts`); else the ids cut. Cut from the left, a CS336 sweep's ids
    read ``~train_batch128__8jla7krl``, their learning rate and epochs gone; cut in the middle,
    labels of runs of several models can say less than the ids (``q2.5-7b….10_s43``).

    >>> handles(["grpo_clip_lr1e-05_epoch1_batch64__tmeb8iyd", "grpo_clip_lr2e-05_epoch3_batch64__a9y44bkp"], 20)
    (['lr1e-05_epoch1', 'lr2e-05_epoch3'], True)
    >>> handles(["a", "b"], 20)
    (['a', 'b'], False)
    """
    ids = [str(r) for r in run_ids]
    if all(len(r) <= width for r in ids):
        return ids, False
    cut = shorts(ids, width)
    if len(set(ids)) == len(ids) > 1:  # a run alone has no parts that others share: its id, cut
        label = short_labels(families(ids), width)
        got = [label[r] for r in ids]
        if len(set(got)) == len(got) and all(len(g) <= width for g in got) and _said(ids, got) >= _said(ids, cut):
            return got, True
    return cut, False


def _said(ids: Sequence[str], names: Sequence[str]) -> int:
    """How many of the parts that set the runs apart ``names`` keep, whole or as a setting's initial
    (``epoch3`` as ``e3``): what a table's names tell of the runs behind them.

    >>> ids = ["a_lr1e-05_epoch1_x1y2z3w4", "a_lr2e-05_epoch3_q9r8s7t6"]
    >>> _said(ids, ["lr1e-05_e1", "lr2e-05_e3"]), _said(ids, ["~x1y2z3w4", "~q9r8s7t6"])
    (4, 2)
    """
    tokens = [_tokens(r) for r in ids]
    common = set.intersection(*(set(t) for t in tokens)) if tokens else set()
    kept = 0
    for parts, name in zip(tokens, names):
        name = name.lower()
        for t in (t for t in parts if t not in common):
            m = SETTING.fullmatch(t)
            kept += t.lower() in name or bool(m and f"{m[1][0]}{m[2]}".lower() in name)
    return kept


HANDLES_SAID = "run: what sets it apart in its id (the parts every run shares left out; --json has whole ids)"


def run_labels(t, run_ids: Sequence[str] | None = None, max_len: int = 30):
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
