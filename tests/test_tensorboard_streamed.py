"""The streamed TensorBoard reader gives exactly the table an independent read gives: the events read
with tensorboard's own ``EventFileLoader``, their scalars put in wall-time order, through the same
:func:`finalize`. Also with records cut across the reader's windows (a tiny ``CHUNK``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("tensorboard")

from tensorboard.backend.event_processing.event_file_loader import EventFileLoader  # noqa: E402
from tensorboard.compat.proto import event_pb2, summary_pb2  # noqa: E402
from tensorboard.summary.writer.event_file_writer import EventFileWriter  # noqa: E402
from tensorboard.util import tensor_util  # noqa: E402

import entropylaw.readers.tfrecord as tfrecord  # noqa: E402
from entropylaw.readers.common import RawRun, finalize  # noqa: E402
from entropylaw.readers.names import model_from_filename  # noqa: E402
from entropylaw.readers.tensorboard import read_tensorboard  # noqa: E402


def _write(folder, start, steps, wall0, rng):
    w = EventFileWriter(str(folder))
    for s in range(start, start + steps):
        wall = wall0 + s + rng.random() * 0.1
        for tag, value in [("actor/entropy", 1.0 / (1 + s)), ("critic/score/mean", 0.3 + s / 100)]:
            v = summary_pb2.Summary.Value(tag=tag, simple_value=value)
            w.add_event(event_pb2.Event(step=s, wall_time=wall, summary=summary_pb2.Summary(value=[v])))
        # a TF2 scalar: a one-element tensor of the scalars plugin
        meta = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"))
        t = summary_pb2.Summary.Value(tag="val/acc", metadata=meta,
                                      tensor=tensor_util.make_tensor_proto(np.float32(s / 100)))
        w.add_event(event_pb2.Event(step=s, wall_time=wall, summary=summary_pb2.Summary(value=[t])))
        if s % 7 == 0:  # a histogram and an image: not scalars, skipped
            hist = summary_pb2.HistogramProto(min=0, max=1, num=3000, bucket_limit=list(np.linspace(0, 1, 500)),
                                              bucket=list(rng.random(500)))
            img = summary_pb2.Summary.Image(height=8, width=8, colorspace=3, encoded_image_string=rng.bytes(5000))
            w.add_event(event_pb2.Event(step=s, wall_time=wall, summary=summary_pb2.Summary(value=[
                summary_pb2.Summary.Value(tag="w", histo=hist), summary_pb2.Summary.Value(tag="img", image=img)])))
    w.close()


def _reference(run_dir) -> RawRun:
    rows = []
    for file in sorted(run_dir.glob("events.out.tfevents.*")):
        for event in EventFileLoader(str(file)).Load():
            for v in event.summary.value:
                if v.HasField("simple_value"):
                    rows.append((event.wall_time, event.step, v.tag, float(v.simple_value)))
                elif v.HasField("tensor") and v.metadata.plugin_data.plugin_name == "scalars":
                    rows.append((event.wall_time, event.step, v.tag, float(tensor_util.make_ndarray(v.tensor))))
    rows.sort(key=lambda r: r[0])  # stable: ties keep file order
    raw = RawRun(run_dir.name, str(run_dir), steps=np.array([r[1] for r in rows], dtype=np.int64),
                 keys=np.array([r[2] for r in rows], dtype=object),
                 values=np.array([r[3] for r in rows], dtype=np.float64))
    raw.report.read(len(rows))
    raw.meta = {"model": model_from_filename(run_dir.name)}
    return raw


@pytest.mark.parametrize("chunk", [tfrecord.CHUNK, 100, 4099])
def test_the_streamed_reader_gives_the_table_of_tensorboards_own_loader(tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(tfrecord, "CHUNK", chunk)
    rng = np.random.default_rng(3)
    run = tmp_path / "grpo-run"
    _write(run, 0, 60, 1000.0, rng)
    _write(run, 40, 30, 2000.0, rng)  # a resumed second file: steps restart at 40
    [raw] = read_tensorboard(tmp_path)
    ref = _reference(run)
    assert raw.steps.dtype == np.int64 and raw.keys.dtype == object and raw.values.dtype == np.float64
    assert raw.rows() == ref.rows()
    got, want = finalize(raw), finalize(ref)
    pd.testing.assert_frame_equal(got, want)
    assert raw.report.line() == ref.report.line()
    assert len(got) == 60 * 3 + 30 * 3 - 20 * 3  # steps 40..59 of the first file superseded


def test_damage_is_found_the_same_whatever_the_window(monkeypatch):
    """Records and damaged regions (a flipped bit, a broken length, bytes inserted, a cut tail) do not
    depend on where the reader's windows of the file end."""
    rng = np.random.default_rng(5)
    payloads = [rng.bytes(int(n)) for n in rng.choice([0, 3, 40, 300, 2000], size=40)]
    data = bytearray(tfrecord.write_records(payloads))
    data[700] ^= 4
    data[3000:3000] = rng.bytes(77)
    data[len(data) // 2 + 3] ^= 1
    data = bytes(data[:-30])

    def read():
        records, regions = tfrecord.read_records(data)
        return records, [(r.offset, r.reason, r.bytes_lost, r.position, r.payload) for r in regions]

    whole = read()
    assert len(whole[1]) >= 3 and whole[1][-1][1] == tfrecord.TRUNCATED
    for chunk, scan in [(50, 5), (1000, 64), (4096, 1)]:
        monkeypatch.setattr(tfrecord, "CHUNK", chunk)
        monkeypatch.setattr(tfrecord, "SCAN", scan)
        assert read() == whole
