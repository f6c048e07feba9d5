"""One printed line of a custom loop's log: its step and its named numbers (the grammar :mod:`.kv_console` reads a
file with; its module docstring says the shapes).

>>> parse_line("Step 10: loss=0.1, entropy=0.52")[:3]
(10, None, {'loss': 0.1, 'entropy': 0.52})
>>> parse_line("[Eval] step 10: acc (%)=45.3")[2], marks_eval("[Eval] ")
({'eval/acc': 45.3}, True)
"""

from __future__ import annotations

import re

from entropylaw.readers.hf_console import parse_record
from entropylaw.readers.jsonl_lines import NOT_SAMPLES, list_mean
from entropylaw.readers.kv_stepless import a_loops_key
from entropylaw.readers.printed import NUMBER, PRINTED_STEPS, RUN_WIDE_WORDS, boxed_pairs, unwrap
from entropylaw.readers.tqdm_bars import CUT_BAR, parse_bar
from entropylaw.readers.unit_names import unit_key

_KEY = r"[A-Za-z_][\w./@-]*"  # pass@1, maj@8, eval/acc@1: an evaluation's metric of k samples
# the total after the step may be printed with thousands separators ("Step 10/1,000")
STEP = re.compile(r"(?<![\w./@-])(?P<name>" + "|".join(PRINTED_STEPS) + r")(?:\s*[=:]\s*|\s+)(?P<n>\d+)"
                  r"(?:\s*/\s*(?P<total>[1-9]\d{0,2}(?:,\d{3})+(?!\d|,\d)|\d+))?(?![\w.])", re.IGNORECASE)
_OF = r"(?:\s*/\s*(?P<of>\d+)(?![\w.]))?"  # "correct: 60/500": a count of its total
# a unit in parentheses between a name and its value ("acc (%): 16.76", "time (s): 3.1"): no part of its key
_UNIT = r"(?:\s?\((?P<unit>[^()\d\s][^()]{0,15}?)\))?"
# a number printed with thousands separators ("Tokens: 1,234,567"): read whole; one whose commas part no groups of
# three ("12,34") is read as no number, its first group never
_VALUE = r"(?:[-+]?[1-9]\d{0,2}(?:,\d{3})+(?:\.\d*)?(?!\d|,\d)|" + NUMBER + r")(?!,\d)"
PAIR = re.compile(r"(?<![\w./@-])(?P<key>" + _KEY + r")" + _UNIT + r"\s*[=:]\s*(?P<v>" + _VALUE + r")(?P<pct>%?)"
                  + _OF + r"(?![\w.])",
                  re.IGNORECASE)
SPACED = re.compile(r"^\s*\[?(?P<key>" + _KEY + r"(?: [A-Za-z][\w./@-]*){0,2})\]?\s+(?P<v>" + _VALUE + r")(?P<pct>%?)"
                    + _OF + r"\s*$", re.IGNORECASE)
# a list of numbers printed ("rewards: [0, 1, 1, 0]", "rewards=[0.0, 1.0]"): a value a sample, read as their mean
LISTED = re.compile(r"(?<![\w./@-])(?P<key>" + _KEY + r")\s*[=:]?\s*\[(?P<items>\s*(?:" + NUMBER + r")(?:\s*,\s*(?:"
                    + NUMBER + r"))*)\s*,?\s*\]", re.IGNORECASE)
# names and numbers in turn after the step, with no = or : ("eval step 10 acc 0.31", "step 10 loss 0.5 entropy 0.3")
_BARE = re.compile(r"(?P<key>" + _KEY + r")\s+(?P<v>" + _VALUE + r")(?P<pct>%?)(?![\w.])", re.IGNORECASE)
# a split's name between the step and its names and numbers ("Step 10 - train: entropy 0.52, reward 0.31", "Step 10
# [eval] acc 0.45", "Step 10 (train): ...")
_SPLIT = (r"(?:train|training|eval|evaluation|val|valid|validation|test|testing|rollout)"
          r"(?:[ _](?:metrics|stats|results))?")
_SPLIT_AFTER = r"(?:\s*-?\s*(?:" + _SPLIT + r"\s*:|[\[(]" + _SPLIT + r"[\])]\s*:?))?"
_BARE_ALL = re.compile(r"\s*[:\],-]?" + _SPLIT_AFTER + r"(?:\s*,?\s*" + _KEY + r"\s+(?:" + _VALUE
                       + r")%?(?![\w.]))+\s*,?\s*", re.IGNORECASE)
# names of up to three words and numbers parted by , or ; after the step ("Epoch 1 Step 5: loss 0.10, avg reward
# 0.065, token entropy 0.932", ">>> Validation (step 10): accuracy 13.5%"): a name's words its key ("avg reward")
_NAMED = r"(?P<key>" + _KEY + r"(?: [A-Za-z][\w./@-]*){0,2})\s+(?P<v>" + _VALUE + r")(?P<pct>%?)(?![\w.])"
_NAMED_FIELD = re.compile(_NAMED, re.IGNORECASE)
_NAMED_ALL = re.compile(r"\s*[)\]]?\s*[:,-]?" + _SPLIT_AFTER + r"\s*" + _NAMED.replace("?P<", "?P<_")
                        + r"(?:\s*[,;]\s*" + _NAMED.replace("?P<", "?P<__") + r")*\s*[,;.]?\s*", re.IGNORECASE)
# a count in parentheses after a value ("accuracy 13.5% (n=500)"): the examples it was computed over, no key n
_COUNT_AFTER = re.compile(r"(?<=[\d%])\s*\(\s*(?:n|num|count|num_examples)\s*=\s*(?P<n>\d+)\s*\)", re.IGNORECASE)
# ... or the count of its total after a share's percent ("accuracy 45.0% (225/500)"): 500 problems, the percent the
# value; only where the count is the percent ("gpu 95% (3/4)", "progress 50% (10/20)": no problems solved)
_OF_AFTER = re.compile(r"(?P<key>[A-Za-z][\w@/.-]*)\s*[:=]?\s*(?P<pct>\d+(?:\.(?P<dec>\d+))?)%"
                       r"(?P<of>\s*\(\s*(?P<k>\d+)\s*/\s*(?P<n>\d+)\s*\))")
# the words a key is printed with before its last ("Val Accuracy=0.5", "| Policy Entropy: 0.8"), where they
# follow a field's start: the line's, or a | , ; : ] or " - " (not a logging prefix's "INFO entropy=0.5")
_LEAD = re.compile(r"(?:^|[|,;:\]]|\s-)\s*(?P<words>(?:[A-Za-z][\w.-]* ){1,3})$")
LEAD_CHARS = 400  # far more than a field's start and three words of a key's name
_NOT_KEY_WORDS = {"debug", "info", "warning", "warn", "error", "critical", *PRINTED_STEPS}  # a level; the step
_SHARE = re.compile(r"acc|correct|solved|pass", re.IGNORECASE)  # k/N of these: the share solved
# a line an evaluation prints ("[Eval] step 10: accuracy=0.45", "Validation at step 10: ..."): a split's word before
# its step; its keys are read as eval/<key> (its accuracy was averaged with the training accuracy of that step)
_EVAL_TAG = re.compile(r"(?<![\w/.-])(?:eval|evals|evaluation|evaluating|val|valid|validation|validating|test|testing)"
                       r"(?![\w/.-])", re.IGNORECASE)
_EQUALS = re.compile(r"(?<!\S)[^\s=|]+\s*=\s*[-+]?\.?\d[^\s|]*")  # "1st_try=0.5": a field printed key=value
_GROUPS = re.compile(r"(?<![\w./@-])" + _KEY + r"\s*:\s*[-+]?\d+(?:,\d+)+")  # "Tokens: 12,34": no number
_FIELD_START = re.compile(r"\s-\s|\||:(?=\S|$)")
_NAMES_SPLIT = re.compile(r"^(?:eval|val|valid|validation|test|train|training)(?:[/_ ]|$)", re.IGNORECASE)
_RUN_WIDE = re.compile(r"(?<![\w/.-])" + RUN_WIDE_WORDS + "$", re.IGNORECASE)  # a 2nd step's word
_EPOCH = re.compile(r"(?<![\w/.-])epoch(?![\w/.-])", re.IGNORECASE)
_EPOCH_N = re.compile(r"(?<![\w/.-])epoch\s*[=:]?\s*(?P<n>\d+)(?:\s*/\s*(?P<of>\d+))?(?![\w.])", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z]\w*")  # a header line names its step after 3 words at most ("=== GRPO Step 10 ===")
AFTER_WORDS = 4  # words between a step and its first key that tag the line ("Step 10 (on the test set): ...")
# a key naming a sample's text, not a measure of the run ("GT Answer: 42", "Model Answer: 41", "Question: 7"); a
# count per prompt ("samples_per_prompt: 8") is none
SAMPLE_TEXT = re.compile(r"(?:^|(?<!per)[\s_.-])(?:answer|question|prompt|response|completion|solution|prediction"
                         r"|generation|label|ground[\s_]truth|gt)$", re.IGNORECASE)
# a word of a measure beside it makes the key a metric of the samples ("avg_len_response", "num_correct_solution",
# "reward_gt", "clip_frac_response"), not their text
MEASURE_WORD = re.compile(r"(?:^|[\s_.-])(?:avg|mean|len|length|num|n|count|frac|fraction|ratio|rate|clip|max|min"
                          r"|std|sum|total|tokens?|rewards?|score|acc|accuracy|pass|time|loss|kl|entropy"
                          r"|size|per)(?=[\s_.-]|$)", re.IGNORECASE)
# where a logging call was made, as loguru's default format and logging's %(name)s:%(funcName)s:%(lineno)d print it
# ("__main__:train:88 - ", "[grpo.trainer:log_step:212]"): no key and its value ("train": 88); a logger's name and
# its line alone where the name is a module's, dotted or __main__, its end a field's ("[__main__:88]",
# "grpo.trainer:88 - "): a key printed key:value is seldom so
LOCATOR = re.compile(r"(?<![\w.:<>-])(?:[A-Za-z_][\w.]*:(?:[A-Za-z_]\w*|<\w+>):\d+(?=[\s\]]|$)"
                     r"|(?:__\w+__|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+):\d+(?=\]|\s+[-|]\s))")
SOURCE_FILE = re.compile(r"\.(?:py|pyx|cc|cpp|c|h|hpp|cu|rs|go|java|js|ts|sh)$", re.IGNORECASE)


def _counts_of_shares(line: str):
    """(the line without the counts after its shares' percents, the match of one such count or None): taken where
    every share on the line counts one total (two totals: which set is the run's is unknown, the fields not read)."""
    shares = [o for o in _OF_AFTER.finditer(line) if _SHARE.search(o.group("key")) and int(o.group("n")) > 0
              and abs(100 * int(o.group("k")) / int(o.group("n")) - float(o.group("pct")))
              <= 10.0 ** -len(o.group("dec") or "") + 1e-9]
    if not shares or len({o.group("n") for o in shares}) > 1:
        return line, None
    for o in reversed(shares):
        line = line[:o.start("of")] + line[o.end("of"):]
    return line, shares[0]


def parse_line(line: str, bar_checked: bool = False):
    """``(step, total, {key: value}, {key: "%", "/N", ...}, (the words before its step, {eval/<key>: key}) where
    tagged as an evaluation's line, fields not read, a sample's text printed as a number, names printed with and
    without a unit)`` of a printed line, or None where it prints no numbers; step None where it names none.
    A name printed with and without a unit (``entropy: 0.5 | entropy (nats): 0.52``) is one key: the value printed
    without a unit is kept, the two fields listed (``(without, with)``) for the row account to say.

    >>> parse_line("step 3 | entropy (nats): 0.52 | entropy: 0.5")[2::5]
    ({'entropy': 0.5}, [('entropy: 0.5', 'entropy (nats): 0.52')])
    """
    if not bar_checked and "[" in line and (parse_bar(line) is not None or CUT_BAR.search(line)):
        return None  # a progress bar: its percentage, count and rate are no step and values ("Step:  45%|")
    if "{" in line and (numbered := _NUMBERED_DICT.match(line)) and not _OWN_STEP.search(line, numbered.end()):
        step = numbered.group("b") or numbered.group("c")  # print(step, metrics): "10 {'entropy': 0.52}"
        line = f"{numbered.group('pre') or ''}step {step}: {line[numbered.end():]}"
    line = dict_fields(boxed_pairs(unwrap(line))).translate(_RULES)
    examples = _COUNT_AFTER.search(line) if "(" in line else None
    if examples:
        line = line[:examples.start()] + line[examples.end():]
    elif "%" in line and "(" in line:
        line, examples = _counts_of_shares(line)
    if ":" in line:
        line = _without_locators(line)
    m = first = STEP.search(line)
    # "Epoch 2/2 Step 1/20 Train step 21/40" (AReaL): the run's step, not the epoch's; with no epoch before the
    # first step it is the run's ("Step 10/30 (total step 1000)", "Step 10 | global step 500": a budget)
    if m is not None and _EPOCH.search(line, 0, m.start()):
        m = next((s for s in STEP.finditer(line, m.end()) if _RUN_WIDE.search(line, 0, s.start())), m)
    pairs: dict[str, float] = {}
    pct: dict[str, str] = {}  # key -> "%" (a percent), "/N" (a count of N: read as its share), "of N" (epochs)
    texts: list[str] = []  # a sample's text printed as a number ("GT Answer: 42"): no metric
    fields: dict[str, tuple[str, str]] = {}  # key -> (its field as printed, the name with its unit or "")
    clashes: list[tuple[str, str]] = []  # a name printed with and without a unit: (the field without, with)
    found = [(_lead(line, p.start()) + p.group("key"), p.group("v"), p.group("pct"), p.group("of"), p.group("unit"))
             for p in PAIR.finditer(line)]
    if "|" in line:
        found += [(s.group("key"), s.group("v"), s.group("pct"), s.group("of"), None) for part in line.split("|")
                  if (s := SPACED.match(part))]
    paired, rest = bool(found), line  # rest: the line, each list of numbers printed as its mean
    if "[" in line:
        for listed in LISTED.finditer(line):
            if NOT_SAMPLES.search(listed.group("key")):
                continue  # "logits shape [4, 512]", "input_ids=[151644, 872]": no values of samples
            items = [float(x) for x in listed.group("items").split(",")]
            found.append((listed.group("key"), repr(list_mean(items)), "", None, None))
            pct[listed.group("key")] = f"[{len(items)}]"
            if m is not None and listed.start() >= m.end():
                rest = rest.replace(listed.group(), f"{listed.group('key')} {list_mean(items)!r}", 1)
    listed_keys = set() if paired else {k for k, *_ in found}
    first_key = None  # where the first name read without = or : begins: the words before it may tag the line
    leftover: list[str] = []  # comma-parted fields beside those read that no shape reads ("took 3.2s"): said
    if paired and m is not None and "|" not in line:  # "eval acc: 45.0%, f1 0.41": a name and number among pairs
        have = {k for k, *_ in found}
        found += [f for f in _after_pairs(line, m.end()) if f[0] not in have]
    # names and numbers parted by spaces or commas, a list among them ("step 1, rewards [0, 1], entropy 0.9")
    if not paired and m is not None and "|" not in line and _BARE_ALL.fullmatch(rest, m.end()):
        bare = [(b.group("key"), b.group("v"), b.group("pct"), None, b.start()) for b in _BARE.finditer(rest, m.end())]
        if any(a_loops_key(k) for k, *_ in bare):  # "Step 10 took 3.2": no loop's key
            found += [(*b[:4], None) for b in bare if b[0] not in listed_keys]
            first_key = bare[0][4]
    elif not paired and m is not None and "|" not in line and _NAMED_ALL.fullmatch(rest, m.end()):
        named = [(b.group("key"), b.group("v"), b.group("pct"), None, b.start())
                 for b in _NAMED_FIELD.finditer(rest, m.end())]
        if any(a_loops_key(k) for k, *_ in named):
            found += [(*b[:4], None) for b in named if b[0] not in listed_keys]
            first_key = named[0][4]
    elif not paired and m is not None and "|" not in line and "," in line:  # "Step 10 took 3.2s, entropy 0.52, ..."
        parts = [p.strip(" :.\t\r\n") for p in re.split(r"[,;]", rest[m.end():])]
        named = [(n.group("key"), n.group("v"), n.group("pct"), None, None)
                 for p in parts if (n := _NAMED_FIELD.fullmatch(p))]
        if len(named) > 1 and any(a_loops_key(k) for k, *_ in named):  # the fields a loop's names, the rest said
            found += [b for b in named if b[0] not in listed_keys]
            leftover = [p for p in parts if any(c.isdigit() for c in p) and not _NAMED_FIELD.fullmatch(p)]
    if m is not None and not any(k.lower() == "epoch" for k, *_ in found):  # "Epoch 2 Step 1: ...": the epoch too
        epoch = _EPOCH_N.search(line, 0, m.start())
        found += [("epoch", epoch.group("n"), "", epoch.group("of"), None)] if epoch and found else []
    for key, value, sign, of, unit in found:
        if _NOT_KEY_WORDS.intersection(key.lower().split()) or SOURCE_FILE.search(key):
            continue  # the step; train.py:88, a logging prefix's file and line
        if SAMPLE_TEXT.search(key.strip()) and not MEASURE_WORD.search(key.strip()):
            texts.append(f"{key.strip()}: {value}")
            continue
        printed = f"{key} ({unit})" if unit else ""
        if unit:
            key, unit = unit_key(key, unit)
            sign = sign or ("%" if unit == "%" else "")
        field = f"{printed or key}: {value}{sign}"
        if key in pairs and bool(printed) != bool(fields[key][1]):  # "entropy: 0.5 | entropy (nats): 0.52"
            plain, with_unit = (fields[key][0], field) if printed else (field, fields[key][0])
            clashes.append((plain, with_unit))
            if printed:
                continue  # the name as the loop names it, not its unit's reading of it
            pct.pop(key, None)
        fields[key] = (field, printed)
        if key.lower() == "epoch":  # "Epoch 2/3 | Step 1/20": the epoch a step counter restarts with (resumes.py)
            key = "epoch"
            if of:
                pct[key] = f"of {of}"  # the planned epochs
        pairs[key] = float(value.replace(",", ""))
        if of and not sign and key != "epoch" and _SHARE.search(key) and 0 <= pairs[key] <= int(of) > 0:
            pairs[key] /= int(of)  # "correct 60/500": 0.12 of the problems, not 60 (read as 60 %)
            pct[key] = f"/{of}"
        elif printed:  # said as printed; a percent in parentheses is one, as a % sign says
            pct[key] = f"({printed}" + ("%" if sign else "")
        elif sign:
            pct[key] = "%"
    if examples and pairs:
        pairs["num_examples"] = float(examples.group("n"))
        pct["num_examples"] = "(n)"  # said by the reader
    # the |-parted fields after the step's own that print a number no shape above reads ("time 3.2s"): said
    unread = [part.strip() for part in line[m.end():].split("|")[1:] if any(c.isdigit() for c in part)
              and not (SPACED.match(part) or PAIR.search(part) or LISTED.search(part))] if m else []
    unread += leftover
    if m and "|" not in line and "=" in line:  # a key=value no key above reads ("1st_try=0.5"): said
        unread += [f.group().rstrip(",;") for f in _EQUALS.finditer(line, m.end()) if not PAIR.search(f.group())]
    if m and "|" not in line and "," in line:
        unread += [f.group() for f in _GROUPS.finditer(line, m.end()) if not PAIR.match(line, f.start())]
    if m and not pairs and not unread and "|" not in line and "," in line:  # "step 9: 3 of 8 skipped, 2.5 s": said
        parted = [part.strip(" :") for part in re.split(r"[,;]", line[m.end():]) if any(c.isdigit() for c in part)]
        unread += parted if len(parted) > 1 else []  # one ("Step 10, epoch 1:") a header's words
    header = m is not None and not pairs and not unread and not texts and len(_WORD.findall(line[:first.start()])) <= 3
    if not pairs and not unread and not header and not texts:
        return None
    if m is None:
        return None, None, pairs, pct, False, [], texts, clashes
    # the words of the step's own field: not a logging prefix's ("INFO:test:step 10", "- test - INFO - step 10")
    tagged = None
    field = _FIELD_START.split(line[:m.start()])[-1]
    if header:  # "Iteration 5, Evaluating...": a header's words after its step too
        field += line[m.end():].replace(".", " ")
    elif not _EVAL_TAG.search(field):  # "Step 10 - eval: accuracy=0.45": a split's word after the step, before its keys
        field = _after_step(line, m.end(), first_key)
    if _EVAL_TAG.search(field):  # its keys eval/<key>, unless they name a split
        tagged = (re.sub(r"\d+", "0", field.strip()), eval_names(pairs))
        pairs = {(f"eval/{k}" if f"eval/{k}" in tagged[1] else k): v for k, v in pairs.items()}
        pct = {(f"eval/{k}" if f"eval/{k}" in tagged[1] else k): v for k, v in pct.items()}
    total = int(m.group("total").replace(",", "")) if m.group("total") else None
    return int(m.group("n")), total, pairs, pct, tagged, unread, texts, clashes


# rich's and other box-drawing rules between fields ("Step 10 ┃ reward 0.31 ┃ entropy 0.52"): read as |
_RULES = str.maketrans(dict.fromkeys("│┃┆┇┊┋║╎╏", "|"))
_DICT = re.compile(r"\{\s*['\"]")
# a whole number alone before a dict at the line's start (or a logging level's message's) is its step: print(step,
# metrics) ("10 {'entropy': 0.5}"), print((step, metrics)) ("(10, {...})"); not one in brackets ("[0] {...}", "[1]
# {...}": a rank's, each step printed once per rank, read as steps 0 and 1 averaged a run away)
_NUMBERED_DICT = re.compile(r"^(?P<pre>[^{]*?\b(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\b(?::[\w.]+:)?[\s:\]|-]*)?\s*"
                            r"(?:\(\s*(?P<b>\d+)\s*,|(?P<c>\d+))\s*[:,-]?\s*(?=\{\s*['\"])")
# a dict that names its own step (print(epoch, logs): "0 {'step': 1, ...}") or is a run's closing summary
# ("3 {'train_runtime': 1234.5}"): the number before it is no step of it
_OWN_STEP = re.compile(r"['\"](?:step|global_step|iteration|iter|train_runtime)['\"]\s*:")


def dict_fields(line: str) -> str:
    """A dict printed after a line's words (``Step 10: {'reward': 0.31}``: a loop's ``print(f"Step {step}:
    {metrics}")``) as its numbers' ``key=value`` fields parted by ``|`` (a nested dict's keys as their path,
    ``train/reward``); the line as it is where it prints no such dict, or one without numbers.

    >>> dict_fields("Step 10 eval: {'accuracy': 0.4, 'mode': 'greedy', 'val': {'n': 500}}")
    'Step 10 eval: accuracy=0.4 | val/n=500'

    A dict holding a sample's text (``{'prompt': ..., 'response': ..., 'reward': 1.0}``) is one sample's, its
    numbers none of the step's: the line is left as it is.
    """
    start = line.find("{")
    if start < 0 or not _DICT.match(line, start):
        return line
    end = line.rfind("}")
    record = parse_record(line[start:end + 1]) if end > start else None
    if record and any(isinstance(v, str) and SAMPLE_TEXT.search(str(k)) for k, v in record.items()):
        return line  # a sample with its text ({'prompt': ..., 'response': ..., 'reward': 1.0}): no step's values
    fields = [f"{key}={_as_printed(value)}" for key, value in (record or {}).items() if _as_printed(value)]
    return f"{line[:start]}{' | '.join(fields)}{line[end + 1:]}" if fields else line


def _as_printed(value) -> str:
    """A dict's value as a printed number or list of numbers; '' where it is neither (a string, a flag, None)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return repr(float(value)) if isinstance(value, float) else str(value)
    if isinstance(value, (list, tuple)) and value and all(_as_printed(v) and not isinstance(v, (list, tuple))
                                                          for v in value):
        return "[" + ", ".join(map(_as_printed, value)) + "]"
    return ""


def _after_pairs(line: str, start: int) -> list[tuple]:
    """The names and numbers printed without ``=`` or ``:`` after a line's first ``key=value`` pair (past ``start``,
    its step): a field of its own between commas (``acc: 45.0%, f1 0.41``; a name of up to three words), or names of
    one word and numbers right after a pair (``acc: 45.0% f1 0.41``); as :func:`parse_line` lists what it found.

    >>> [f[:3] for f in _after_pairs("step 10 eval acc: 45.0%, f1 0.41, avg len 120", 7)]
    [('f1', '0.41', ''), ('avg len', '120', '')]
    >>> _after_pairs("step 10 loss=0.5 at epoch 1 took 3.2s", 7)
    []
    """
    text = PAIR.sub("\x00", LISTED.sub("\x00", line[start:]) if "[" in line else line[start:])
    out = []
    for piece in re.split(r"[,;]", text[max(text.find("\x00"), 0):] if "\x00" in text else ""):
        subs = piece.split("\x00")
        if len(subs) == 1 and (named := _NAMED_FIELD.fullmatch(piece.strip().rstrip("."))):
            out.append((named.group("key"), named.group("v"), named.group("pct"), None, None))
        out += [(b.group("key"), b.group("v"), b.group("pct"), None, None) for sub in subs[1:]
                if sub.strip() and _BARE_ALL.fullmatch(sub) for b in _BARE.finditer(sub)]
    return out


def _without_locators(line: str) -> str:
    """The line without the logging locators before its message (:data:`LOCATOR`): those before its step only, a
    dotted key printed after the step with a whole number (``step 3 - gen.tokens:512 - reward: 0.3``) is the
    message's.

    >>> _without_locators("grpo.trainer:88 - step 3 - gen.tokens:512 - reward: 0.3")
    '  - step 3 - gen.tokens:512 - reward: 0.3'
    """
    out, end = [], 0
    for loc in LOCATOR.finditer(line):
        if STEP.search(line, end, loc.start()):  # the message has begun: a key of its own
            break
        out.append(line[end:loc.start()] + " ")
        end = loc.end()
    return "".join(out) + line[end:]


def _after_step(line: str, end: int, first: int | None = None) -> str:
    """The words between a line's step and its first ``key=value`` (`` - eval: `` of ``Step 10 - eval: acc=0.4``),
    at most :data:`AFTER_WORDS` of them and not past a ``|`` (``Step 10 | train: ... | eval: acc=0.4``: its own
    field's); '' where there are none.

    >>> _after_step("Step 10 - eval: accuracy=0.45", 7), _after_step("Step 10 | train: r=0.3 | eval: a=0.4", 7)
    (' - eval: ', ' | train: ')
    """
    if first is None:  # where the first key begins: its first key=value's, unless read without = or :
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


def _lead(line: str, end: int) -> str:
    """The words before a ``key=value`` pair's key at ``end`` that are part of its name (``Val `` of
    ``Val Accuracy=0.5``)."""
    # looked for in the LEAD_CHARS before it, the line not copied: a bar's displays redrawn after \r are one line of
    # megabytes to a format's sniff, its every pair's lead searched from the line's start (hours); ^ is its start
    m = _LEAD.search(line, max(0, end - LEAD_CHARS), end) if line[end - 1:end] == " " else None
    words = m.group("words") if m else ""
    return words if words and not _NOT_KEY_WORDS.intersection(words.lower().split()) else ""
