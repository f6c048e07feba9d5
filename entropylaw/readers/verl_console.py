"""veRL console logs: ``step:N - key:value - key:value ...`` lines among everything else.

veRL's console logger prints one line per logged step. Around those lines a real log
holds the launch command, the config echo, Ray worker chatter, progress bars, model
samples and NCCL noise; lines may carry ANSI colour codes, a Ray prefix such as
``(TaskRunner pid=123)`` and stray NUL or carriage-return bytes. The reader

- streams the file in binary, line by line (memory does not grow with the noise), and
  only looks closely at lines that contain ``step:``;
- accepts a line as a metric line when, after colour codes and the Ray prefix,
  ``step:<int>`` starts a word and is followed by `` - key:value`` pairs (so model output
  such as "Let's solve this step by step:" is not taken for one; such lines are
  counted in a note);
- parses values with ``float`` (ints, ``nan``, negatives, scientific notation) and
  unwraps ``np.float64(0.5)`` / ``tensor(0.5)`` as printed by newer veRL; a value that is
  not a number is dropped, counted, and its line number reported;
- reads metadata from the launch command / config echo before the first step line:
  model (``actor_rollout_ref.model.path``, shell variables resolved), algorithm
  (``algorithm.adv_estimator``; ``gae`` means PPO), dataset (the train files) and the
  ``config`` the forecast reads (:func:`.verl_config.config_from_header`): the train files in order,
  ``data.shuffle``, the planned total steps and the learning-rate schedule.

Validation-only lines (veRL validates before the first update and after the last one)
are ordinary step lines; :func:`entropylaw.readers.common.finalize` notes them.

>>> import tempfile, os
>>> text = ("python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo "
...         "actor_rollout_ref.model.path=Qwen/Qwen2.5-7B data.train_files=~/data/gsm8k/train.parquet\\n"
...         "\\x1b[36m(TaskRunner pid=7)\\x1b[0m step:1 - actor/entropy:0.5 - critic/score/mean:0.25\\n"
...         "noise step: not metrics\\n"
...         "step:2 - actor/entropy:0.4 - critic/score/mean:oops\\n")
>>> with tempfile.TemporaryDirectory() as d:
...     p = os.path.join(d, "run.log")
...     _ = open(p, "w").write(text)
...     [raw] = read_verl_console(p)
>>> raw.meta["model"], raw.meta["algorithm"], raw.meta["dataset"]
('Qwen2.5-7B', 'grpo', 'gsm8k')
>>> raw.rows()
[(1, 'actor/entropy', 0.5), (1, 'critic/score/mean', 0.25), (2, 'actor/entropy', 0.4)]
>>> raw.report.dropped["non-numeric value"], raw.report.notes[0]
(1, "line 4: key 'critic/score/mean' has non-numeric value 'oops' (dropped)")
"""

from __future__ import annotations

import os
import re
from array import array

import numpy as np
import pandas as pd

from entropylaw.errors import EntropyLawError
from entropylaw.readers.compressed import open_log
from entropylaw.readers.common import STEP_LIMIT, STEP_RANGE, RawRun, existing_file
from entropylaw.readers.datasets import dataset_name, same_as
from entropylaw.readers.names import algorithm_name, model_from_filename, model_name_from_path, run_id_from_path
from entropylaw.readers.keys import detect_keys
from entropylaw.readers.log_end import say_end
from entropylaw.readers.printed import number
from entropylaw.readers.verl_echo import MARK, EchoCollector, echo_rows
from entropylaw.readers.verl_jsonl import CUT_LAST
from entropylaw.readers.verl_config import ANSI as _ANSI
from entropylaw.readers.verl_config import PARQUET as _PARQUET
from entropylaw.readers.verl_config import SHELL_VAR as _SHELL_VAR
from entropylaw.readers.verl_config import TRAIN_FILES as _TRAIN_FILES
from entropylaw.readers.verl_config import config_from_header
from entropylaw.readers.verl_config import expand as _expand
from entropylaw.readers.verl_config import unquote as _unquote
from entropylaw.terminal import count

NON_NUMERIC = "non-numeric value"
MALFORMED = "malformed key:value pair"
CUT = "value at the end of a cut-off line"
# W&B's console capture (output.log) cuts a line at 4096 bytes: its last pair may be a
# truncated number ("0.12" of "0.1234"), so it is dropped, never read
CUT_LINE_BYTES = 4096
MAX_NOTES_PER_KIND = 5
HEADER_SCAN_LINES = 50_000  # metadata is read from the launch command / config echo only

# step:<int> at the start of a word, then the pairs (or nothing but spaces)
_HEAD = re.compile(rb"(?:^|(?<=[\s)\]>|]))step:(-?\d+)(?= - |\s*$)")


def _number(text: str) -> float | None:
    """Parse one printed value; None when it is not a number."""
    return number(text)


class _Parser:
    """Accumulates parsed step lines into compact arrays (12 bytes per number)."""

    def __init__(self, source: str, report):
        self.source = source
        self.report = report
        self.key_codes: dict[bytes, int] = {}
        self.key_names: list[str] = []
        self.signatures: dict[tuple, array] = {}  # key sequence of a line -> its codes
        self.codes = array("i")
        self.values = array("d")
        self.line_steps = array("q")   # one entry per metric line
        self.line_numbers = array("q")
        self.line_counts = array("q")  # numbers kept from that line
        self.notes: dict[str, int] = {}
        self.step_lines = 0
        self.lookalikes: list[int] = []

    def _code(self, key: bytes) -> int:
        code = self.key_codes.get(key)
        if code is None:
            code = self.key_codes[key] = len(self.key_names)
            self.key_names.append(key.decode("utf-8", "replace"))
        return code

    def _note(self, kind: str, message: str) -> None:
        n = self.notes.get(kind, 0) + 1
        self.notes[kind] = n
        if n <= MAX_NOTES_PER_KIND:
            self.report.note(message)

    def line(self, raw: bytes, lineno: int, unterminated: bool = False) -> None:
        """Parse one physical line that contains ``step:``. ``unterminated``: the file's last
        line, with no newline (the log was cut while being written): its last pair may be a
        cut number (``0.7`` of ``0.707``) unless the line ends after a separator."""
        cut = len(raw) == CUT_LINE_BYTES or (unterminated and not raw.rstrip().endswith(b"-"))
        if b"\x1b" in raw:
            raw = _ANSI.sub(b"", raw)
        if b"\x00" in raw:
            raw = raw.replace(b"\x00", b"")
        pieces = raw.split(b"\r") if b"\r" in raw else (raw,)
        for piece in pieces:
            m = _HEAD.search(piece)
            if m is None:
                if b"step:" in piece:
                    self.lookalikes.append(lineno)
                continue
            rest = piece[m.end():].rstrip().rstrip(b" -")
            step = int(m.group(1))
            if not -STEP_LIMIT < step < STEP_LIMIT:  # no run's step: its values dropped, counted with the line
                n = rest.count(b" - ")
                self.report.read(n)
                self.report.drop(STEP_RANGE, n, [lineno])
                self._note(STEP_RANGE, f"line {lineno}: step {m.group(1).decode()[:24]} is past what a 64-bit "
                                       f"integer holds ({count(n, 'value')} dropped)")
                continue
            if cut and piece is pieces[-1] and b" - " in rest:
                rest = rest[:rest.rindex(b" - ")]
                self.report.read(1)
                # the last line of a log still being written: the reason the JSON lines and CSV readers give it
                # (watch leaves it unsaid: whole at the next refresh); a logger's 4096-byte cut is a loss
                self.report.drop(CUT if len(raw) == CUT_LINE_BYTES else CUT_LAST)
                why = f"is {CUT_LINE_BYTES} bytes long, cut by the logger" if len(raw) == CUT_LINE_BYTES else \
                    "is the last and has no newline (cut while being written)"
                self._note(CUT, f"line {lineno} {why}: its last key:value pair dropped")
            self._pairs(step, rest, lineno)

    def _pairs(self, step: int, rest: bytes, lineno: int) -> None:
        self.step_lines += 1
        n_pairs = rest.count(b" - ")
        # fast path: " - k:v - k:v" -> ["", k, v, k, v] when every pair has exactly one colon
        parts = rest.replace(b" - ", b":").split(b":")
        keys, texts = parts[1::2], parts[2::2]
        if len(parts) == 2 * n_pairs + 1 and parts[0] == b"":
            try:
                values = list(map(float, texts))
            except ValueError:
                values = None
            if values is not None:
                sig = tuple(keys)
                codes = self.signatures.get(sig)
                if codes is None:
                    codes = self.signatures[sig] = array("i", map(self._code, keys))
                self.codes.extend(codes)
                self.values.extend(values)
                self._line_done(step, lineno, len(values))
                self.report.read(len(values))
                return
        self._slow_pairs(step, rest, lineno)

    def _slow_pairs(self, step: int, rest: bytes, lineno: int) -> None:
        kept = 0
        segments = rest.split(b" - ")[1:]
        self.report.read(len(segments))
        for seg in segments:
            key, sep, text = seg.partition(b":")  # values may hold colons: tensor(1, device='cuda:0')
            key = key.strip()
            if not sep or not key:
                self.report.drop(MALFORMED)
                self._note(MALFORMED, f"line {lineno}: {seg.decode('utf-8', 'replace')!r} is not key:value (dropped)")
                continue
            value = _number(text.strip().decode("utf-8", "replace"))
            if value is None:
                self.report.drop(NON_NUMERIC)
                self._note(NON_NUMERIC, f"line {lineno}: key {key.decode('utf-8', 'replace')!r} has non-numeric "
                                        f"value {text.decode('utf-8', 'replace')!r} (dropped)")
                continue
            self.codes.append(self._code(key))
            self.values.append(value)
            kept += 1
        self._line_done(step, lineno, kept)

    def _line_done(self, step: int, lineno: int, count: int) -> None:
        self.line_steps.append(step)
        self.line_numbers.append(lineno)
        self.line_counts.append(count)

    def finish_notes(self) -> None:
        for kind, n in self.notes.items():
            if n > MAX_NOTES_PER_KIND:
                self.report.note(f"... and {n - MAX_NOTES_PER_KIND} more lines with {kind}s")
        if self.lookalikes:
            shown = ", ".join(map(str, self.lookalikes[:5]))
            one = len(self.lookalikes) == 1
            self.report.note(f"{count(len(self.lookalikes), 'line')} {'contains' if one else 'contain'} 'step:' but "
                             f"{'is not a metric line' if one else 'are not metric lines'} "
                             f"(e.g. model output), skipped: {'line' if one else 'lines'} {shown}")


def _add_echoes(parser: _Parser, echoes) -> None:
    """Add what the printed validation echoes hold and the step lines do not (see verl_echo)."""
    counts = np.array(parser.line_counts, dtype=np.int64)  # copies: the arrays grow below
    steps = np.array(parser.line_steps, dtype=np.int64)
    row_steps = np.repeat(steps, counts)
    codes = np.array(parser.codes, dtype=np.int32)
    step_keys: dict[int, set[str]] = {}
    for step, code in set(zip(row_steps.tolist(), codes.tolist())):
        step_keys.setdefault(step, set()).add(parser.key_names[code])
    all_keys = set(parser.key_names)
    line_numbers = list(parser.line_numbers)
    for echo_line, kind, values in echoes:
        step, added, left_out = echo_rows(echo_line, kind, values, steps.tolist(), line_numbers, step_keys, all_keys)
        if added:
            for key, value in added.items():
                parser.codes.append(parser._code(key.encode()))
                parser.values.append(value)
            parser._line_done(step, echo_line, len(added))
            parser.report.read(len(added))
            when = "before training" if kind == "Initial" else "after the last update"
            parser.report.note(f"line {echo_line}: '{kind} validation metrics' (validation {when}) read at step "
                               f"{step}: {', '.join(sorted(added))} (the step lines do not print it)")
        if left_out:
            parser.report.note(f"line {echo_line}: '{kind} validation metrics': {count(len(left_out), 'key')} no step "
                               f"line has, not read (e.g. {left_out[0]})")


def read_verl_console(path: str | os.PathLike, run_id: str | None = None) -> list[RawRun]:
    """Read one veRL console log into a single :class:`RawRun` (see module docstring)."""
    path = existing_file(path, "veRL console lines 'step:N - key:value - ...'")
    source = str(path)
    raw = RawRun(run_id or run_id_from_path(path), source, ordered=True)
    parser = _Parser(source, raw.report)
    header: list[bytes] = []
    echoes = EchoCollector()
    lineno = 0
    with open_log(path, bom=True) as f:
        pending, mark = echoes.pending, MARK
        for lineno, line in enumerate(f, 1):
            if pending or mark in line:  # most lines: one substring test, no call
                echoes.feed(line, lineno)
            if b"step:" in line:
                parser.line(line.rstrip(b"\r\n"), lineno, unterminated=not line.endswith(b"\n"))
            elif not parser.step_lines and lineno <= HEADER_SCAN_LINES:
                header.append(line)
    parser.finish_notes()
    if parser.step_lines and echoes.echoes:
        _add_echoes(parser, echoes.echoes)
    if not parser.step_lines:
        # the shapes of a printed log this file could have had: the custom loop's said too, with what is no step
        raise EntropyLawError(f"{source}: no veRL step lines in {count(lineno, 'line')} "
                              "(expected lines like 'step:1 - actor/entropy:0.5 - critic/score/mean:0.2'), nor a "
                              "loop's printed steps ('step 10 | entropy 0.5 | reward 0.3', 'iter=10 entropy=0.5'; "
                              "an epoch, 'epoch 0.25', is no step)")
    counts = np.frombuffer(parser.line_counts, dtype=np.int64)
    raw.steps = np.repeat(np.frombuffer(parser.line_steps, dtype=np.int64), counts)
    raw.lines = np.repeat(np.frombuffer(parser.line_numbers, dtype=np.int64), counts)
    # keys as a Categorical straight from the parser's codes: no per-row strings
    raw.keys = pd.Categorical.from_codes(np.frombuffer(parser.codes, dtype=np.int32) if len(parser.codes)
                                         else np.zeros(0, np.int32), categories=list(parser.key_names))
    raw.values = np.frombuffer(parser.values, dtype=np.float64) if len(parser.values) else np.zeros(0)
    raw.meta = infer_header_meta(header, parser.key_names)
    if not raw.meta.get("model"):
        raw.meta["model"] = model_from_filename(path)
    raw.report.note(f"{count(parser.step_lines, 'step line')} among {count(lineno, 'line')}")
    if len(raw.lines):
        say_end(raw.report, path, int(raw.lines.max()), int(raw.steps.max()))
    return [raw]



# ---- metadata from the launch command and the config echo -------------------------------

_MODEL_ARG = re.compile(r"actor_rollout_ref\.model\.path=(\S+)")
_MODEL_ECHO = re.compile(r"'path':\s*'([^']+)'")
_ESTIMATOR = re.compile(r"algorithm\.adv_estimator=([\w-]+)|'adv_estimator':\s*'([\w-]+)'")




def _dataset_from_files(text: str) -> str:
    """The data set of the data files a launch command or config echo names, veRL's aliases applied.

    >>> _dataset_from_files("data.train_files=[~/data/gsm8k/train.parquet,~/data/math-lighteval/train.parquet]")
    'gsm8k+math'
    """
    names = dataset_name(_PARQUET.findall(text)).split("+")
    # veRL's preprocessors name MATH's folders after their hub copies; the run trained on MATH
    return "+".join(dict.fromkeys(same_as(n) for n in names if n))


def dataset_from_val_keys(keys) -> str:
    """Dataset names from validation keys (``val/test_score/openai/gsm8k`` -> ``gsm8k``)."""
    names = []
    for canon in detect_keys(keys).val:
        bench = canon.removeprefix("val/").rsplit("/", 1)[-1].lower()
        bench = same_as(bench)
        if bench != "mean" and bench not in names:
            names.append(bench)
    return "+".join(names)


def infer_header_meta(header_lines: list[bytes], keys: list[str]) -> dict:
    """model / algorithm / dataset from the lines before the first step line."""
    variables: dict[str, str] = {}
    model = echo_model = algorithm = dataset = echo_dataset = ""
    for raw in header_lines:
        if not any(tag in raw for tag in (b"=", b"'path'", b"'adv_estimator'", b"'train_files'")):
            continue
        line = _ANSI.sub(b"", raw).decode("utf-8", "replace").rstrip()
        m = _SHELL_VAR.match(line)
        if m and " " not in m.group(1):
            variables[m.group(1)] = _unquote(m.group(2))
        if not model and (m := _MODEL_ARG.search(line)):
            model = _expand(_unquote(m.group(1)), variables)
        if not echo_model and (m := _MODEL_ECHO.search(line)):
            echo_model = m.group(1)
        if not algorithm and (m := _ESTIMATOR.search(line)):
            algorithm = (m.group(1) or m.group(2)).lower()
        m = _TRAIN_FILES.search(line)
        if m:
            found = _dataset_from_files(_expand(m.group(1).split("data.val_files")[0], variables))
            if found and "'train_files'" in line:
                echo_dataset = echo_dataset or found
            elif found and not dataset:
                dataset = found
    model = model if model and "$" not in model else echo_model
    if not algorithm and "critic/vf_loss" in keys:
        algorithm = "ppo"  # a value critic is trained: PPO with GAE (old veRL's default)
    return {
        "model": model_name_from_path(model) if model else "",
        "algorithm": algorithm_name(algorithm),
        "dataset": dataset or echo_dataset or dataset_from_val_keys(keys),
        "config": config_from_header(header_lines),
    }

