"""entropylaw.fileio: atomic files and directories (also under SIGTERM), strict JSON."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from entropylaw.errors import EntropyLawError
from entropylaw.fileio import atomic_dir, atomic_write, dumps, jsonable, write_json, write_text


def _names(d):
    return sorted(p.name for p in d.iterdir())


def test_atomic_write_replaces_whole_file_and_keeps_suffix(tmp_path):
    target = tmp_path / "t.parquet"
    target.write_text("old")
    with atomic_write(target) as tmp:
        assert tmp.parent == tmp_path and tmp.suffix == ".parquet" and tmp != target
        tmp.write_text("new")
        assert target.read_text() == "old"          # not visible before the block ends
    assert target.read_text() == "new" and _names(tmp_path) == ["t.parquet"]
    umask = os.umask(0)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask


def test_atomic_write_leaves_old_file_and_no_temp_on_error(tmp_path):
    target = tmp_path / "t.txt"
    target.write_text("old")
    with pytest.raises(KeyError):
        with atomic_write(target, fsync=True) as tmp:
            tmp.write_text("half")
            raise KeyError("boom")
    assert target.read_text() == "old" and _names(tmp_path) == ["t.txt"]


@pytest.mark.parametrize("kind", ["file", "dir"])
def test_sigterm_removes_the_temporary_output(tmp_path, kind):
    """A real SIGTERM during the write: exit status 143, no target, no temporary left.

    The child sleeps in short steps, as a process at work runs Python code: the kernel may hand
    the signal to another of its threads (numpy's BLAS threads), and then one long
    ``time.sleep`` is not cut short; Python acts on the signal at its next bytecode."""
    target = tmp_path / ("out.txt" if kind == "file" else "report")
    opener = "atomic_write" if kind == "file" else "atomic_dir"
    body = "tmp.write_text('half')" if kind == "file" else "(tmp / 'report.html').write_text('half')"
    script = textwrap.dedent(f"""
        import sys, time
        from entropylaw.fileio import {opener}
        with {opener}({str(target)!r}) as tmp:
            {body}
            print("writing", flush=True)
            for _ in range(300):
                time.sleep(0.1)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "writing"
    assert len(list(tmp_path.iterdir())) == 1      # the temporary output exists now
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 128 + signal.SIGTERM
    assert list(tmp_path.iterdir()) == []


def test_sigterm_handler_restored_after_block(tmp_path):
    with atomic_write(tmp_path / "x") as tmp:
        assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
        tmp.write_text("x")
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_atomic_dir_new_appears_whole(tmp_path):
    out = tmp_path / "rep"
    with atomic_dir(out) as tmp:
        (tmp / "a.html").write_text("a")
        (tmp / "sub").mkdir()
        (tmp / "sub" / "b.png").write_bytes(b"b")
        assert not out.exists()
    assert (out / "a.html").read_text() == "a" and (out / "sub" / "b.png").read_bytes() == b"b"
    assert _names(tmp_path) == ["rep"]


def test_atomic_dir_existing_keeps_other_files_and_error_leaves_it_untouched(tmp_path):
    out = tmp_path / "rep"
    out.mkdir()
    (out / "mine.txt").write_text("keep")
    (out / "a.html").write_text("old")
    with atomic_dir(out) as tmp:
        (tmp / "a.html").write_text("new")
    assert (out / "a.html").read_text() == "new" and (out / "mine.txt").read_text() == "keep"
    with pytest.raises(RuntimeError):
        with atomic_dir(out) as tmp:
            (tmp / "a.html").write_text("broken")
            raise RuntimeError
    assert (out / "a.html").read_text() == "new" and _names(tmp_path) == ["rep"]
    (tmp_path / "f").write_text("")
    with pytest.raises(EntropyLawError, match="exists and is not a directory"):
        with atomic_dir(tmp_path / "f"):
            pass


def test_jsonable_against_a_hand_written_expectation():
    obj = {"f": np.float32(0.25), "nan": np.nan, "inf": -np.inf, "arr": np.array([[1, 2], [3, 4]]),
           "t": (1, np.int8(2)), "b": np.bool_(False), 3: "int key", "s": "x", "none": None}
    assert jsonable(obj) == {"f": 0.25, "nan": None, "inf": None, "arr": [[1, 2], [3, 4]], "t": [1, 2],
                             "b": False, "3": "int key", "s": "x", "none": None}
    text = dumps(obj)
    assert json.loads(text)["arr"] == [[1, 2], [3, 4]] and "NaN" not in text and "Infinity" not in text
    assert type(jsonable(np.float64(1.5))) is float and type(jsonable(np.int64(7))) is int


def test_write_helpers(tmp_path):
    write_json(tmp_path / "a.json", {"x": np.nan}, indent=1)
    assert json.loads((tmp_path / "a.json").read_text()) == {"x": None}
    write_text(tmp_path / "b.txt", "é")
    assert (tmp_path / "b.txt").read_text(encoding="utf-8") == "é"


@pytest.mark.parametrize("args, said", [
    (["figures", "{runs}", "--out", "{afile}/figs"], "cannot create the output folder {afile}/figs: Not a directory (ENOTDIR): {afile} is a file"),
    (["report", "{runs}", "--out", "{afile}/rep"], "cannot create the output folder {afile}/rep: Not a directory (ENOTDIR): {afile} is a file"),
    (["ingest", "{runs}", "-o", "{afile}/t.csv"], "cannot write the output file {afile}/t.csv: Not a directory (ENOTDIR): {afile} is a file"),
    (["fit", "{runs}", "--plot", "{afile}/f.png"], "cannot write the output file {afile}/f.png: Not a directory (ENOTDIR): {afile} is a file"),
    (["probe", "--model", "{model}", "--rollouts", "{runs}", "--out", "{afile}/p"],
     "cannot create the output folder {afile}/p: Not a directory (ENOTDIR): {afile} is a file"),
])
def test_an_output_that_cannot_be_written_says_what_was_being_done(tmp_path, capsys, args, said):
    """`figures --out /proc/x` said only "/proc/x: No such file or directory (ENOENT)": not what was
    being done. The one check of an output (fileio.check_writable) names it, in one line, exit 2."""
    import pandas as pd

    from entropylaw.cli.main import main

    paths = {"afile": tmp_path / "afile", "runs": tmp_path / "runs.csv", "model": tmp_path / "model"}
    paths["afile"].write_text("")
    paths["model"].mkdir()
    pd.DataFrame({"run_id": "r", "step": [0, 1, 2, 3], "key": "entropy", "value": [1.0, 0.8, 0.6, 0.5]}).to_csv(
        paths["runs"], index=False)
    assert main([a.format(**paths) for a in args]) == 2
    assert capsys.readouterr().err == f"entropylaw: error: {said.format(**paths)}\n"
    assert paths["afile"].is_file()
