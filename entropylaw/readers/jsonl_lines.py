"""What a JSON-lines log's lines say before they are read: whether a file is one (its first line
an object with a step), which keys are step axes, how many values a broken line held, and the
lines of a JSON document of record lists (``{"train": [...], "eval": [...]}``), a record a line; a value's
number (a list of numbers: their mean), and the run's config its first lines may hold before its first step.

>>> looks_like_jsonl(b'{"step": 1, "actor/entropy": 0.5}'), is_step_name("grpo_step")
(True, True)
"""

from __future__ import annotations

import json
import math
import os
import re

from entropylaw.readers.compressed import open_log
from entropylaw.readers.names import SPLIT_WORDS, STEP_NAMES, names_a_step_axis
from entropylaw.terminal import count

STEP_FIELDS = STEP_NAMES  # then any *_step or */step, then _step
TYPE_FIELDS = ("type", "kind", "split", "mode", "phase")


def is_step_name(key: str) -> bool:
    """``step``, ``grpo_step``, ``eval/step``: a step axis as trainers name them (as
    ``define_metric("eval/*", step_metric="eval/step")`` declares one to W&B).

    >>> [is_step_name(k) for k in ("eval/step", "eval_step", "timing_s/step", "val/steps_per_second", "Step")]
    [True, True, False, False, True]
    """
    # "Step", "Iteration": a loop's capitalised names (after the lowercase ones, where a line has both)
    return isinstance(key, str) and (key in STEP_FIELDS or key.lower() in STEP_FIELDS or names_a_step_axis(key))


_KEY = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:\s*(\{)?')
_OPEN_KEY = re.compile(r'[,{]\s*"(?:[^"\\]|\\.)*$')


def values_in_broken_line(line: str) -> int:
    """Values a line that is not valid JSON held, from the ``"key":`` it still shows (not the
    step, not a ``{``-opening container), a key cut before its colon counting too; at least 1.

    >>> values_in_broken_line('{"step": 7, "data": {"actor/entropy": 0.5, "critic/score/mean": 0.7')
    2
    >>> values_in_broken_line('{"step": 7, "data": {"actor/entropy": 0.5, "critic/sc')
    2
    >>> values_in_broken_line("garbage")
    1
    """
    n = sum(1 for m in _KEY.finditer(line) if m.group(2) is None and not is_step_name(m.group(1))
            and m.group(1) not in TYPE_FIELDS)
    n += bool(_OPEN_KEY.search(line))
    return max(n, 1)


def looks_like_jsonl(head: bytes) -> bool:
    """True when the first non-blank line of ``head`` is a JSON object with a step."""
    for line in head.splitlines():
        line = line.strip()
        if not line:
            continue
        if not line.startswith(b"{"):
            return False
        try:
            obj = json.loads(line)
        except ValueError:
            return any(f'"{s}"'.encode() in line for s in (*STEP_FIELDS, "_step"))
        return isinstance(obj, dict) and any(is_step_name(k) for k in obj)
    return False


# a document's lists of records that name no type of row: the records as they are
RECORD_LISTS = frozenset({"history", "log_history", "logs", "log", "records", "metrics", "entries", "steps", "data"})
MAX_DOCUMENT = 256 << 20  # a JSON document of record lists is read whole: past this, not tried


def document_of(path) -> dict | None:
    """``{name: [record, ...]}`` where the file is one JSON document whose values are lists of records
    (``{"train": [{"step": 1, ...}], "eval": [...]}``, ``{"history": [...]}``) rather than a record a line;
    None otherwise (a JSON lines file's first line is a record of its own)."""
    if os.path.getsize(path) > MAX_DOCUMENT:
        return None
    with open_log(path, text=True) as f:
        first = f.readline()
        try:
            obj = json.loads(first)
            whole = not f.readline().strip()  # one line: the document itself, or one record
        except ValueError:
            obj, whole = None, False
        if obj is None and first.strip() == "{":  # indented: the document spans the file
            try:
                obj, whole = json.loads(first + f.read()), True
            except ValueError:
                return None
    if not whole or not isinstance(obj, dict) or any(is_step_name(k) for k in obj):
        return None
    # lists of records, some with a step (a findings file's lists of dicts without one are no log)
    lists = {k: v for k, v in obj.items() if isinstance(v, list) and v and all(isinstance(r, dict) for r in v)
             and any(is_step_name(str(key)) for r in v[:50] for key in r)}
    return lists or None


def lines_of(path, document: dict | None):
    """The file's lines, or a document's records as JSON lines, each tagged by the name of its list
    (``eval``) unless the list names no type (:data:`RECORD_LISTS`) or the record has its own."""
    if document is None:
        with open_log(path, text=True) as f:
            yield from f
        return
    for name, records in document.items():
        kind = list_kind(name)
        for record in records:
            tagged = {**record, "type": kind} if kind and not any(t in record for t in TYPE_FIELDS) else record
            yield json.dumps(tagged) + "\n"


def list_kind(name: str) -> str:
    """The type of row a document's list of records holds, by its name: ``eval`` for its evaluations
    (``eval``, ``evals``, ``eval_history``, ``validation``, ``test_log``), ``train`` for its training
    records (``train``, ``train_history``, ``training``), '' for a list that names no type
    (:data:`RECORD_LISTS`), else the name itself.

    >>> [list_kind(n) for n in ("evals", "eval_history", "train_history", "history", "rollout")]
    ['eval', 'eval', 'train', '', 'rollout']
    """
    low = name.lower()
    if low in RECORD_LISTS:
        return ""
    return SPLIT_WORDS.get(re.split(r"[_\-./ ]", low, maxsplit=1)[0], name)


def numeric(value) -> float | None:
    """A number, or a number written as text (``"1.1172"``: a writer that formats its values)."""
    if isinstance(value, str):
        return from_text(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value)
    except OverflowError:  # an integer past a float's range (400 digits): infinite, as JSON's 1e400 is
        return math.inf if value > 0 else -math.inf


def from_text(text: str) -> float | None:
    """``"1.1172"``, ``" 3e-4 "``, ``"nan"`` as floats; any other text None."""
    try:
        return float(text) if len(text) < 40 else None
    except ValueError:
        return None


# a list of numbers that is no value a sample: a tensor's shape, token ids, indices ("logits shape [4, 512]",
# "input_ids": [151644, 872]): its mean is no quantity of the run
NOT_SAMPLES = re.compile(r"(?:^|[_\-./ ])(?:shape|shapes|size|sizes|dim|dims|id|ids|idx|index|indices)$", re.I)


def list_mean(value: list) -> float | None:
    """The mean of a list of numbers (``"rewards": [0, 1, 1, 0]``, a custom loop's value a sample: the batch's
    mean reward, 0.5), None for anything else (an empty list, text, true/false, nested lists).

    >>> list_mean([0, 1, 1, 0]), list_mean([0.5, 1e400]), list_mean([]), list_mean([1, "a"]), list_mean([True])
    (0.5, inf, None, None, None)
    >>> list_mean([float('inf'), float('-inf')]), list_mean([10 ** 400, 1])
    (nan, inf)
    """
    numbers = [numeric(v) for v in value if type(v) in (int, float)] if value else []
    if not numbers or len(numbers) != len(value):
        return None
    # a non-finite value among them makes the mean non-finite (counted by the reader), as one logged alone
    return (math.fsum(numbers) if all(map(math.isfinite, numbers)) else sum(numbers)) / len(numbers)


def is_config(obj) -> bool:
    """A line that is a run's config, not its metrics: an object with no step, holding text or a nested
    object (``{"model": "Qwen/Qwen2.5-0.5B", "lr": 1e-06}``: a loop's ``json.dumps(vars(args))`` first)."""
    return type(obj) is dict and "data" not in obj and not any(is_step_name(k) for k in obj) \
        and any(isinstance(v, (str, dict)) for v in obj.values())


def read_config(raw, configs: list[tuple[int, dict]]) -> None:
    """The run's model, data set, algorithm, seed and plan from the config lines before its first step, where
    its file's name says none; said in the row account (their numbers are settings, not values of the run)."""
    from entropylaw.readers import run_config

    meta: dict = {}
    for _, obj in configs:
        for key, value in run_config.meta_from_run_config(obj).items():
            meta.setdefault(key, value)
    filled = run_config.fill(raw.meta, meta, guessed=(raw.meta.get("model"),))
    lines = ", ".join(str(n) for n, _ in configs[:3]) + (", ..." if len(configs) > 3 else "")
    raw.report.note(f"{count(len(configs), 'line')} before the first step with no step, the run's config (line "
                    f"{lines}): not read as values" + (f"; {run_config.said([], meta, filled).split(': ', 1)[1]}"
                                                       if filled else ""))


# a line's dict of metrics under a name that says only that ({"step": 5, "split": "eval", "metrics":
# {"accuracy": 0.3}}): its keys are the metrics' names, as if not wrapped (eval/metrics/accuracy named
# no benchmark "metrics", and train/metrics/entropy was found as no entropy); one such dict a line (_wrapper)
WRAPPERS = frozenset({"metrics", "scalars", "values", "stats", "logs"})


def flatten(obj: dict, prefix: str = "", unwrap: str | None = None):
    """``(key, value)`` of a line's object, nested dicts as ``a/b``; ``unwrap``: a top-level dict
    whose keys stand as they are (:func:`wrapper`).

    >>> list(flatten({"split": "eval", "metrics": {"acc": 0.3, "n": {"ok": 2}}}, unwrap="metrics"))
    [('split', 'eval'), ('acc', 0.3), ('n/ok', 2)]
    """
    for key, value in obj.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            yield from flatten(value, prefix if not prefix and key == unwrap else name + "/")
        else:
            yield name, value


def wrapper(obj: dict) -> str | None:
    """The one dict of :data:`WRAPPERS` a line holds, where its keys are none of the line's own
    (``{"metrics": {"reward": 0.31}, "stats": {"reward": 0.05}}``: two wrappers, kept apart, the mean
    and the std were averaged into one reward), else None.

    >>> wrapper({"step": 1, "metrics": {"acc": 0.3}}), wrapper({"metrics": {"r": 1}, "stats": {"r": 0}})
    ('metrics', None)
    """
    found = [k for k, v in obj.items() if k in WRAPPERS and isinstance(v, dict)]
    if len(found) != 1 or set(obj[found[0]]) & set(obj):
        return None
    return found[0]
