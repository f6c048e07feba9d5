"""A custom trainer's printed log: lines that print a step and named numbers, in the shapes a hand-written
GRPO loop's ``print`` or ``logging`` call leaves::

    Step 10: loss=0.1, entropy=0.52, reward=0.31
    [step 10] entropy: 0.52 reward: 0.31
    2026-11-30 10:00:01 INFO step=10 entropy=0.52 reward=0.31
    step 10/500 | entropy 0.5200 | reward 0.3100 | eval_acc 45.3%

- **the step**: the first ``step``, ``global_step``, ``iter``, ``iteration``, ``it`` or ``update``
  on the line followed by a whole number (``step 10``, ``step=10``, ``[step 10]``, ``Step 10:``);
  ``N/M`` says the planned total M too (the step the gain to go runs to);
- **the numbers**: ``key=value`` and ``key: value`` pairs (a unit in parentheses, ``acc (%): 16.76``, no part of
  the key: :mod:`.unit_names`), ``key value`` where ``|`` parts the line, and names and numbers in turn after the
  step where a loop's key is among them (``eval step 10 acc 0.31``) (a key starts with a letter; ``1e-5``, ``nan``, a trailing ``%`` and ``tensor(0.5)`` are
  numbers; a score printed with ``%`` is a percent, ``0.5%`` no fraction 0.5); each key at each step
  one value (several at one step: their mean, said); a last line without its newline (cut while
  being written) is counted, not read: its last number may be cut;
- **an evaluation's line**: a split's word before its step (``[Eval] step 10: acc=0.45``) or right after it, before
  its first key (``Step 10 - eval: acc=0.45``), reads its keys as ``eval/<key>``, unless most step lines print
  the same words there (a prefix of every line, no evaluation's tag) and those words are not an evaluation's tag
  alone on every step line (``[Eval] ``, ``Validation at ``: a loop's ``eval.log``, all of it an evaluation's) that
  prints no policy entropy;
- **a line that prints numbers without a step** (a config echo, an epoch summary) is not read: its
  count and first line are said in the row account; other text holds no values.

Recognised where no other reader of printed logs claims the file (veRL's ``step:N - key:value``
lines, the Hugging Face Trainer's dicts, ROLL's ``metrics_tag``) and at least
:data:`MIN_LINES` of its first lines read so. The keys' roles (entropy, score, validation) are
found by name, as for any log (``eval_acc`` is a validation score).

>>> import tempfile, os
>>> text = ("loading model...\\n" + "".join(f"step {s}/40 | entropy {1 - s / 100:.2f} | reward {s / 100:.2f}\\n"
...         for s in (1, 2, 3)) + "Step 3: eval_acc=12.5%\\nlr=1e-05 batch=8\\n")
>>> with tempfile.TemporaryDirectory() as d:
...     p = os.path.join(d, "train.log")
...     _ = open(p, "w").write(text)
...     looks_like_kv_console(p), read_kv_console(p)[0].rows()[-3:]
(True, [(3, 'entropy', 0.97), (3, 'reward', 0.03), (3, 'eval_acc', 12.5)])
"""

from __future__ import annotations

import os
import re
from collections import Counter

from entropylaw.errors import EntropyLawError
from entropylaw.readers.accounts import NO_STEP
from entropylaw.readers.common import RawRun, existing_file
from entropylaw.readers.compressed import open_log
from entropylaw.readers.jsonl_lines import NOT_SAMPLES, list_mean
from entropylaw.readers.key_names import entropy_by_name
from entropylaw.readers.kv_stepless import Loose, a_loops_key, claims
from entropylaw.readers.log_end import say_end
from entropylaw.readers.names import model_from_filename, run_id_from_path
from entropylaw.readers.printed import NUMBER, SNIFF_LIMIT, VERL_STEP, unwrap
from entropylaw.readers.printed_blocks import Blocks
from entropylaw.readers.tqdm_bars import parse_bar
from entropylaw.readers.unit_names import unit_key
from entropylaw.readers.verl_jsonl import CUT_LAST
from entropylaw.terminal import count

MIN_LINES = 3  # lines of a step and a number among the first SNIFF_LINES: a log of this shape
SNIFF_LINES = 2000
_KEY = r"[A-Za-z_][\w./-]*"
_STEP_NAMES = ("global_step", "iteration", "update", "step", "iter", "it")
STEP = re.compile(r"(?<![\w./-])(?P<name>" + "|".join(_STEP_NAMES) + r")(?:\s*[=:]\s*|\s+)(?P<n>\d+)"
                  r"(?:\s*/\s*(?P<total>\d+))?(?![\w.])", re.IGNORECASE)
_OF = r"(?:\s*/\s*(?P<of>\d+)(?![\w.]))?"  # "correct: 60/500": a count of its total
# a unit in parentheses between a name and its value ("acc (%): 16.76", "time (s): 3.1"): no part of its key
_UNIT = r"(?:\s?\((?P<unit>[^()\d\s][^()]{0,15}?)\))?"
PAIR = re.compile(r"(?<![\w./-])(?P<key>" + _KEY + r")" + _UNIT + r"\s*[=:]\s*(?P<v>" + NUMBER + r")(?P<pct>%?)" + _OF + r"(?![\w.])",
                  re.IGNORECASE)
SPACED = re.compile(r"^\s*\[?(?P<key>" + _KEY + r"(?: [A-Za-z][\w./-]*){0,2})\]?\s+(?P<v>" + NUMBER + r")(?P<pct>%?)"
                    + _OF + r"\s*$", re.IGNORECASE)
# a list of numbers printed ("rewards: [0, 1, 1, 0]", "rewards=[0.0, 1.0]"): a value a sample, read as their mean
LISTED = re.compile(r"(?<![\w./-])(?P<key>" + _KEY + r")\s*[=:]?\s*\[(?P<items>\s*(?:" + NUMBER + r")(?:\s*,\s*(?:"
                    + NUMBER + r"))*)\s*,?\s*\]", re.IGNORECASE)
# names and numbers in turn after the step, with no = or : ("eval step 10 acc 0.31", "step 10 loss 0.5 entropy 0.3")
_BARE = re.compile(r"(?P<key>" + _KEY + r")\s+(?P<v>" + NUMBER + r")(?P<pct>%?)(?![\w.])", re.IGNORECASE)
_BARE_ALL = re.compile(r"\s*[:\],-]?(?:\s*,?\s*" + _KEY + r"\s+(?:" + NUMBER + r")%?(?![\w.]))+\s*,?\s*",
                       re.IGNORECASE)
# the words a key is printed with before its last ("Val Accuracy=0.5", "| Policy Entropy: 0.8"), where they
# follow a field's start: the line's, or a | , ; : ] or " - " (not a logging prefix's "INFO entropy=0.5")
_LEAD = re.compile(r"(?:^|[|,;:\]]|\s-)\s*(?P<words>(?:[A-Za-z][\w.-]* ){1,3})$")
_NOT_KEY_WORDS = {"debug", "info", "warning", "warn", "error", "critical", *_STEP_NAMES}  # a level; the step
_SHARE = re.compile(r"acc|correct|solved|pass", re.IGNORECASE)  # k/N of these: the share solved
# a line an evaluation prints ("[Eval] step 10: accuracy=0.45", "Validation at step 10: ..."): a split's word before
# its step; its keys are read as eval/<key> (its accuracy was averaged with the training accuracy of that step)
_EVAL_TAG = re.compile(r"(?<![\w/.-])(?:eval|evals|evaluation|evaluating|val|valid|validation|validating|test|testing)"
                       r"(?![\w/.-])", re.IGNORECASE)
_FIELD_START = re.compile(r"\s-\s|\||:(?=\S|$)")
_NAMES_SPLIT = re.compile(r"^(?:eval|val|valid|validation|test|train|training)(?:[/_ ]|$)", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z]\w*")  # a header line names its step after 3 words at most ("=== GRPO Step 10 ===")
AFTER_WORDS = 4  # words between a step and its first key that tag the line ("Step 10 (on the test set): ...")
SOURCE_FILE = re.compile(r"\.(?:py|pyx|cc|cpp|c|h|hpp|cu|rs|go|java|js|ts|sh)$", re.IGNORECASE)


def _parse(line: str, bar_checked: bool = False):
    """``(step, total, {key: value}, {key: "%", "/N", ...}, (the words before its step, {eval/<key>: key}) where
    tagged as an evaluation's line, fields not read)`` of a
    printed line, or None where it prints no numbers; step None where it names none."""
    if not bar_checked and "[" in line and parse_bar(line) is not None:
        return None  # a progress bar: its percentage, count and rate are no step and values ("Step:  45%|")
    line = unwrap(line)
    m = STEP.search(line)
    pairs: dict[str, float] = {}
    pct: dict[str, str] = {}  # key -> "%" (a percent), "/N" (a count of N: read as its share), "of N" (epochs)
    found = [(_lead(line[:p.start()]) + p.group("key"), p.group("v"), p.group("pct"), p.group("of"), p.group("unit"))
             for p in PAIR.finditer(line)]
    if "|" in line:
        found += [(s.group("key"), s.group("v"), s.group("pct"), s.group("of"), None) for part in line.split("|")
                  if (s := SPACED.match(part))]
    if "[" in line:
        for listed in LISTED.finditer(line):
            if NOT_SAMPLES.search(listed.group("key")):
                continue  # "logits shape [4, 512]", "input_ids=[151644, 872]": no values of samples
            items = [float(x) for x in listed.group("items").split(",")]
            found.append((listed.group("key"), repr(list_mean(items)), "", None, None))
            pct[listed.group("key")] = f"[{len(items)}]"
    if not found and m is not None and "|" not in line and _BARE_ALL.fullmatch(line, m.end()):
        bare = [(b.group("key"), b.group("v"), b.group("pct"), None, None) for b in _BARE.finditer(line, m.end())]
        found = bare if any(a_loops_key(k) for k, *_ in bare) else []  # "Step 10 took 3.2": no loop's key
    for key, value, sign, of, unit in found:
        if _NOT_KEY_WORDS.intersection(key.lower().split()) or SOURCE_FILE.search(key):
            continue  # the step; train.py:88, a logging prefix's file and line
        printed = f"{key} ({unit})" if unit else ""
        if unit:
            key, unit = unit_key(key, unit)
            sign = sign or ("%" if unit == "%" else "")
        if key.lower() == "epoch":  # "Epoch 2/3 | Step 1/20": the epoch a step counter restarts with (resumes.py)
            key = "epoch"
            if of:
                pct[key] = f"of {of}"  # the planned epochs
        pairs[key] = float(value)
        if of and not sign and key != "epoch" and _SHARE.search(key) and 0 <= pairs[key] <= int(of) > 0:
            pairs[key] /= int(of)  # "correct 60/500": 0.12 of the problems, not 60 (read as 60 %)
            pct[key] = f"/{of}"
        elif printed:  # said as printed; a percent in parentheses is one, as a % sign says
            pct[key] = f"({printed}" + ("%" if sign else "")
        elif sign:
            pct[key] = "%"
    # the |-parted fields after the step's own that print a number no shape above reads ("time 3.2s"): said
    unread = [part.strip() for part in line[m.end():].split("|")[1:] if any(c.isdigit() for c in part)
              and not (SPACED.match(part) or PAIR.search(part) or LISTED.search(part))] if m else []
    header = m is not None and not pairs and not unread and len(_WORD.findall(line[:m.start()])) <= 3
    if not pairs and not unread and not header:
        return None
    if m is None:
        return None, None, pairs, pct, False, []
    # the words of the step's own field: not a logging prefix's ("INFO:test:step 10", "- test - INFO - step 10")
    tagged = None
    field = _FIELD_START.split(line[:m.start()])[-1]
    if header:  # "Iteration 5, Evaluating...": a header's words after its step too
        field += line[m.end():].replace(".", " ")
    elif not _EVAL_TAG.search(field):  # "Step 10 - eval: accuracy=0.45": a split's word after the step, before its keys
        field = _after_step(line, m.end())
    if _EVAL_TAG.search(field):  # its keys eval/<key>, unless they name a split
        tagged = (re.sub(r"\d+", "0", field.strip()), eval_names(pairs))
        pairs = {(f"eval/{k}" if f"eval/{k}" in tagged[1] else k): v for k, v in pairs.items()}
        pct = {(f"eval/{k}" if f"eval/{k}" in tagged[1] else k): v for k, v in pct.items()}
    return int(m.group("n")), (int(m.group("total")) if m.group("total") else None), pairs, pct, tagged, unread


def _after_step(line: str, end: int) -> str:
    """The words between a line's step and its first ``key=value`` (`` - eval: `` of ``Step 10 - eval: acc=0.4``),
    at most :data:`AFTER_WORDS` of them and not past a ``|`` (``Step 10 | train: ... | eval: acc=0.4``: its own
    field's); '' where there are none.

    >>> _after_step("Step 10 - eval: accuracy=0.45", 7), _after_step("Step 10 | train: r=0.3 | eval: a=0.4", 7)
    (' - eval: ', ' | train: ')
    """
    first = next((p.start() for p in PAIR.finditer(line, end)), None)
    between = line[end:first] if first is not None else ""
    return between if len(_WORD.findall(between)) <= AFTER_WORDS and "|" not in between.strip(" |") else ""


_MARK_WORDS = {"at", "on", "results", "result", "metrics", "set", "step"}  # "Validation at", "[Eval results]"


def marks_eval(field: str) -> bool:
    """Whether the words before a step are an evaluation's tag alone (``[Eval] ``, ``Validation at ``, a logging
    level with it), not a run's description with a split's word in it (``[INFO] test run ``).

    >>> marks_eval("[Eval] "), marks_eval("0 INFO [Validation] "), marks_eval("[INFO] test run ")
    (True, True, False)
    """
    words = [w.lower() for w in _WORD.findall(field)]
    return any(map(_EVAL_TAG.fullmatch, words)) and all(
        _EVAL_TAG.fullmatch(w) or w in _NOT_KEY_WORDS or w in _MARK_WORDS for w in words)


def eval_names(pairs: dict) -> dict[str, str]:
    """``{eval/<key>: key}``: an evaluation's keys, unless they name a split (``val_acc``) or are the epoch."""
    return {f"eval/{k}": k for k in pairs if k != "epoch" and not _NAMES_SPLIT.match(k)}


def _lead(before: str) -> str:
    """The words before a ``key=value`` pair's key that are part of its name (``Val `` of ``Val Accuracy=0.5``)."""
    m = _LEAD.search(before) if before.endswith(" ") else None
    words = m.group("words") if m else ""
    return words if words and not _NOT_KEY_WORDS.intersection(words.lower().split()) else ""


def looks_like_kv_console(path: str | os.PathLike, stepless: bool = True) -> bool:
    """True when :data:`MIN_LINES` of the first :data:`SNIFF_LINES` lines print a step and a number (or, where
    ``stepless``, none prints a step and their lines of numbers are records: :mod:`.kv_stepless`), and
    no veRL ``step:N - `` line comes in the first bytes a printed log's format is looked for in."""
    found, read, header, steps, keysets = 0, 0, False, False, Counter()
    try:
        with open_log(path, bom=True) as f:
            for i, raw_line in enumerate(f):
                read += len(raw_line)
                if b"step:" in raw_line and VERL_STEP.search(raw_line):
                    return False  # veRL's console log, whatever lines of this shape its start-up printed
                if read > SNIFF_LIMIT or (i >= SNIFF_LINES and found < MIN_LINES):
                    break
                if found < MIN_LINES and i < SNIFF_LINES:
                    got = _parse(raw_line.decode("utf-8", errors="replace"))
                    steps = steps or (got is not None and got[0] is not None)
                    if got is not None and got[0] is None:
                        keysets[frozenset(got[2])] += 1
                    if got is not None and got[0] is not None and not got[2]:
                        header = True  # a step's header line: the numbers of the line after it are the step's
                    elif got is not None:
                        found += bool(got[2]) and (got[0] is not None or header)
                        header = False
    except OSError:
        return False
    return found >= MIN_LINES or (stepless and not steps and claims(keysets))


def read_kv_console(path: str | os.PathLike) -> list[RawRun]:
    """Read a printed ``step ... key=value`` log into one :class:`RawRun` (see the module docstring)."""
    path = existing_file(path, "a printed log of lines with a step and named numbers (step 10 | entropy 0.5)")
    raw = RawRun(run_id_from_path(path), str(path), ordered=True)
    report = raw.report
    steps, keys, values, lines = [], [], [], []
    stepless: list[int] = []  # the lines of numbers without a step, not read
    totals: set[int] = set()
    epochs: set[int] = set()  # "Epoch 2/3": the planned epochs
    percent: set[str] = set()
    shares: dict[str, str] = {}  # keys printed as a count of a total (correct 60/500): read as its share
    lists: dict[str, str] = {}  # keys printed as a list of numbers: read as their mean
    units: dict[str, str] = {}  # keys printed with a unit in parentheses ("acc (%)"): the name as printed
    evals, n_evals = 0, 0  # lines an evaluation printed ("[Eval] step 10: accuracy=0.45"): the first, how many
    n_lines, renamed, fields, tags = 0, {}, {}, []  # step lines; eval/<key>: its key; words before a tagged step
    unread, n_unread = None, 0  # fields with a number read as no key and value: the first (line, text), how many
    read = 0
    blocks, step_keys, loose, plus_minus = Blocks(), set(), Loose(), [0, None]  # lines with a ±: how many, the first

    def take(step: int, key: str, value: float, lineno: int, said: str, tag: str | None) -> None:
        nonlocal read
        read += 1
        if said[:1] == "(":  # "acc (%)": its unit in parentheses, not in its key
            units.setdefault(key, said[1:-1] if said.endswith(")%") else said[1:])
        if said == "%" or said.endswith(")%"):
            percent.add(key)
        elif said[:1] == "/":
            shares[key] = said
        elif said[:1] == "[":
            lists.setdefault(key, said)  # the first list's length, as said
        steps.append(step)  # a value not finite too: dropped by finalize, where a run that turns NaN is said
        keys.append(key)
        tags.append(tag)
        values.append(value)
        lines.append(lineno)

    bars, first_bar = 0, None  # displays of a tqdm bar with values in its postfix, read by no step line
    with open_log(path, text=True) as f:
        for lineno, line in enumerate(f, 1):
            if "[" in line and (bar := parse_bar(line)) is not None:
                bars += bool(bar.values)
                first_bar = first_bar or (lineno if bar.values else None)
                continue
            got = _parse(line, bar_checked=True)
            if got is None:
                continue
            if "±" in line and got[2]:  # "reward=0.512±0.120": the number before it read, as a value's mean
                plus_minus = [plus_minus[0] + 1, plus_minus[1] or lineno]
            step, total, pairs, pct, tagged, not_read = got
            if not_read:
                unread = unread or (lineno, not_read[0])
                n_unread += len(not_read)
            if not line.endswith("\n") and step is not None:  # cut while being written: its last number may be cut
                read += len(pairs)
                report.drop(CUT_LAST, len(pairs), [lineno])
                continue
            if step is None:
                if blocks.tag is not None:  # under an evaluation's header: its keys eval/<key>
                    names = eval_names(pairs)
                    renamed.update(names)
                    pairs, pct = ({(f"eval/{k}" if f"eval/{k}" in names else k): v for k, v in d.items()}
                                  for d in (pairs, pct))
                if not blocks.hold(lineno, pairs, pct):
                    stepless.append(lineno)
                    if not n_lines:  # a log of no step at all: its lines of numbers may be its records
                        loose.add(lineno, pairs, pct)
                continue
            if pairs:
                blocks.step_line()
                step_keys.update(pairs)
            else:
                blocks.header(step, tagged[0] if tagged else None)
            if total:
                totals.add(total)
            n_lines += 1
            if tagged:
                n_evals += 1
                fields.setdefault(tagged[0], [0, lineno])[0] += 1  # how many, the first
                renamed.update(tagged[1])
            if "epoch" in pct:
                epochs.add(int(pct["epoch"][3:]))
            for key, value in pairs.items():
                take(step, key, value, lineno, pct.get(key, ""), tagged[0] if tagged else None)
    under = blocks.read(step_keys)
    for held in under:
        take(*held)
    if under:  # in line order among the step lines' values: a resume is read from the order of the lines
        order = sorted(range(len(lines)), key=lines.__getitem__)
        steps, keys, tags, values, lines = ([a[i] for i in order] for a in (steps, keys, tags, values, lines))
    records = loose.records() if not n_lines else []
    for n, (lineno, pairs, pct) in enumerate(records, 1):
        for key, value in pairs.items():
            take(n, key, value, lineno, pct.get(key, ""), None)
    # the lines read as records, or at the step line below them (met before the first step line): read
    taken = {r[0] for r in records} | blocks.read_before(under)
    stepless = sorted({n for n in stepless if n not in taken} | blocks.lines_left(under))
    # a split's word before most steps ("[INFO] test run step 10"): a prefix every line prints, no evaluation's tag
    # ... but not where an evaluation's word alone tags every step line ("[Eval] step 10", a loop's eval.log) and
    # they print no policy entropy (an evaluation prints none: "Step 10 - eval: acc=0.4 entropy=0.5" is the loop's)
    prefix = next((f for f, (n, _) in fields.items() if n > n_lines / 2 and not (
        n == n_lines and marks_eval(f) and not entropy_by_name(sorted({renamed.get(k, k) for k, t in zip(keys, tags)
                                                                        if t == f}), []))), None)
    if prefix is not None:
        keys = [renamed.get(k, k) if t == prefix else k for k, t in zip(keys, tags)]
        left = set(keys)
        percent, shares, lists, units = ({k if k in left else renamed.get(k, k): v for k, v in d.items()} for d in
                                         (dict.fromkeys(percent, ""), shares, lists, units))
        percent, n_evals = set(percent), n_evals - fields.pop(prefix)[0]
    evals = min((first for _, first in fields.values()), default=0)  # the first line an evaluation printed
    report.read(read)
    if not steps and not read:
        raise EntropyLawError(f"{path}: no line prints a step and named numbers (expected lines like "
                              "'step 10 | entropy 0.5 | reward 0.3' or 'step=10 entropy=0.5')")
    raw.steps, raw.keys, raw.values, raw.lines = steps, keys, values, lines
    raw.repeats = "mean"  # a key printed twice at one step (a loop's micro-steps): their mean, said by the account
    report.note(f"read as a printed log of steps and named numbers: {count(len(set(lines)), 'line')}")
    if records:
        report.note(f"{NO_STEP}: each line of numbers read as the next record, 1 to {len(records)} "
                    f"(lines {records[0][0]} to {records[-1][0]})", changed=True)
    if plus_minus[0]:
        report.note(f"{count(plus_minus[0], 'line')} print a value with ± (the first at line {plus_minus[1]}): the "
                    "number before ± read, the ± part not read")
    if stepless:
        report.note(f"{count(len(stepless), 'line')} print numbers without a step (a config echo, a summary): not "
                    f"read, the first at line {stepless[0]}")
    if n_unread:
        report.note(f"{count(n_unread, 'field')} with a number not read as a key and its value (the first at line "
                    f"{unread[0]}: {unread[1]!r:.40}): not read")
    if bars:
        report.note(f"{count(bars, 'display')} of a progress bar with values in its postfix (the first at line "
                    f"{first_bar}): not read, the step lines are")
    if lists:
        report.note("lists of numbers (a value a sample) read as their mean: "
                    + ", ".join(f"{k} ({v[1:-1]} values)" for k, v in sorted(lists.items())[:6]))
    if units:
        report.note("names printed with a unit in parentheses read without it: " + ", ".join(
            f"{v!r} as {k!r}" + (" (a percent)" if k in percent else "") for k, v in sorted(units.items())[:6]))
    if under:
        named = ", ".join(sorted({h.key for h in under})[:6])
        where = "above a line naming their step" if blocks.below else "under a line naming their step"
        at = "read at the step line below them" if blocks.below else "read at that step"
        report.note(f"{count(len({h.line for h in under}), 'line')} of numbers printed {where} (the first at line "
                    f"{min(h.line for h in under)}): {at} ({named})")
    if n_evals:
        report.note(f"{count(n_evals, 'line')} an evaluation printed (a split's word before the step or right after "
                    f"it, the first at line {evals}): each key read as eval/<key>")
    if shares:
        report.note("printed as a count of its total, read as its share (60/500: 0.12): "
                    + ", ".join(f"{k} ({v})" for k, v in sorted(shares.items())[:6]))
    if percent:
        report.note("printed with %: " + ", ".join(sorted(percent)[:6]))
        raw.percent = percent  # a score printed 0.5% is a percent, not the fraction 0.5
    raw.meta = {"model": model_from_filename(path)}
    # "step 10/500": the planned last step, as a config's total_steps; "Epoch 2/3 | Step 1/20", the step counted
    # again each epoch: 20 steps an epoch, 60 in all (with no planned epochs printed, no plan)
    restarts = "epoch" in keys and any(b < a for a, b in zip(steps, steps[1:]))
    if len(totals) == 1 and (not restarts or len(epochs) == 1):
        raw.meta["config"] = {"total_steps": totals.pop() * (epochs.pop() if restarts else 1)}
    if lines:  # an error after the planned last step (a segfault at exit) stopped no run: said so
        say_end(report, path, max(lines), max(steps), None if restarts else raw.meta.get("config", {}).get(
            "total_steps"))
    return [raw]
