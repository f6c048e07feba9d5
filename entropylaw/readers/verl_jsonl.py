"""JSON lines: one JSON object per line. veRL's file logger (``{"step": n, "data": {...}}``) and
any trainer's own ``metrics.jsonl``.

- The step. The first key of ``step``, ``global_step``, ``iteration``, ``iter``, ``iter_num``, ``it``,
  ``update``, then any
  ``*_step`` (``grpo_step``) or ``*/step`` (``train/step``), then ``_step``, that the file's lines
  carry as an integer (the one most lines carry first), or the key given as ``step_key``. A line
  without that key is read on a step key of its own (an eval line's ``eval/step``); each step
  key is its own step axis.
- Rows tagged by a type (``"type"``, ``"kind"``, ``"split"``, ``"mode"``, ``"phase"``:
  ``"train"``, ``"eval"``, ``"rollout"``) are kept apart: each key is read as
  ``<type>/<key>`` (an ``eval`` row's ``answer_accuracy`` is ``eval/answer_accuracy``, which
  :mod:`entropylaw.readers.keys` takes as validation), and each type is its own step axis.
- Several rows of one key at one step (an off-policy trainer writes a training row per
  micro-step) become their mean, counted in the row account (:mod:`entropylaw.readers.common`);
  in veRL's ``{"step", "data"}`` layout a step written twice keeps its last value (a re-logged step).
- Nested dicts are flattened with ``/``. A line that is not JSON is dropped and counted (as many
  rows as the ``"key":`` values it still shows, reason ``unparseable line``; a JSON object with no
  integer step, reason ``missing or non-integer step``; the file's last line cut while being
  written, with no newline, counts what the line before it held, reason ``cut-off last line``); a
  value that is not a number
  (string, list, bool) is dropped and counted as ``non-numeric value``; ``NaN``/``Infinity``
  tokens reach :func:`finalize` which drops them. A ``null`` is a key not logged at that step
  (as a CSV's empty cell: what pandas writes for a missing value), neither read nor dropped.
- A seed on each line (``seed``, ``random_seed``): a sweep's seeds written one after the other are a run each,
  ``<file>_seed<k>``, as a table's are; a seed that changes between lines of one step is a sample's, set aside
  (:mod:`entropylaw.readers.seeds`).
- The file is streamed line by line; the rows kept are held in typed arrays, keys as codes
  (:mod:`entropylaw.readers.jsonl_rows`): 500k values cost ~25 MB, not ~100 MB of Python lists.

>>> import tempfile, os
>>> with tempfile.TemporaryDirectory() as d:
...     p = os.path.join(d, "metrics.jsonl")
...     _ = open(p, "w").write('{"step": 1, "data": {"actor/entropy": 0.5, "note": "x"}}\\n'
...                            'garbage\\n{"step": 2, "data": {"actor/entropy": 0.4}}\\n')
...     [raw] = read_verl_jsonl(p)
>>> raw.rows()
[(1, 'actor/entropy', 0.5), (2, 'actor/entropy', 0.4)]
>>> raw.report.line().split(": ", 1)[1]
'read 4 values, kept 0, dropped 2 (non-numeric value: 1, unparseable line: 1, at line 2)'
>>> with tempfile.TemporaryDirectory() as d:
...     p = os.path.join(d, "metrics.jsonl")
...     _ = open(p, "w").write('{"type": "train", "grpo_step": 1, "token_entropy": 0.5}\\n'
...                            '{"type": "train", "grpo_step": 1, "token_entropy": 0.3}\\n'
...                            '{"type": "eval", "grpo_step": 1, "answer_accuracy": 0.25}\\n')
...     [raw] = read_verl_jsonl(p)
>>> raw.rows(), raw.repeats
([(1, 'train/token_entropy', 0.5), (1, 'train/token_entropy', 0.3), (1, 'eval/answer_accuracy', 0.25)], 'mean')
"""

from __future__ import annotations

import json
import math
import os
from array import array

from entropylaw.errors import EntropyLawError
from entropylaw.readers.common import RawRun, existing_file
from entropylaw.readers.jsonl_lines import (NOT_SAMPLES, STEP_FIELDS, TYPE_FIELDS, document_of, flatten,
                                            from_text as _from_text, is_config, is_step_name, lines_of, list_mean,
                                            numeric as _numeric, read_config, values_in_broken_line, wrapper)
from entropylaw.readers.jsonl_rows import BIG, Rows
from entropylaw.readers.jsonl_text import TextFields, read_meta
from entropylaw.readers.names import (BOOKKEEPING, eval_beside_training, model_from_filename, run_id_from_path,
                                      typed_key)
from entropylaw.readers.tidy import MISSING_STEP
from entropylaw.readers.percent_text import percent_number
from entropylaw.readers.seeds import by_seed
from entropylaw.terminal import count

SNIFF_LINES = 200
UNPARSEABLE = "unparseable line"
CUT_LAST = "cut-off last line"
NON_NUMERIC = "non-numeric value"
# a record's or config's text naming its run: two files of one folder that name two runs are not joined
RUN_NAME_KEYS = frozenset({"run_name", "run_id", "exp_name", "experiment_name", "wandb_run_name", "run"})
NO_NAME = "key with no name"
MAX_NOTES = 5
# what a trainer's dump of generated samples holds as text on each line, beside a reward per sample
SAMPLE_FIELDS = frozenset({"prompt", "prompts", "response", "responses", "completion", "completions", "generation",
                           "generations", "output", "outputs", "question", "problem", "solution", "text", "messages",
                           "model_output", "ground_truth"})


def _step_order(path, step_key: str | None, document: dict | None = None) -> list[str]:
    """The step keys to try on each line, best first: the user's, else the names a step has, in
    the order of :data:`STEP_FIELDS`, then ``*_step`` keys by how many of the first lines carry them."""
    if step_key:
        return [step_key]
    counts: dict[str, int] = {}
    for n, line in enumerate(lines_of(path, document)):
        if n >= SNIFF_LINES:
            break
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            for key, value in obj.items():
                if is_step_name(key) and _integer(value) is not None:
                    counts[key] = counts.get(key, 0) + 1
    named = [k for k in STEP_FIELDS if k in counts]
    others = sorted((k for k in counts if k not in STEP_FIELDS and k != "_step"), key=lambda k: -counts[k])
    return named + others + ["_step"]


def _own_step(obj: dict) -> str:
    """The step key of a line that lacks the file's: an eval line's ``eval/step`` in a file of
    ``train/step`` lines, read on its own axis (W&B exports' ``*/step`` columns are read so too)."""
    if not isinstance(obj, dict):
        raise ValueError
    return next(k for k, v in obj.items() if is_step_name(k) and _integer(v) is not None)


def _integer(value) -> int | None:
    if isinstance(value, str):  # a step written as text ("12")
        value = _from_text(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return int(value) if float(value).is_integer() else None
    except (OverflowError, ValueError):
        return None


def _slot(kind: str, key: str) -> list:
    """What a key of a line of type ``kind`` is, found once a key: [its name in the table, its code
    (-1 until a value is kept), 1 a step's name, 2 bookkeeping, 0 a metric]."""
    name = typed_key(kind, key)  # "val/acc" in an eval row: its split said already
    return [name, -1, 2 if BOOKKEEPING.match(key) else 1 if is_step_name(key) else 0]


def read_verl_jsonl(path: str | os.PathLike, run_id: str | None = None, step_key: str | None = None) -> list[RawRun]:
    """Read a JSON-lines metrics file into one :class:`RawRun` (see the module docstring)."""
    path = existing_file(path, 'JSON lines, one object per line with a step: {"step": 1, ...}')
    source = str(path)
    raw = RawRun(run_id or run_id_from_path(path), source, ordered=True)
    report = raw.report
    rows = Rows()
    values, codes, code_of, loads = rows.values, rows.codes, rows.code_of, json.loads
    scan = json.JSONDecoder().scan_once  # json.loads' own scanner, without its wrappers
    line_steps, line_numbers, line_counts, line_axes, axes = rows.steps, rows.lines, rows.counts, rows.on, rows.axes
    notes = {UNPARSEABLE: 0, NON_NUMERIC: 0, MISSING_STEP: 0, NO_NAME: 0}
    document = document_of(path)  # {"train": [...], "eval": [...]}: its records, a line each
    order = _step_order(path, step_key, document)
    used: dict[str, int] = {}
    types: dict[str, int] = {}
    slots: dict[str, dict[str, list]] = {}  # per type of row, per key: its _slot
    enveloped = False
    n_read = 0  # values read from good lines (report.read once, at the end)
    stepless: dict[str, None] = {}  # keys of the first objects, for the error when no line has a step
    texts: dict[str, str] = {}  # keys holding numbers written as text: one example each
    lists: dict[str, int] = {}  # keys holding a list of numbers (a value a sample): the first list's length
    prose: dict[str, int] = {}  # keys of SAMPLE_FIELDS holding text: lines of each (a file of samples)
    comments: list[int] = []  # lines of comments
    configs: list[tuple[int, dict]] = []  # lines of the run's config, before its first step
    aside: set[str] = set()
    # eval.jsonl beside a train.jsonl: its lines are eval rows though none says so (a type on a line still wins)
    file_kind = "eval" if eval_beside_training(path) else ""
    elsewhere: dict[str, int] = {}  # lines without the `step_key` read on a step of their own

    def note(kind: str, message: str) -> None:
        notes[kind] += 1
        if notes[kind] <= MAX_NOTES:
            report.note(message)

    text = TextFields()

    def said_text(key: str, n: int, first: list) -> None:
        for lineno, value in first:
            note(NON_NUMERIC, f"line {lineno}: key {key!r} has non-numeric value {value!r:.40} (dropped)")
        notes[NON_NUMERIC] += n - len(first)

    last_count = 0  # values of the last good line: what a cut last line probably held
    if document is not None:
        report.note("one JSON document of record lists, read a record a line ("
                    + ", ".join(f"{k}: {count(len(v), 'record')}" for k, v in document.items())
                    + "; a 'line' below counts its records in that order)")
    for lineno, line in enumerate(lines_of(path, document), 1):
        unterminated = not line.endswith("\n")
        line = line.strip()
        if "\x00" in line:
            line = line.replace("\x00", "")
        if not line:
            continue
        if line[0] in "#/" and line.startswith(("#", "//")):  # a comment a script wrote (# run grpo lr=1e-6)
            comments.append(lineno)
            continue
        fractional = None  # a step that is a number but no whole one (1.5): said as such, not "unparseable"
        whole = False  # a JSON object read whole: one without a step is said so, not "unparseable"
        try:
            try:
                obj, end = scan(line, 0)
            except StopIteration:  # not JSON, or JSON after a blank: as json.loads says
                end = -1
            if end != len(line):
                obj = loads(line)
            whole = isinstance(obj, dict)
            if len(stepless) < 40 and isinstance(obj, dict):
                stepless.update(dict.fromkeys(obj))
            # {"model": ..., "lr": ...} before the first step: the run's config (not a line of the step the user names)
            if not used and is_config(obj) and not any(k in obj for k in order):
                configs.append((lineno, obj))
                continue
            for step_field in order:
                if step_field in obj:
                    break
            else:
                step_field = _own_step(obj)
            step = obj[step_field]
            if type(step) is not int or not -BIG < step < BIG:
                whole = _integer(step)
                if whole is None:
                    number = _numeric(step) if not isinstance(step, bool) else None
                    fractional = (step_field, step) if number is not None and math.isfinite(number) else None
                    raise ValueError
                step = whole
        except (ValueError, TypeError, KeyError, AttributeError, OverflowError, StopIteration):
            n = values_in_broken_line(line)
            if unterminated:  # the writer was cut off mid-line: it held what the lines before held
                n = max(n, last_count)
                report.read(n)
                report.drop(CUT_LAST, n, [lineno])
                note(UNPARSEABLE, f"line {lineno}: the last line, cut while being written "
                                  f"({count(n, 'value')} lost)")
                continue
            report.read(n)
            if fractional:
                report.drop(MISSING_STEP, n, [lineno])
                note(MISSING_STEP, f"line {lineno}: step {fractional[0]!r} is {fractional[1]!r}, not a whole number "
                                   f"({count(n, 'value')} dropped)")
                continue
            expected = f"an integer {step_key!r}" if step_key else "an integer step (" + ", ".join(order[:4]) + ")"
            if whole:
                report.drop(MISSING_STEP, n, [lineno])
                note(MISSING_STEP, f"line {lineno}: a JSON object without {expected} ({count(n, 'value')} dropped)")
                continue
            report.drop(UNPARSEABLE, n, [lineno])
            note(UNPARSEABLE, f"line {lineno}: not a JSON object with {expected} ({count(n, 'value')} dropped)")
            continue
        used[step_field] = used.get(step_field, 0) + 1
        if step_key and step_field != step_key:
            elsewhere[step_field] = elsewhere.get(step_field, 0) + 1
        kind = ""
        data = obj.get("data")
        if isinstance(data, dict):
            enveloped = True
        else:
            for t in TYPE_FIELDS:
                if isinstance(obj.get(t), str):
                    kind = obj[t]
                    break
            data = obj.copy()  # the metrics: not the step, not the type
            del data[step_field]
            if kind:
                types[kind] = types.get(kind, 0) + 1
                for t in TYPE_FIELDS:
                    if t in data and data[t] == kind:
                        del data[t]
            else:
                kind = file_kind
        keyed = slots.get(kind)
        if keyed is None:
            keyed = slots[kind] = {}
        # nested dicts flattened (a wrapper's keys as they are); JSON's objects are plain dicts
        items = list(flatten(data, unwrap=wrapper(data))) if dict in map(type, data.values()) else data.items()
        n, kept = 0, len(values)
        for key, value in items:
            slot = keyed.get(key)
            if slot is None:
                slot = keyed[key] = _slot(kind, key)
            if slot[2] and (slot[2] == 2 or _integer(value) is not None):
                aside.add(key)  # another step axis (_step, eval_step), W&B's clock: not metrics, not rows
                continue
            if value is None:  # null: not logged at this step, as a CSV's empty cell (pandas' to_json of a NaN)
                continue
            n += 1
            if not key or key.endswith("/"):  # "": a value under no name, which no option could ask for
                report.drop(NO_NAME)
                note(NO_NAME, f"line {lineno}: a value under an empty key {key!r} (dropped)")
                continue
            t = type(value)
            if t is float:
                number = value
            elif t is int and -BIG < value < BIG:
                number = float(value)
            else:
                number = _numeric(value)
                if type(value) is list and not NOT_SAMPLES.search(key) and (number := list_mean(value)) is not None:
                    lists.setdefault(key, len(value))  # "rewards": [0, 1, 1, 0], a value a sample: their mean
                if isinstance(value, str) and number is None and (number := percent_number(value)) is not None:
                    raw.percent.add(slot[0])  # "6.2%": a percent, whatever its values
                if isinstance(value, str) and number is not None:
                    texts.setdefault(key, value)
                if number is None:
                    if isinstance(value, str) and key.rsplit("/", 1)[-1].lower() in RUN_NAME_KEYS:
                        report.run_names.setdefault(key.rsplit("/", 1)[-1].lower(), set()).add(value[:200])
                    if isinstance(value, str) and key.rsplit("/", 1)[-1].lower() in SAMPLE_FIELDS:
                        prose[key] = prose.get(key, 0) + 1
                    if isinstance(value, str):  # the run's name on every line, or a sample's text: known at the end
                        text.add(kind, key, value, lineno)
                        continue
                    report.drop(NON_NUMERIC)
                    note(NON_NUMERIC, f"line {lineno}: key {key!r} has non-numeric value {value!r:.40} (dropped)")
                    continue
            code = slot[1]
            if code < 0:
                code = slot[1] = code_of(slot[0])
            codes.append(code)
            values.append(number)
        n_read += n
        last_count = n
        if len(values) > kept:  # the line's step, number, count of values and axis, once a line
            axis = axes.get((kind, step_field))
            if axis is None:
                axis = axes[kind, step_field] = len(axes)
            if not -BIG < step < BIG and isinstance(line_steps, array):
                line_steps = rows.steps = list(line_steps)  # a step past int64: RawRun.frame drops and counts it
            line_steps.append(step)
            line_numbers.append(lineno)
            line_counts.append(len(values) - kept)
            line_axes.append(axis)
    report.read(n_read - text.held)
    # untyped lines take the file's type (an eval.jsonl's): its count of lines
    kind_lines = {**types, file_kind: types.get(file_kind, 0) + sum(used.values()) - sum(types.values())}
    constant = text.settle(report, kind_lines, said_text, NON_NUMERIC)
    if aside:
        report.note("not read as metrics: " + ", ".join(
            f"{k} ({'bookkeeping' if BOOKKEEPING.match(k) else 'a step'})" for k in sorted(aside)))
    if comments:
        report.note(f"{count(len(comments), 'comment line')} (starting with # or //) not read, no values in "
                    f"{'it' if len(comments) == 1 else 'them'}: line {', '.join(map(str, comments[:5]))}"
                    + (", ..." if len(comments) > 5 else ""))
    if texts:
        report.note("numbers written as text, read as numbers: " + ", ".join(
            f"{k!r} ({v!r:.20})" for k, v in list(texts.items())[:6]) + (", ..." if len(texts) > 6 else ""))
    if lists:
        report.note("lists of numbers (a value a sample) read as their mean: " + ", ".join(
            f"{k!r} ({count(n, 'value')})" for k, n in list(lists.items())[:6]) + (", ..." if len(lists) > 6 else ""))
    for kind, n in notes.items():
        if n > MAX_NOTES:
            report.note(f"... and {n - MAX_NOTES} more {kind}s")
    if not len(values) and not report.rows_read and not configs:
        raise EntropyLawError(f"{source}: no JSON metric lines found")
    # text on most lines, several lines a step (a sample each), no entropy: what the model wrote, a reward each;
    # a log of one line a step that keeps an example answer beside its metrics is a run
    said = [k for k, n in prose.items() if 2 * n >= sum(used.values())]
    if said and sum(used.values()) >= 2 * rows.distinct_steps() and not any("entropy" in k.lower() for k in rows.names):
        raise EntropyLawError(f"{source}: a file of generated samples (text in {', '.join(said[:3])} on most lines), "
                              "not a log of metrics")
    if (not used or (step_key and step_key not in used)) and stepless:  # a step_key no line has: a typo
        wanted = f"the key {step_key!r}" if step_key else "a step (step, global_step, iteration, *_step)"
        raise EntropyLawError(f"{source}: no line has {wanted} as an integer; keys seen: "
                              f"{', '.join(list(stepless)[:12])}; name the step with `step_key`")
    if used and set(used) != {"step"}:
        report.note("step read from " + ", ".join(f"{k!r} ({count(n, 'line')})" for k, n in sorted(used.items())))
    if elsewhere:
        report.note(f"{count(sum(elsewhere.values()), 'line')} without {step_key!r} read on their own step key ("
                    + ", ".join(sorted(elsewhere)) + "), each its own step axis, as W&B reads `define_metric` steps")
    # each type of row, and each step key, its own step axis: eval/step may count evals, not train steps
    rows.into(raw, with_axes=bool(types or len(used) > 1))
    if file_kind and slots.get(file_kind):
        report.note(f"{count(sum(used.values()) - sum(types.values()), 'line')} without a type read as eval rows, "
                    f"each key as eval/<key>: the file's name ({os.path.basename(source)}) says it holds evaluations")
    if types:
        report.note("rows kept apart by type, each key read as <type>/<key>: "
                    + ", ".join(f"{k} ({n} lines)" for k, n in sorted(types.items())))
    if not enveloped:
        raw.repeats = "mean"  # a trainer's own log: several rows at one step are its micro-steps
    raw.meta = {"model": model_from_filename(path)}
    if configs:
        read_config(raw, configs)
        for _, obj in configs:
            for key, value in obj.items():
                if isinstance(value, str) and key.lower() in RUN_NAME_KEYS:
                    report.run_names.setdefault(key.lower(), set()).add(value[:200])
    read_meta(raw, constant)
    if "critic/vf_loss" in rows.names:
        raw.meta["algorithm"] = "ppo"
    # a seed beside the metrics: a sample's set aside, a sweep's seeds written one after the other a run each
    return by_seed(raw)
