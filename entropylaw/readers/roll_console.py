"""ROLL's stdout tracker: one ``metrics_tag: {"step": N, "metrics": {...}}`` line per pipeline step.

ROLL (alibaba/ROLL) with ``track_with: stdout`` logs each step's metrics dict through its logger
(``roll/utils/tracking.py``, ``StdoutTracker.log``) as JSON behind the marker ``metrics_tag:``; the
logger's prefix (time, file, level, worker, rank, pid) comes before it, on stdout and in
``$ROLL_LOG_DIR/log_rank_DRIVER_0_1.log``. The dict is the one its W&B and TensorBoard trackers get
(``critic/entropy/mean``, ``critic/score/mean``, ``val_correct/<tag>/mean`` ..., reducer tags
``@sum`` already cut), so the run reads as its W&B run does. A nested dict (what TensorBoard writes
with ``add_scalars``) is read as ``<key>/<sub>``; a string, a bool or a null is no number and is
counted as dropped; a line whose JSON does not parse (cut off) is counted with its line number.

The launch script prints the config (``OmegaConf.to_yaml``) to stdout before the first step: where
the file holds it, it names the model (``pretrain``), the data and the seed, and ``exp_name`` the run.

>>> import tempfile, os
>>> text = ("pretrain: Qwen/Qwen2.5-7B\\nseed: 42\\n"
...         '[2026-01-01 00:00:00] [tracking.py (9)] [INFO] [DRIVER 0 / 1][PID 7] metrics_tag: '
...         '{"step": 0, "metrics": {"critic/entropy/mean": 0.5, "critic/score/mean": 0.25}}\\n'
...         '[2026-01-01 00:00:09] [tracking.py (9)] [INFO] [DRIVER 0 / 1][PID 7] metrics_tag: '
...         '{"step": 1, "metrics": {"critic/entropy/mean": 0.4, "critic/sc\\n')
>>> with tempfile.TemporaryDirectory() as d:
...     p = os.path.join(d, "log_rank_DRIVER_0_1.log")
...     _ = open(p, "w").write(text)
...     [raw] = read_roll_console(p)
>>> raw.rows(), raw.meta["model"], dict(raw.report.dropped)
([(0, 'critic/entropy/mean', 0.5), (0, 'critic/score/mean', 0.25)], 'Qwen/Qwen2.5-7B', {'unparseable log record': 2})
"""

from __future__ import annotations

import json
import os
import re

from entropylaw.errors import EntropyLawError
from entropylaw.readers.common import RawRun, existing_file
from entropylaw.readers.compressed import open_log
from entropylaw.readers.log_end import say_end
from entropylaw.readers.names import model_from_filename, run_id_from_path
from entropylaw.readers.printed import before_verl_steps
from entropylaw.readers.trl import add_records
from entropylaw.terminal import count

MARK = b"metrics_tag: "
UNPARSEABLE = "unparseable log record"
HEADER_LINES = 20_000  # the config echo is looked for in the lines before the first metrics line
_LINE = re.compile(rb"metrics_tag: \{\s*\"(?:step|metrics)\"")
_YAML_TOP = re.compile(r"^[A-Za-z_][\w.-]*:(?: |$)")


def looks_like_roll_console(path: str | os.PathLike) -> bool:
    """True when a ROLL ``metrics_tag:`` line comes before any veRL ``step:N - `` line."""
    return before_verl_steps(path, lambda line: MARK in line and _LINE.search(line) is not None)


def _flat(metrics: dict, prefix: str = "") -> dict:
    """``{"acc": {"val": 1}}`` as ``{"acc/val": 1}`` (TensorBoard's add_scalars names them so)."""
    out: dict = {}
    for key, value in metrics.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flat(value, name + "/"))
        else:
            out[name] = value
    return out


def _config(header: list[str]) -> dict:
    """The config the launch script printed as YAML before the first step (the largest block of
    top-level ``key: value`` lines and their indented children that parses as a mapping), or {}."""
    from entropylaw.readers.run_config import MAX_BYTES, _yaml  # YAML without aliases, as a config file's

    blocks, block = [], []
    for line in header:
        if _YAML_TOP.match(line) or (block and (line.startswith((" ", "-")) or not line.strip())):
            block.append(line)
        elif block:
            blocks.append(block)
            block = []
    if block:
        blocks.append(block)
    best: dict = {}
    for block in sorted(blocks, key=len, reverse=True):
        text = "\n".join(block)
        if len(text) > MAX_BYTES:
            continue  # no config's echo
        try:
            parsed = _yaml(text)
        except (ValueError, RecursionError):
            continue
        if isinstance(parsed, dict) and len(parsed) > len(best):
            best = parsed
    return best


def read_roll_console(path: str | os.PathLike, run_id: str | None = None) -> list[RawRun]:
    """Read one ROLL stdout log (its console output or its driver's log file) into one :class:`RawRun`."""
    path = existing_file(path, 'ROLL stdout tracker lines \'metrics_tag: {"step": N, "metrics": {...}}\'')
    records: list[tuple[int | None, dict, str]] = []
    broken: list[tuple[int, int]] = []  # (line, the values of the record before it: about what it held)
    header: list[str] = []
    lineno = 0
    with open_log(path, bom=True) as f:
        for lineno, line in enumerate(f, 1):
            at = line.find(MARK)
            if at < 0 or not _LINE.search(line):
                if not records and not broken and len(header) < HEADER_LINES:
                    header.append(line.rstrip(b"\r\n").decode("utf-8", "replace"))
                continue
            text = line[at + len(MARK):].decode("utf-8", "replace").strip()
            try:
                record, _end = json.JSONDecoder().raw_decode(text)
            except ValueError:
                record = None
            metrics = record.get("metrics") if isinstance(record, dict) else None
            if not isinstance(metrics, dict):
                broken.append((lineno, len(records[-1][1]) if records else 1))
                continue
            records.append((record.get("step"), _flat(metrics), f"line {lineno}"))
    if not records:
        detail = f" ({count(len(broken), 'line')} that do not parse)" if broken else ""
        raise EntropyLawError(f"{path}: no ROLL metrics lines in {count(lineno, 'line')}{detail} "
                              "(expected lines like 'metrics_tag: {\"step\": 1, \"metrics\": "
                              "{\"critic/entropy/mean\": 0.5}}')")
    config = _config(header)
    name = config.get("exp_name") if isinstance(config.get("exp_name"), str) else None
    raw = RawRun(run_id or name or run_id_from_path(path), str(path), ordered=True)
    add_records(raw, records)
    for line, n in broken:  # a line cut off mid-way held about as many values as the record before it
        raw.report.read(n)
        raw.report.drop(UNPARSEABLE, n, [line])
        raw.report.note(f"line {line}: a metrics line that does not parse (cut off?): about {count(n, 'value')} "
                        "dropped")
    raw.report.note(f"{count(len(records), 'ROLL metrics line')} among {count(lineno, 'line')}")
    steps = [s for s, _, _ in records if isinstance(s, int)]
    say_end(raw.report, path, int(records[-1][2].split()[1]), max(steps) if steps else None)
    raw.meta = {"model": model_from_filename(path)}
    if config:
        from entropylaw.readers.config_meta import meta_from_config

        raw.meta.update(meta_from_config(config))
    return [raw]
