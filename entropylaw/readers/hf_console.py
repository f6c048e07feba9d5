"""Hugging Face Trainer console output (``nohup.out``): one Python dict per logging step.

The Trainer prints each log record with ``tqdm.write(str(logs))``: a dict such as
``{'loss': 0.16, 'entropy': 0.25, 'reward': 0.9, ..., 'epoch': 0.01}`` on its own line,
with no step number, among progress bars, warnings and config echoes. The dicts are
parsed with :func:`ast.literal_eval` (never ``eval``); ``nan``/``inf`` and wrappers
such as ``tensor(0.5)`` are unwrapped first.

Step numbers, first that applies:

1. ``logging_steps`` given (``--logging-steps N``): the k-th training record is step k·N;
2. the records carry ``step`` (a custom loop's ``print(metrics)``: ``global_step``, ``iteration``
   or ``iter``, then not read as a value; a nested ``{'train': {...}}`` is read as ``train/<key>``);
   a summary printed after the last of them, without one (``{'train_runtime': ..., 'train_loss': ...}``),
   takes the last step, said;
3. a line naming only the step above each training record (a custom loop's ``print(f"Step {step}:")`` then
   ``pprint(metrics)``, the dict over several indented lines); an evaluation's record without one takes the step
   of the record before it;
4. tqdm: each ``tqdm.write`` clears the progress bars first (``\\r``, spaces, ``\\r`` on
   stderr; the last bar drawn before it says ``N/total``). stdout is block-buffered when
   redirected, so the dicts arrive in clumps, away from their bars, but the k-th clear
   still belongs to the k-th record: its bar's N is the step. Used only when there are
   exactly as many clears as records;
5. else 1, 2, 3 ... with a note that the step numbers are record indices.

An evaluation record (only ``eval_*`` keys) takes the step of the training record before
it, the final summary (``train_runtime`` ...) the last step. Values are counted through
:func:`entropylaw.readers.trl.add_records`, like ``trainer_state.json``.

>>> import tempfile, os
>>> text = (" 50%|#####     | 1/2 [00:01<00:01]\\r          \\r 50%|#####     | 1/2 [00:01<00:01]\\r"
...         "100%|##########| 2/2 [00:02<00:00]\\r          \\r100%|##########| 2/2 [00:02<00:00]\\n"
...         "{'loss': 0.1, 'entropy': 0.5, 'reward': 0.25, 'epoch': 0.5}\\n"
...         "{'loss': nan, 'entropy': 0.4, 'reward': 0.5, 'epoch': 1.0}\\n")
>>> with tempfile.TemporaryDirectory() as d:
...     p = os.path.join(d, "nohup.out")
...     _ = open(p, "w").write(text)
...     [raw] = read_hf_console(p)
>>> [row for row in raw.rows() if row[1] in ("entropy", "reward")]
[(1, 'entropy', 0.5), (1, 'reward', 0.25), (2, 'entropy', 0.4), (2, 'reward', 0.5)]
"""

from __future__ import annotations

import ast
import math
import os
import re
from collections import Counter

from entropylaw.errors import EntropyLawError
from entropylaw.readers.compressed import open_log
from entropylaw.readers.log_end import say_end
from entropylaw.readers.printed import before_verl_steps, unwrap
from entropylaw.readers.common import RawRun, existing_file
from entropylaw.readers.names import model_from_filename, run_id_from_path
from entropylaw.readers.trl import add_records
from entropylaw.terminal import count

UNPARSEABLE = "unparseable log record"
MAX_RECORD = 1 << 20  # a log dict longer than this is not a Trainer record
_LOG_KEYS = (b"'loss':", b"'learning_rate':", b"'train_runtime':", b"'eval_loss':", b"'reward':",
             b"'entropy':", b"'grad_norm':", b"/reward':", b"/entropy':", b"/loss':")
# a custom loop's print(metrics) names its step so; a Trainer's records have none, or 'step' (TRL's list)
STEP_KEYS = ("step", "global_step", "iteration", "iter")
SUMMARY = 2  # records of a summary printed after the last stepped record (a final eval, the run's totals)
_BAR = re.compile(rb"(\d+)/(\d+) \[")
_TOTAL = re.compile(rb"Total optimization steps = ([\d,]+)")
_MODEL = re.compile(r"models--[^/\s]+--([^/\s'\"]+)")
_BARE = re.compile(r"(?<=[:\[,(]\s)(-?(?:nan|inf))(?=\s*[,}\])])")
# a custom loop's line naming the step of the dict printed below it ("Step 10:", "=== Iteration 10/500 ==="; the
# dict pprint'ed over several lines): no Trainer prints one
_HEADER = re.compile(rb"[\W_]*(?:global[_ ]step|step|iteration|iter|update)\s*[=:#]?\s*(\d+)(?:\s*/\s*\d+)?[\W_]*",
                     re.IGNORECASE)
MAX_JOINS = 1000  # lines of one pprint'ed dict (one key a line, indented): far more than a loop logs


def looks_like_hf_console(path: str | os.PathLike) -> bool:
    """True when a Trainer log dict comes before any veRL ``step:N - `` line."""
    return before_verl_steps(path, lambda line: b"{'" in line and any(k in line for k in _LOG_KEYS) and any(
        piece.lstrip().startswith(b"{'") for piece in line.split(b"\r")))


def parse_record(text: str) -> dict | None:
    """A printed log dict as a dict of its values; None when it is not one.

    >>> parse_record("{'loss': nan, 'grad_norm': tensor(0.5, device='cuda:0'), 'epoch': 1.0}")
    {'loss': nan, 'grad_norm': 0.5, 'epoch': 1.0}
    >>> parse_record("{'loss': 0.1, 'entr") is None
    True
    >>> parse_record("{'step': 5, 'train': {'reward': np.float32(0.5)}, 'eval': {'acc': 0.25}}")
    {'step': 5, 'train/reward': 0.5, 'eval/acc': 0.25}
    """
    text = text.strip()
    if not (text.startswith("{") and text.endswith("}")) or len(text) > MAX_RECORD:
        return None
    text = _BARE.sub(lambda m: f"'__{m.group(1)}__'", unwrap(text))
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        return None
    specials = {"__nan__": math.nan, "__-nan__": math.nan,
                "__inf__": math.inf, "__-inf__": -math.inf}
    return {k: specials.get(v, v) if isinstance(v, str) else v for k, v in _flat(value).items()}


def _flat(record: dict, prefix: str = "") -> dict:
    """A custom loop's nested dict ``{'train': {'reward': 0.3}}`` as ``{'train/reward': 0.3}``."""
    out = {}
    for key, value in record.items():
        if isinstance(value, dict) and value and all(isinstance(k, str) for k in value):
            out.update(_flat(value, f"{prefix}{key}/"))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _is_log_record(record: dict) -> bool:
    keys = {k.rsplit("/", 1)[-1] for k in record}  # a nested dict's train/reward too
    return bool(keys & {"loss", "learning_rate", "grad_norm", "reward", "entropy", "train_runtime", "train_loss"}) \
        or any(k.startswith(("eval_", "rewards/")) for k in record)


def _kind(record: dict) -> str:
    keys = set(record) - {"epoch", *STEP_KEYS}
    if "train_runtime" in keys:
        return "final"
    if keys and all(k.startswith(("eval_", "eval/")) for k in keys):
        return "eval"
    return "train"


class _Scan:
    """One pass over the file: log records, tqdm clears, the training total, the model."""

    def __init__(self):
        self.records: list[tuple[dict, int]] = []
        self.clears: list[tuple[int, int]] = []  # (N, total) of the bar each clear followed
        self.total: int | None = None
        self.model = ""
        self.broken: list[tuple[int, int]] = []  # (line, values it seemed to hold)
        self.other_dicts = 0
        self._pending: tuple[bytes, int, int] | None = None  # a dict cut by buffering
        self._bar: tuple[int, int] | None = None
        self.headers: list[int | None] = []  # each record's step as the line above it named it, else None
        self._header: int | None = None  # the step the last line named, where it named only that
        self._opened: int | None = None  # ... as it was where the pending dict began

    def piece(self, piece: bytes, lineno: int, between_crs: bool = False) -> None:
        """One ``\\r``-separated piece of a line; ``between_crs`` when a ``\\r`` is on both sides."""
        if self._pending is not None and piece.strip() and not _BAR.search(piece):
            text, start, n = self._pending
            self._pending = None
            # a dict pprint'ed over several lines goes on with indented lines; one cut by buffering, 8 pieces at most
            if (n < 8 or piece[:1] in b" \t" and n < MAX_JOINS) and len(text) < MAX_RECORD:
                self._dict(text + piece, start, n + 1)
                return
            self._give_up(text, start)
        stripped = piece.strip()
        if not stripped:
            # tqdm clears its bars with "\r" + spaces + "\r": the last bar drawn is the step
            if between_crs and self._bar is not None and len(piece) >= 10:
                self.clears.append(self._bar)
            return
        m = _BAR.search(piece)
        if m:
            self._bar = (int(m.group(1)), int(m.group(2)))
            return
        if stripped.startswith(b"{"):
            self._opened, self._header = self._header, None
            self._dict(stripped, lineno, 0)
            return
        header = _HEADER.fullmatch(stripped)
        self._header = int(header.group(1)) if header else None
        if self.total is None and b"Total optimization steps" in piece:
            if (t := _TOTAL.search(piece)) is not None:
                self.total = int(t.group(1).replace(b",", b""))
        elif not self.model and b"models--" in piece:
            if (mm := _MODEL.search(piece.decode("utf-8", "replace"))) is not None:
                self.model = mm.group(1)

    def _dict(self, text: bytes, lineno: int, joins: int) -> None:
        record = parse_record(text.decode("utf-8", "replace"))
        if record is None:
            if text.startswith(b"{'") and not text.rstrip().endswith(b"}"):
                self._pending = (text, lineno, joins)  # the rest may come after a progress bar
            elif text.startswith(b"{'") and any(k in text for k in _LOG_KEYS):
                self._give_up(text, lineno)
            return
        if _is_log_record(record):
            self.records.append((record, lineno))
            self.headers.append(self._opened)
        else:
            self.other_dicts += 1

    def _give_up(self, text: bytes, lineno: int) -> None:
        if any(k in text for k in _LOG_KEYS):
            self.broken.append((lineno, max(1, text.count(b"': "))))

    def finish(self) -> None:
        if self._pending is not None:
            self._give_up(self._pending[0], self._pending[1])
            self._pending = None


def _numbered(records: list[dict], first: int, stride: int) -> list[int]:
    """Steps for records: training records first, first+stride, ...; eval and final records
    the step of the training record before them."""
    steps, k, current = [], 0, first - stride
    for record in records:
        if _kind(record) == "train":
            current = first + k * stride
            k += 1
        steps.append(max(current, 0))
    return steps


def _whole(value) -> bool:
    """A step as a printed dict holds it: 10, np.int64(10), 10.0."""
    return not isinstance(value, bool) and (isinstance(value, int) or isinstance(value, float) and value.is_integer())


def _stepped(records: list[dict], key: str) -> int:
    """How many records, from the first, carry ``key`` as a whole number, where those after them (none, or a
    summary: the Trainer's final record, an evaluation, or at most :data:`SUMMARY` records) carry no ``key``; 0
    where the records' steps are not ``key``.

    >>> _stepped([{"step": 1, "loss": 1}, {"step": 2, "loss": 1}, {"train_runtime": 9.0}], "step")
    2
    >>> _stepped([{"step": 1, "loss": 1}, {"loss": 1}, {"loss": 1}, {"loss": 1}, {"loss": 1}], "step")
    0
    """
    n = next((i for i, r in enumerate(records) if not _whole(r.get(key))), len(records))
    rest = records[n:]
    if not n or any(key in r for r in rest):
        return 0
    return n if len(rest) <= min(SUMMARY, n - 1) or all(_kind(r) != "train" for r in rest) else 0


def _steps(scan: _Scan, logging_steps: int | None, report) -> list[int]:
    records = [r for r, _ in scan.records]
    if logging_steps is not None:
        report.note(f"step numbers from `logging_steps` {logging_steps}: training record k is step "
                    f"{logging_steps}*k")
        return _numbered(records, logging_steps, logging_steps)
    for key in STEP_KEYS:
        stepped = _stepped(records, key)
        if stepped:
            steps = [int(r[key]) for r in records[:stepped]]
            if key != "step":  # add_records takes 'step' out of the values; the others here
                report.note(f"step numbers from the records' '{key}'")
                for r in records[:stepped]:
                    del r[key]
            if stepped < len(records):  # a summary printed at the end, as the Trainer's train_runtime record
                after = sorted({k for r in records[stepped:] for k in r})
                report.note(f"{count(len(records) - stepped, 'record')} after the last with '{key}' (a summary: "
                            + ", ".join(after[:4]) + (", ..." if len(after) > 4 else "")
                            + f") read at its last step {steps[-1]}")
                steps += [steps[-1]] * (len(records) - stepped)
            return steps
    headed = [h for h, r in zip(scan.headers, records) if _kind(r) == "train"]
    if headed and None not in headed:  # a loop's "Step 10:" above each training record (an evaluation's: the last)
        report.note("step numbers from the line naming its step above each record ('Step 10:')")
        steps, last = [], 0
        for h in scan.headers:
            last = h if h is not None else last
            steps.append(last)
        return steps
    totals = Counter(t for _n, t in scan.clears)
    total = scan.total if scan.total in totals else (totals.most_common(1)[0][0] if totals else None)
    clears = [n for n, t in scan.clears if t == total]
    if clears and len(clears) == len(records) and all(b >= a for a, b in zip(clears, clears[1:])):
        report.note(f"step numbers from the tqdm progress bar (N/{total}) cleared by each record's print")
        return clears
    why = (f"{count(len(clears), 'progress-bar clear')} for {count(len(records), 'record')}" if clears
           else "no progress bar to take them from")
    report.note(f"step numbers are record indices 1, 2, 3 ..., not training steps ({why}); "
                "give `logging_steps` N for the real steps")
    return _numbered(records, 1, 1)


def read_hf_console(path: str | os.PathLike, run_id: str | None = None,
                    logging_steps: int | None = None) -> list[RawRun]:
    """Read one Trainer console log into a single :class:`RawRun` (see module docstring)."""
    path = existing_file(path, "Hugging Face Trainer console output with log dicts {'loss': ...}")
    if logging_steps is not None and (isinstance(logging_steps, bool) or not isinstance(logging_steps, int)
                                      or logging_steps < 1):
        raise EntropyLawError(f"`logging_steps` {logging_steps!r}: expected a whole number >= 1")
    scan = _Scan()
    lineno = 0
    with open_log(path, bom=True) as f:
        for lineno, line in enumerate(f, 1):
            pieces = line.rstrip(b"\n").split(b"\r")
            for i, piece in enumerate(pieces):
                scan.piece(piece, lineno, 0 < i < len(pieces) - 1)
    scan.finish()
    raw = RawRun(run_id or run_id_from_path(path), str(path))
    if not scan.records:
        detail = f" ({count(len(scan.broken), 'cut-off record')})" if scan.broken else ""
        raise EntropyLawError(f"{path}: no Trainer log records in {count(lineno, 'line')}{detail} "
                              "(expected lines like {'loss': 0.1, 'entropy': 0.5, 'reward': 0.3, 'epoch': 0.1})")
    steps = _steps(scan, logging_steps, raw.report)
    add_records(raw, ((step, record, f"line {line}") for step, (record, line) in zip(steps, scan.records)))
    for line, n in scan.broken:
        # a record cut off mid-way held as many values as the record logged before it (the
        # Trainer logs the same keys each time); the keys still visible are a floor
        before = [r for r, at in scan.records if at < line and _kind(r) == "train"]
        if before:
            n = max(n, sum(isinstance(v, (int, float)) and not isinstance(v, bool) for v in before[-1].values()))
        raw.report.read(n)
        raw.report.drop(UNPARSEABLE, n, [line])
        raw.report.note(f"line {line}: a log record that does not parse (cut off?): about {count(n, 'value')} dropped")
    raw.report.note(f"{count(len(scan.records), 'log record')} among {count(lineno, 'line')}")
    say_end(raw.report, path, scan.records[-1][1], max((s for s in steps if s is not None), default=None))
    raw.meta = {"model": scan.model or model_from_filename(path)}
    return [raw]
