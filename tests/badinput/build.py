"""Build the bad-input corpus: deterministic inputs, intact and damaged, with the truth about each.

``python tests/badinput/build.py DIR`` writes it to DIR; the tests call :func:`build`
into a temporary directory. Every damaged file is made from an intact one by a stated
operation (cut at byte N, flip byte N, randomise bytes a..b with a fixed seed), and its
``lost`` count (the rows the damage cost) is known from how the file was made: which
records or lines the bytes belonged to and how many values each held, never from the
readers under test.

The base run: ``N_STEPS`` steps of entropy ``H`` falling and score ``R = -a exp(H) + b``
with a small deterministic wobble, validation every 10 steps; the last score is 0.707
(a log cut mid-line leaves ``critic/score/mean:0.707`` as ``0.7``).
"""

from __future__ import annotations

import gzip
import json
import math
import random
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path

N_STEPS = 60
A, B = 0.25, 1.0
LAST_SCORE = 0.707


@dataclass
class Input:
    """One corpus file: its path and, for damaged ones, the rows the damage cost."""

    path: Path
    lost: int | None = None          # rows lost (None: intact or not a damage case)
    reason: str = ""                 # a word the drop reason must contain
    intact: Path | None = None       # the file it was made from (kept values must match it)
    note: str = ""


@dataclass
class Corpus:
    root: Path
    inputs: dict[str, Input] = field(default_factory=dict)

    def add(self, name: str, path: Path, **kw) -> Path:
        self.inputs[name] = Input(path, **kw)
        return path

    def __getitem__(self, name: str) -> Path:
        return self.inputs[name].path


def base_rows() -> list[tuple[int, float, float, float | None]]:
    """(step, entropy, score, validation or None) of the base run."""
    rng = random.Random(12)
    rows = []
    for s in range(1, N_STEPS + 1):
        h = round(1.4 * math.exp(-s / 20) + 0.05, 6)
        r = round(B - A * math.exp(h) + 0.01 * (rng.random() - 0.5), 6)
        val = round(r - 0.05, 6) if s % 10 == 0 else None
        rows.append((s, h, r, val))
    s, h, _r, val = rows[-1]
    rows[-1] = (s, h, LAST_SCORE, val)
    return rows


# ---- veRL console ------------------------------------------------------------------------------

def verl_line(step, h, r, val) -> str:
    parts = [f"step:{step}", f"actor/entropy:{h}"]
    if val is not None:
        parts.append(f"val-core/gsm8k/acc/mean@1:{val}")
    parts.append(f"critic/score/mean:{r}")
    return " - ".join(parts)


def verl_log(rows) -> str:
    # the score is the last pair of every line, so a cut last line cuts a score
    return "".join(verl_line(*row) + "\n" for row in rows)


# ---- JSONL -------------------------------------------------------------------------------------

def jsonl_line(step, h, r) -> str:
    return json.dumps({"step": step, "data": {"actor/entropy": h, "critic/score/mean": r}})


# ---- TensorBoard (one scalar per event, as torch's SummaryWriter writes) -----------------------

def tb_payloads(rows) -> list[tuple[bytes, int]]:
    """(serialised Event, scalars in it): a file_version event, then one event per scalar."""
    from tensorboard.compat.proto import event_pb2, summary_pb2

    out = [(event_pb2.Event(wall_time=0.0, file_version="brain.Event:2").SerializeToString(), 0)]
    for step, h, r, _val in rows:
        for tag, value in (("actor/entropy", h), ("critic/score/mean", r)):
            v = summary_pb2.Summary.Value(tag=tag, simple_value=value)
            event = event_pb2.Event(wall_time=float(step), step=step, summary=summary_pb2.Summary(value=[v]))
            out.append((event.SerializeToString(), 1))
    return out


def tfrecord(payload: bytes) -> bytes:
    from entropylaw.readers.tfrecord import masked_crc32c

    head = struct.pack("<Q", len(payload))
    return head + struct.pack("<I", masked_crc32c(head)) + payload + struct.pack("<I", masked_crc32c(payload))


# ---- W&B .wandb ----------------------------------------------------------------------------------

def wandb_payloads(rows) -> list[tuple[bytes, int]]:
    """(serialised Record, rows in it): a run record, then one history record per step
    (``_step``, entropy, score, validation when there is one)."""
    from wandb.proto import wandb_internal_pb2 as pb

    out = [(pb.Record(run=pb.RunRecord(run_id="abc", display_name="wb-run")).SerializeToString(), 0)]
    for step, h, r, val in rows:
        rec = pb.Record(history=pb.HistoryRecord())
        rec.history.item.add(nested_key=["_step"], value_json=str(step))
        rec.history.item.add(nested_key=["actor/entropy"], value_json=repr(h))
        rec.history.item.add(nested_key=["critic/score/mean"], value_json=repr(r))
        if val is not None:
            rec.history.item.add(nested_key=["val-core/gsm8k/acc/mean@1"], value_json=repr(val))
        out.append((rec.SerializeToString(), 3 if val is not None else 2))
    return out


def _record_spans(sizes: list[int], start: int) -> list[tuple[int, int]]:
    spans, pos = [], start
    for n in sizes:
        spans.append((pos, pos + n))
        pos += n
    return spans


def build(root: str | Path) -> Corpus:
    """Write every corpus input under ``root``; returns what was written and the truth about it."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    c = Corpus(root)
    rows = base_rows()

    # veRL console logs
    log = verl_log(rows)
    c.add("verl", _write(root / "verl_grpo_qwen2.5-7b.log", log))
    cut = log[:-1][:-2]  # drop the newline, then "07" of 0.707: the last line ends "...mean:0.7"
    assert cut.endswith(f"critic/score/mean:{LAST_SCORE}"[:-2])
    c.add("verl_cut", _write(root / "cut_mid_number.log", cut), lost=1, reason="cut-off last line", intact=c["verl"])
    bad = log.replace(f"actor/entropy:{rows[9][1]} - ", "actor/entropy:nan - ").replace(
        f"critic/score/mean:{rows[19][2]}\n", "critic/score/mean:inf\n")
    assert bad.count("nan") == 1 and bad.count("inf") == 1
    c.add("verl_nan", _write(root / "nan_inf.log", bad), lost=2, reason="non-finite", intact=c["verl"])
    resumed = verl_log(rows[:40]) + verl_log(rows[29:])  # restarted from step 30: 10 steps re-done
    redone = sum(2 + (v is not None) for _s, _h, _r, v in rows[29:40])
    c.add("verl_resume", _write(root / "resumed.log", resumed), lost=redone, reason="superseded")
    c.add("empty", _write(root / "empty.log", ""))
    c.add("garbage", _write(root / "garbage.log", "this is not a training log\n" * 20))
    c.add("nul", _write_bytes(root / "nul.log", b"\0" * 4096))
    c.add("afile", _write(root / "afile", "a plain file, used as a parent directory\n"))

    # JSONL: 2 values per line
    lines = [jsonl_line(s, h, r) for s, h, r, _v in rows]
    c.add("jsonl", _write(root / "metrics.jsonl", "".join(line + "\n" for line in lines)))
    half = lines[-1][:lines[-1].index('"critic/') + 8]  # cut inside its second key: both values lost
    c.add("jsonl_cut", _write(root / "cut.jsonl", "".join(line + "\n" for line in lines[:-1]) + half),
          lost=2, reason="cut-off last line", intact=c["jsonl"])
    garbled = lines[:]
    garbled[30] = garbled[30].replace('{"step"', '{"step" 31,', 1)  # not JSON, its 2 keys still visible
    c.add("jsonl_garbled", _write(root / "garbled.jsonl", "".join(line + "\n" for line in garbled)),
          lost=2, reason="unparseable", intact=c["jsonl"])

    # a custom trainer's JSON lines: rows tagged by type, the step under its own name
    typed = [json.dumps({"type": "train", "grpo_step": s, "token_entropy": h, "train_reward": r})
             for s, h, r, _v in rows]
    c.add("jsonl_typed", _write(root / "typed.jsonl", "".join(line + "\n" for line in typed)))
    typed[20] = typed[20].replace('{"type"', '{"type" 21,', 1)  # not JSON, its 2 values still visible
    c.add("jsonl_typed_garbled", _write(root / "typed_garbled.jsonl", "".join(line + "\n" for line in typed)),
          lost=2, reason="unparseable", intact=c["jsonl_typed"])
    c.add("jsonl_nostep", _write(root / "nostep.jsonl", '{"type": "train", "loss": 0.5, "token_entropy": 0.4}\n' * 5))

    # tidy tables and other CSVs
    header = "run_id,step,metric,value,model,n_params,source\n"
    body = [f"tidy,{s},{m},{v},qwen2.5-7b,7000000000.0,x.log\n" for s, h, r, _v in rows
            for m, v in (("entropy", h), ("score", r))]
    c.add("tidy_csv", _write(root / "tidy.csv", header + "".join(body)))
    body_abc = body[:]
    body_abc[7] = body_abc[7].replace(body_abc[7].split(",")[3], "abc")
    c.add("tidy_abc", _write(root / "tidy_abc.csv", header + "".join(body_abc)), lost=1, reason="non-numeric",
          intact=c["tidy_csv"])
    export = "Step,wb - actor/entropy,wb - critic/score/mean\n" + "".join(
        f"{s},{h},{'oops' if s == 7 else r}\n" for s, h, r, _v in rows)
    c.add("wandb_csv", _write(root / "wandb_export.csv", export), lost=1, reason="non-numeric")
    long = "step,key,value\n" + "".join(f"{s},{k},{'n/a' if (s, k) == (9, 'actor/entropy') else v}\n"
                                         for s, h, r, _v in rows
                                         for k, v in (("actor/entropy", h), ("critic/score/mean", r)))
    c.add("long_csv", _write(root / "long.csv", long), lost=1, reason="non-numeric")
    hf = "".join("{'loss': 0.5, 'grad_norm': 1.0, 'learning_rate': 1e-06, 'entropy': %s, 'reward': %s, "
                 "'epoch': %.4f}\n" % (h, r, s / N_STEPS) for s, h, r, _v in rows)
    c.add("hf", _write(root / "hf_console.log", hf))
    c.add("hf_cut", _write(root / "hf_cut.log", hf[:hf.rindex("'reward'") + 4]), lost=6, reason="",
          note="the last record held 6 values; the cut leaves 4 whole and the start of a fifth")
    c.add("state_nohist", _write(root / "state" / "trainer_state.json", '{"global_step": 3}'))
    lab = root / "labrun"
    lab.mkdir(exist_ok=True)
    _write(lab / "run.json", '{"config": {"steps": 3}, "meta": ')
    _write(lab / "metrics.jsonl", "".join(jsonl_line(s, h, r) + "\n" for s, h, r, _v in rows))
    c.add("labrun_broken", lab)
    c.add("corrupt_parquet", _write_bytes(root / "corrupt.parquet", b"PAR1" + bytes(range(256)) * 4))
    c.add("state_broken", _write(root / "trainer_state.json", '{"log_history": [{"step": 1, "loss": 0.5},'))
    c.add("cfg_bad", _write(root / "config_bad.json", json.dumps(
        {"model_type": "llama", "hidden_size": "big", "num_hidden_layers": 2, "intermediate_size": 64,
         "vocab_size": 100, "num_attention_heads": 4})))
    model = root / "model_corrupt"
    model.mkdir(exist_ok=True)
    _write(model / "config.json", json.dumps(
        {"model_type": "llama", "hidden_size": 16, "num_hidden_layers": 1, "intermediate_size": 32,
         "vocab_size": 64, "num_attention_heads": 2, "num_key_value_heads": 2,
         "architectures": ["LlamaForCausalLM"]}))
    _write_bytes(model / "model.safetensors", struct.pack("<Q", 2 ** 62) + b"{}")  # header "too large"
    c.add("model_corrupt", model)
    c.add("rollouts", _write(root / "rollouts.jsonl", "".join(
        json.dumps({"prompt_id": i // 2, "prompt_ids": [1, 2], "response_ids": [3, 4 + i], "reward": i % 2}) + "\n"
        for i in range(4))))

    _build_tensorboard(c, rows)
    _build_wandb(c, rows)
    _build_trackers(c, rows)
    return c


def trackio_db(path: Path, rows, version: int = 2) -> Path:
    """A Trackio project database in trackio's documented layout (metrics, configs tables;
    ``PRAGMA user_version``), one ``metrics`` row per step."""
    import sqlite3

    con = sqlite3.connect(path)
    con.execute("CREATE TABLE metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, timestamp TEXT "
                "NOT NULL, run_name TEXT NOT NULL, step INTEGER NOT NULL, metrics TEXT NOT NULL)")
    con.execute("CREATE TABLE configs (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, run_name TEXT "
                "NOT NULL, config TEXT NOT NULL, created_at TEXT NOT NULL, UNIQUE(run_id))")
    for step, h, r, val in rows:
        metrics = {"actor/entropy": h, "critic/score/mean": r}
        if val is not None:
            metrics["val-core/gsm8k/acc/mean@1"] = val
        con.execute("INSERT INTO metrics (run_id, timestamp, run_name, step, metrics) VALUES (?, ?, ?, ?, ?)",
                    ("r1", "2026-01-01T00:00:00", "grpo-run", step, json.dumps(metrics).encode()))
    con.execute(f"PRAGMA user_version = {version}")
    con.commit()
    con.close()
    return path


def _build_trackers(c: Corpus, rows) -> None:
    """Compressed logs, and the tracker stores' damaged files."""
    import bz2
    import gzip
    import lzma

    root = c.root
    log = verl_log(rows).encode()
    c.add("verl_gz", _write_bytes(root / "verl_grpo.log.gz", gzip.compress(log, mtime=0)))
    cut_text = c["verl_cut"].read_bytes()
    c.add("verl_cut_gz", _write_bytes(root / "cut_mid_number.log.gz", gzip.compress(cut_text, mtime=0)),
          lost=1, reason="cut-off last line", intact=c["verl"])
    c.add("verl_nan_bz2", _write_bytes(root / "nan_inf.log.bz2", bz2.compress(c["verl_nan"].read_bytes())),
          lost=2, reason="non-finite", intact=c["verl"])
    c.add("jsonl_cut_xz", _write_bytes(root / "cut.jsonl.xz", lzma.compress(c["jsonl_cut"].read_bytes())),
          lost=2, reason="cut-off last line", intact=c["jsonl"])
    whole = gzip.compress(log, mtime=0)
    c.add("gz_cut", _write_bytes(root / "copied_while_writing.log.gz", whole[: len(whole) // 2]))
    c.add("zst_fake", _write_bytes(root / "not_zstd.log.zst", log))
    c.add("bz2_garbage", _write_bytes(root / "garbage.log.bz2", b"BZh9" + bytes(range(256)) * 8))
    db = trackio_db(root / "trackio_newer.db", rows, version=99)
    c.add("trackio_newer", db)
    intact = trackio_db(root / "trackio_intact.db", rows).read_bytes()
    c.add("trackio_cut", _write_bytes(root / "trackio_cut.db", intact[: len(intact) // 2]))
    (root / "run-bad").mkdir(exist_ok=True)
    c.add("swanlab_bad", _write_bytes(root / "run-bad" / "run-bad.swanlab", b":SWL\x00\x00\x09" + b"\xff" * 64))
    _build_clearml(c, rows)


def clearml_events(rows, task_id: str = "offline-corpus") -> list[bytes]:
    """The lines of a ClearML offline session's ``metrics.jsonl``: one JSON list of event
    requests per flushed batch (clearml ``Metrics._do_write_events``), here one batch per
    step, with ClearML's (title, series) as veRL's ClearMLLogger splits its keys."""
    lines = []
    for step, h, r, val in rows:
        pairs = [("actor", "entropy", h), ("critic", "score/mean", r)]
        if val is not None:
            pairs.append(("val-core", "gsm8k/acc/mean@1", val))
        batch = [{"timestamp": 1700000000000 + step, "type": "training_stats_scalar", "task": task_id, "iter": step,
                  "metric": title, "variant": series, "value": value, "method": "get"}
                 for title, series, value in pairs]
        lines.append((json.dumps(batch) + "\n").encode())
    return lines


def clearml_zip(path: Path, events: list[bytes], task_id: str = "offline-corpus") -> Path:
    """A ClearML offline session zip (``Task.close`` zips the session folder: task.json, metrics.jsonl)."""
    import zipfile

    task = {"id": task_id, "name": "clearml-grpo", "project_name": "verl-gsm8k", "type": "training",
            "hyperparams": {"Args": {"algorithm/adv_estimator": {"name": "algorithm/adv_estimator", "section": "Args",
                                                                 "type": "str", "value": "grpo", "description": ""}}},
            "offline_folder": f"/home/u/.clearml/cache/offline/{task_id}"}
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("metrics.jsonl", b"".join(events))
        z.writestr("task.json", json.dumps(task, indent=2))
        z.writestr("log.jsonl", b"")
    return path


def _build_clearml(c: Corpus, rows) -> None:
    import zipfile

    root = c.root
    events = clearml_events(rows)
    intact = clearml_zip(root / "offline-intact.zip", events)
    c.add("clearml", intact)
    k = 9  # step 10's batch: entropy, score and the validation (3 scalars)
    garbled = events[:k] + [events[k][:-4] + b"\x00\xff\n"] + events[k + 1:]  # its closing brackets overwritten
    c.add("clearml_garbled", clearml_zip(root / "offline-garbled.zip", garbled), lost=3, reason="unparseable events",
          intact=intact)
    data = intact.read_bytes()
    c.add("clearml_cut", _write_bytes(root / "offline-cut.zip", data[: len(data) // 2]))
    c.add("clearml_no_scalars", clearml_zip(root / "offline-noscalars.zip", []))
    with zipfile.ZipFile(root / "photos.zip", "w") as z:
        z.writestr("IMG_0001.jpg", b"\xff\xd8\xff")
    c.add("zip_other", root / "photos.zip")


def _build_tensorboard(c: Corpus, rows) -> None:
    try:
        payloads = tb_payloads(rows)
    except ImportError:
        return
    framed = [tfrecord(p) for p, _n in payloads]
    data = b"".join(framed)
    spans = _record_spans([len(f) for f in framed], 0)
    name = "events.out.tfevents.1700000000.corpus"

    def tb(dir_name: str, content: bytes, **kw) -> None:
        d = c.root / dir_name
        d.mkdir(exist_ok=True)
        c.add(dir_name, _write_bytes(d / name, content), **kw)

    tb("tb", data)
    k = len(framed) // 2                        # a record in the middle: one scalar
    a, b = spans[k]
    flipped = bytearray(data)
    flipped[a + 12 + (b - a - 16) // 2] ^= 0xFF   # a byte of its data: the data checksum fails
    tb("tb_flip", bytes(flipped), lost=payloads[k][1], reason="bad data checksum", intact=c["tb"])
    bad_len = bytearray(data)
    bad_len[a + 1] ^= 0x01                       # its length: the length checksum fails
    tb("tb_badlen", bytes(bad_len), lost=payloads[k][1], reason="bad length checksum", intact=c["tb"])
    half = len(data) // 2
    cut_k = next(i for i, (s, e) in enumerate(spans) if s < half < e)
    assert spans[cut_k][0] < half  # the cut falls inside a record: that record is lost
    tb("tb_cut", data[:half], lost=payloads[cut_k][1], reason="truncated", intact=c["tb"])
    tb("tb_garbage", bytes(range(256)) * 8)


def _build_wandb(c: Corpus, rows) -> None:
    try:
        payloads = wandb_payloads(rows)
    except ImportError:
        return
    from entropylaw.readers.leveldb_log import BLOCK_SIZE, write_log

    data = write_log([p for p, _n in payloads])
    assert len(data) < BLOCK_SIZE  # one block: every record is a single FULL chunk
    sizes = [7 + len(p) for p, _n in payloads]
    spans = _record_spans(sizes, 7)
    c.add("wandb", _write_bytes(c.root / "run-abc.wandb", data))
    k = 25                                      # history record of step 25
    a, b = spans[k]
    one_bit = bytearray(data)
    one_bit[a + 7 + (b - a - 7) // 2] ^= 0x10
    c.add("wandb_bit", _write_bytes(c.root / "run-bit.wandb", bytes(one_bit)), lost=payloads[k][1],
          reason="bad checksum", intact=c["wandb"])
    # 64 bytes randomised from the middle of record 30: it and the records the bytes reach are lost
    lo = spans[30][0] + 20
    hi = lo + 64
    rng = random.Random(64)
    noisy = bytearray(data)
    for i in range(lo, hi):
        noisy[i] = rng.randrange(256)
    hit = [i for i, (s, e) in enumerate(spans) if s < hi and e > lo]
    c.add("wandb_64", _write_bytes(c.root / "run-64.wandb", bytes(noisy)), lost=sum(payloads[i][1] for i in hit),
          reason="bad checksum", intact=c["wandb"], note=f"records {hit}")
    c.add("wandb_header", _write_bytes(c.root / "run-bad.wandb", b"hello world, not wandb" * 4))
    c.add("wandb_bit_gz", _write_bytes(c.root / "run-bitgz.wandb.gz", gzip.compress(bytes(one_bit))),
          lost=payloads[k][1], reason="bad checksum", intact=c["wandb"])
    c.add("wandb_gz_cut", _write_bytes(c.root / "run-cut.wandb.gz", gzip.compress(data)[:-40]))


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _write_bytes(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


if __name__ == "__main__":
    corpus = build(sys.argv[1] if len(sys.argv) > 1 else "badinput-corpus")
    for key, item in corpus.inputs.items():
        print(f"{key:16s} {item.path}" + (f"  lost {item.lost} ({item.reason})" if item.lost is not None else ""))
