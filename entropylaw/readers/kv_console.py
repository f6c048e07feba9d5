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
  the key; words that qualify the name, ``entropy (policy)``, a part of its path, ``entropy/policy``:
  :mod:`.unit_names`), ``key value`` where ``|`` (or a box-drawing rule, rich's ``┃``) parts the line, and names
  and numbers in turn after the step where a loop's key is among them (``eval step 10 acc 0.31``;
  names of up to three words where ``,`` parts the fields: ``loss 0.1, avg reward 0.06``), a dict
  printed after the step (``Step 10: {'reward': 0.31}``, a nested dict's keys as their path) (a key starts with
  a letter; ``1e-5``, ``nan``, a trailing ``%``, ``tensor(0.5)`` and ``1,234,567`` are numbers, ``12,34`` none,
  said; a score printed with ``%`` is a percent, ``0.5%`` no fraction 0.5); each key at each step one value
  (several at one step: their mean, said); a last line without its newline (cut while being written) is counted,
  not read: its last number may be cut; a dict ``pprint`` spreads over several lines is read as one line
  (:class:`.printed_blocks.Spread`), and ``print(step, metrics)``'s ``10 {'reward': 0.31}`` as ``step 10: {...}``;
  a count in parentheses after a value (``accuracy 13.5% (n=500)``) is the examples it was computed over,
  ``num_examples`` (on an evaluation's line ``eval/num_examples``, the validation set's size), said; a step line
  whose comma-parted fields print numbers no shape reads is counted in a note;
- **an evaluation's line**: a split's word before its step (``[Eval] step 10: acc=0.45``) or right after it, before
  its first key (``Step 10 - eval: acc=0.45``), reads its keys as ``eval/<key>``, unless most step lines print
  the same words there (a prefix of every line, no evaluation's tag) and those words are not an evaluation's tag
  alone on every step line (``[Eval] ``, ``Validation at ``: a loop's ``eval.log``, all of it an evaluation's) that
  prints no policy entropy;
- **a table printed with a header row** (rich's ``Table``: ``┃ step ┃ entropy ┃``, then ``│ 10 │ 0.52 │``; a markdown
  table): each row read as a line of the header's names and the row's numbers (:mod:`.printed_tables`);
- **a line that prints numbers without a step** (a config echo, an epoch summary) is not read: its
  count and first line are said in the row account; other text holds no values; but **an evaluation's line without
  a step** (``eval accuracy 0.40``, ``Validation: acc=0.45``, ``test_acc 0.45``) after a step line is read at that
  step, its keys ``eval/<key>``, and one before the first step line counted dropped (:mod:`.printed_evals`);
- **a logging call's locator** is no key and its value (loguru's ``__main__:train:88 - ``, logging's
  ``%(name)s:%(funcName)s:%(lineno)d``, a ``train.py:88``);
- **another tool's lines** are no metrics: a key that names a sample's text (``GT Answer: 42``,
  ``Model Answer: 41``, ``Question``, ``Prompt``, ``Generation``, ``Label``: an answer printed beside the
  metrics) and a progress bar's display, whole or cut before its closing ``]`` (vLLM's ``Processed prompts:
  100%|...| 64/64 [00:03<00:00, 19.2it/s, est. speed input: 3000.1 toks/s``), each counted in a note, not read;
- **a tqdm bar's postfix where every step line is an evaluation's** (a loop showing its training values in the bar,
  ``tqdm.write("eval step 10 acc 0.31")`` between its displays): the bar's values are the training values, read by
  :func:`.tqdm_bars.bar_rows` (the bar's count, its redraws), with the printed lines in one run; where their steps
  are out of line with the bar's count (an optimizer step beside a bar over micro-batches), the bars alone, the
  evaluations counted as dropped. A line ``logging`` or ``print`` wrote to the bar's stream while it was shown is
  glued to the bar's display (``...reward=0.15][10:00:01 INFO] eval step 5 acc 0.2``): read as that display, then
  that line (:func:`.tqdm_bars.displays`).

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
from entropylaw.readers.key_names import entropy_by_name
from entropylaw.readers.kv_line import eval_names, marks_eval, parse_line
from entropylaw.readers.kv_stepless import Loose, claims
from entropylaw.readers.log_end import say_end
from entropylaw.readers.names import model_from_filename, run_id_from_path
from entropylaw.readers.printed import SNIFF_LIMIT, VERL_STEP
from entropylaw.readers.printed_bars import bars_alone, with_bars_read
from entropylaw.readers.printed_blocks import Blocks, Spread, spread_joined
from entropylaw.readers.printed_config import PrintedConfig
from entropylaw.readers.printed_evals import BEFORE_STEPS, EvalLines, parse_eval
from entropylaw.readers.printed_tables import HeaderTable
from entropylaw.readers.tqdm_bars import ANSI, CUT_BAR, Below, displays, parse_bar, read_tqdm_console
from entropylaw.readers.unit_names import is_qualifier
from entropylaw.readers.verl_jsonl import CUT_LAST
from entropylaw.terminal import count

# a time printed on a step's line ("Step 10 took 3.2s", "step 10 done in 1.5 min")
TIMED = re.compile(r"\d(?:\.\d+)?\s*(?:s|sec|secs|seconds?|ms|min|mins|minutes?|h|hours?)(?![\w.])", re.IGNORECASE)
MIN_LINES = 3  # lines of a step and a number among the first SNIFF_LINES: a log of this shape
SNIFF_LINES = 2000


def looks_like_kv_console(path: str | os.PathLike, stepless: bool = True) -> bool:
    """True when :data:`MIN_LINES` of the first :data:`SNIFF_LINES` lines print a step and a number (or, where
    ``stepless``, none prints a step and their lines of numbers are records: :mod:`.kv_stepless`), and
    no veRL ``step:N - `` line comes in the first bytes a printed log's format is looked for in."""
    found, read, header, steps, keysets, table, spread = 0, 0, False, False, Counter(), HeaderTable(), Spread()
    lines, whole, redrawn = 0, True, False  # the lines with text; the file read to its end; a bar's redraws (\r)
    evals = 0  # an evaluation's lines without a step (printed_evals): no line of another shape
    try:
        with open_log(path, bom=True) as f:
            for i, raw_line in enumerate(f):
                read += len(raw_line)
                lines += bool(raw_line.strip())
                redrawn = redrawn or b"\r" in raw_line.rstrip(b"\r\n")  # tqdm's: read as bars, not here
                if b"step:" in raw_line and VERL_STEP.search(raw_line):
                    return False  # veRL's console log, whatever lines of this shape its start-up printed
                if read > SNIFF_LIMIT or (i >= SNIFF_LINES and found < MIN_LINES):
                    whole = False
                    break
                # a bar's displays redrawn after \r are lines of their own, as the reader reads them (a postfix's
                # "step=3" no printed step line's), and a dict pprint spreads over several lines is one (Spread)
                pieces = raw_line.split(b"\r") if found < MIN_LINES and i < SNIFF_LINES else ()
                for _, text in (fed for piece in pieces for fed in spread.feed(i, piece.decode("utf-8", "replace"))):
                    got = parse_line(table.line(text))
                    steps = steps or (got is not None and got[0] is not None)
                    evals += (got is None or got[0] is None) and parse_eval(text) is not None
                    if got is not None and got[0] is None:
                        keysets[frozenset(got[2])] += 1
                    if got is not None and got[0] is not None and not got[2]:
                        header = True  # a step's header line: the numbers of the line after it are the step's
                    elif got is not None:
                        found += bool(got[2]) and (got[0] is not None or header)
                        header = False
    except OSError:
        return False
    # a log of one or two steps, each line one (a run stopped at its start): this shape, though short of MIN_LINES
    short = whole and not redrawn and 0 < found == lines - evals
    return found >= MIN_LINES or short or (stepless and not steps and claims(keysets))


def read_kv_console(path: str | os.PathLike, bar_log: bool = False) -> list[RawRun]:
    """Read a printed ``step ... key=value`` log into one :class:`RawRun` (see the module docstring). ``bar_log``: a
    file found a log of tqdm bars, fewer than :data:`MIN_LINES` step lines among them: read here where its step lines
    are all an evaluation's (read with the bars), else by :func:`.tqdm_bars.read_tqdm_console`."""
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
    counts: set[str] = set()  # a count after a value in parentheses ("acc 13.5% (n=500)"): read as num_examples
    units: dict[str, str] = {}  # keys printed with a unit in parentheses ("acc (%)"): the name as printed
    evals, n_evals = 0, 0  # lines an evaluation printed ("[Eval] step 10: accuracy=0.45"): the first, how many
    n_lines, renamed, fields, tags = 0, {}, {}, []  # step lines; eval/<key>: its key; words before a tagged step
    unread, n_unread = None, 0  # fields with a number read as no key and value: the first (line, text), how many
    read = 0
    blocks, step_keys, loose, plus_minus = Blocks(), set(), Loose(), [0, None]  # lines with a ±: how many, the first
    evaluated, last = EvalLines(), None  # evaluation lines without a step; the last step line's step, with numbers

    def take(step: int, key: str, value: float, lineno: int, said: str, tag: str | None) -> None:
        nonlocal read
        read += 1
        if said == "(n)":
            counts.add(key)
        elif said[:1] == "(":  # "acc (%)": its unit in parentheses, not in its key
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

    bars = []  # displays of a tqdm bar with values in its postfix: read where the step lines are all evaluations'
    below = Below()  # the bars drawn again below a printed line (tqdm.write): their positions
    cut_bars, texts = [0, None], [0, None]  # a bar cut before its "]"; a sample's text: how many, the first
    both = [0, None]  # lines printing a name with and without a unit: how many, the first (line, its two fields)
    timed = [0, None]  # lines naming a step with a time and no values ("Step 10 took 3.2s"): how many, the first
    header = PrintedConfig()  # the loop's config as it printed it before its first step (argparse's Namespace)
    table = HeaderTable()  # a table printed with a header row (rich's Table, markdown's): its rows as lines
    with open_log(path, text=True) as f:
        for lineno, line in spread_joined((n, piece) for n, text in enumerate(f, 1) for piece in displays(text)):
            if not n_lines:
                header.feed(lineno, line)
            if "\x1b" in line:  # tqdm.write below nested bars prints after a cursor move: "\x1b[A[Eval] step 10"
                line = ANSI.sub("", line)
            line = table.line(line)
            if "[" in line and (bar := parse_bar(line)) is not None:
                below.bar(bar, len(bars))
                if bar.values:
                    bars.append((lineno, bar))
                continue
            if line.strip():
                below.printed()
            if "[" in line and CUT_BAR.search(line):
                cut_bars = [cut_bars[0] + 1, cut_bars[1] or (lineno, line.strip())]
                continue
            got = parse_line(line, bar_checked=True)
            if (got is None or got[0] is None) and (ev := parse_eval(line)) is not None:
                if last is not None:  # "eval accuracy 0.4" after a step's line: read at that step (printed_evals)
                    evaluated.read.append(lineno)
                    for key, value in ev[0].items():
                        take(last, key, value, lineno, ev[1].get(key, ""), None)
                    continue
                if not n_lines:
                    evaluated.before.append((lineno, len(ev[0])))
            if got is None:
                continue
            if "±" in line and got[2]:  # "reward=0.512±0.120": the number before it read, as a value's mean
                plus_minus = [plus_minus[0] + 1, plus_minus[1] or lineno]
            step, total, pairs, pct, tagged, not_read, text, clashes = got
            if clashes:
                both = [both[0] + 1, both[1] or (lineno, clashes[0])]
            if not_read:
                unread = unread or (lineno, not_read[0])
                n_unread += len(not_read)
            if text:
                texts = [texts[0] + len(text), texts[1] or (lineno, text[0])]
                if not pairs and step is None:
                    continue
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
                if TIMED.search(line):  # "Step 10 took 3.2s": a time, no value of the run's; said
                    timed = [timed[0] + 1, timed[1] or (lineno, line.strip())]
            if total:
                totals.add(total)
            n_lines, last = n_lines + 1, step if pairs else None
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
    before = evaluated.drops(taken) if n_lines else []  # no step to read them at: counted dropped
    stepless = sorted({n for n in stepless if n not in taken} - {n for n, _ in before} | blocks.lines_left(under))
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
        counts = {k if k in left else renamed.get(k, k) for k in counts}
    evals = min((first for _, first in fields.values()), default=0)  # the first line an evaluation printed
    # a loop printing only its evaluations between the bars (tqdm.write): its training values are the bars'
    with_bars = bool(bars) and n_evals == n_lines > 0
    if bar_log and not with_bars:
        return read_tqdm_console(path)
    report.read(read + sum(k for _, k in before))
    report.drop(BEFORE_STEPS, sum(k for _, k in before), [n for n, _ in before])
    if not steps and not read:
        raise EntropyLawError(f"{path}: no line prints a step and named numbers (expected lines like "
                              "'step 10 | entropy 0.5 | reward 0.3' or 'step=10 entropy=0.5')")
    raw.steps, raw.keys, raw.values, raw.lines = steps, keys, values, lines
    raw.repeats = "mean"  # a key printed twice at one step (a loop's micro-steps): their mean, said by the account
    report.note(f"read as a printed log of steps and named numbers: {count(len(set(lines)), 'line')}")
    bars_read = with_bars and with_bars_read(raw, bars, below.at, percent, totals)
    if bars_read is None:  # the evaluations count steps of their own: the bars are read as a file of bars alone
        return bars_alone(path, len(steps) + sum(k for _, k in before), n_evals, steps[0])
    steps, keys, lines = raw.steps, raw.keys, raw.lines
    if records:
        report.note(f"{NO_STEP}: each line of numbers read as the next record, 1 to {len(records)} "
                    f"(lines {records[0][0]} to {records[-1][0]})", changed=True)
    if table.rows:
        report.note(table.said())
    if timed[0]:
        report.note(f"{count(timed[0], 'line')} name a step and a time, no values (the first at line {timed[1][0]}: "
                    f"{timed[1][1]!r:.40}): the time not read")
    if plus_minus[0]:
        report.note(f"{count(plus_minus[0], 'line')} print a value with ± (the first at line {plus_minus[1]}): the "
                    "number before ± read, the ± part not read")
    if stepless:
        report.note(f"{count(len(stepless), 'line')} print numbers without a step (a config echo, a summary): not "
                    f"read, the first at line {stepless[0]}")
    if n_unread:
        report.note(f"{count(n_unread, 'field')} with a number not read as a key and its value (the first at line "
                    f"{unread[0]}: {unread[1]!r:.40}): not read")
    if texts[0]:
        report.note(f"{count(texts[0], 'value')} of a key naming a sample's text (an answer, a question, a prompt; the "
                    f"first at line {texts[1][0]}: {texts[1][1]!r:.40}): no metric, not read")
    if both[0]:
        report.note(f"{count(both[0], 'line')} print a name with and without a unit (the first at line {both[1][0]}: "
                    f"{both[1][1][0]!r} and {both[1][1][1]!r}): read as one key, the value printed without a unit kept")
    if cut_bars[0]:
        report.note(f"{count(cut_bars[0], 'line')} of a progress bar cut before its closing ']' (the first at line "
                    f"{cut_bars[1][0]}: {cut_bars[1][1]!r:.40}): no values, not read")
    if bars_read:
        report.note(f"the step lines print only an evaluation's values: the training values read from the progress "
                    f"bar's postfix (the first at line {bars[0][0]}), one run")
    elif bars:
        report.note(f"{count(len(bars), 'display')} of a progress bar with values in its postfix (the first at line "
                    f"{bars[0][0]}): not read, the step lines are")
    if lists:
        report.note("lists of numbers (a value a sample) read as their mean: "
                    + ", ".join(f"{k} ({v[1:-1]} values)" for k, v in sorted(lists.items())[:6]))
    as_printed = sorted(k for k, v in units.items() if k == v)  # words in parentheses that are no unit ("(pass@1)")
    joined = sorted((k, v) for k, v in units.items() if k != v and is_qualifier(q := v.rsplit(" (", 1)[-1][:-1])
                    and k.endswith("/" + q.strip().replace(" ", "_")))  # "entropy (policy)" as entropy/policy
    without = sorted((k, v) for k, v in units.items() if k != v and (k, v) not in joined)
    if without:
        report.note("names printed with a unit in parentheses read without it: " + ", ".join(
            f"{v!r} as {k!r}" + (" (a percent)" if k in percent else "") for k, v in without[:6]))
    if joined:
        report.note("names printed with words in parentheses that qualify them, read as a part of the name's path: "
                    + ", ".join(f"{v!r} as {k!r}" for k, v in joined[:6]))
    if as_printed:
        report.note(f"names printed with words in parentheses that are no unit: {', '.join(map(repr, as_printed[:6]))} "
                    "kept as printed")
    if counts:
        report.note("a count in parentheses after a value ('accuracy 13.5% (n=500)') read as the examples it was "
                    f"computed over: {', '.join(sorted(counts)[:6])}")
    if under:
        named = ", ".join(sorted({h.key for h in under})[:6])
        where = "above a line naming their step" if blocks.below else "under a line naming their step"
        at = "read at the step line below them" if blocks.below else "read at that step"
        report.note(f"{count(len({h.line for h in under}), 'line')} of numbers printed {where} (the first at line "
                    f"{min(h.line for h in under)}): {at} ({named})")
    if evaluated.said():
        report.note(evaluated.said())
    if n_evals:
        report.note(f"{count(n_evals, 'line')} an evaluation printed (a split's word before the step or right after "
                    f"it, the first at line {evals}): each key read as eval/<key>")
    if shares:
        report.note("printed as a count of its total, read as its share (60/500: 0.12): "
                    + ", ".join(f"{k} ({v})" for k, v in sorted(shares.items())[:6]))
    if percent:
        report.note("printed with %: " + ", ".join(sorted(percent)[:6]))
        raw.percent = percent  # a score printed 0.5% is a percent, not the fraction 0.5
    raw.meta = {"model": model_from_filename(path), **header.meta()}
    if header.said():
        report.note(header.said())
    # "step 10/500": the planned last step, as a config's total_steps; "Epoch 2/3 | Step 1/20", the step counted
    # again each epoch: 20 steps an epoch, 60 in all (with no planned epochs printed, no plan)
    restarts = "epoch" in keys and any(b < a for a, b in zip(steps, steps[1:]))
    if len(totals) == 1 and (not restarts or len(epochs) == 1):
        raw.meta["config"] = {"total_steps": totals.pop() * (epochs.pop() if restarts else 1)}
    if lines:  # an error after the planned last step (a segfault at exit) stopped no run: said so
        say_end(report, path, max(lines), max(steps), None if restarts else raw.meta.get("config", {}).get(
            "total_steps"))
    return [raw]
