"""Every command's ``--json`` has one shape, whatever the number of runs read: a script that
parses a directory's output parses a file's too. ``fit ONE --json`` printed the run's object
and ``fit DIR --json`` ``{"fits": [...]}``; ``forecast`` an object against a list; ``predict``
an object against ``{"predictions": [...], "left_out"}``. One run is now the one-element case
of the shape several runs get."""

from __future__ import annotations

import json

import numpy as np
import pytest

import entropylaw as el
from entropylaw import table
from entropylaw.cli.main import main

SIZES = {"r1": 0.36e9, "r2": 1.3e9}


def _runs(tmp_path):
    """``one/`` holds run r1, ``two/`` runs r1 and r2: law-obeying runs, a score every 10 steps."""
    rng = np.random.default_rng(0)
    steps = np.arange(1, 201)
    H = 0.05 + np.exp(-steps / 60)
    for rid, a, b in (("r1", 0.3, 0.8), ("r2", 0.25, 0.85)):
        rec = [(int(s), "entropy", float(h)) for s, h in zip(steps, H)]
        rec += [(int(s), "val/gsm8k", float(b - a * np.exp(H[s - 1]) + 0.005 * rng.standard_normal()))
                for s in steps[9::10]]
        df = table.from_records(rec, run_id=rid, model="Qwen2.5", n_params_nonembedding=SIZES[rid])
        for d in ("one", "two") if rid == "r1" else ("two",):
            (tmp_path / d).mkdir(exist_ok=True)
            table.write(df, tmp_path / d / f"{rid}.parquet")
    return tmp_path / "one", tmp_path / "two"


def shape(doc):
    """The JSON's skeleton: its type, an object's keys, and the keys of the per-run objects a
    list holds (at the top, or under a key), never their number."""
    if isinstance(doc, list):
        return ("list", sorted({k for d in doc if isinstance(d, dict) for k in d}))
    if isinstance(doc, dict):
        return ("object", {k: shape(v) if isinstance(v, list) and v and isinstance(v[0], dict) else type(v).__name__
                           for k, v in doc.items() if k != "row_accounts"}, "row_accounts" in doc)
    return type(doc).__name__


COMMANDS = {
    "fit": [],
    "predict": ["--fit-frac", "0.3"],
    "forecast": ["--fit-frac", "0.3", "--n-boot", "20"],
    "rank": ["--fit-frac", "0.3", "--n-boot", "20"],
    "summary": [],
    "ingest": [],
    "scale": [],
}


def _json(capsys, command, path, extra):
    assert main([command, str(path), *extra, "--json", "-q"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_one_run_and_two_runs_give_the_same_json_shape(tmp_path, capsys, command):
    one, two = _runs(tmp_path)
    doc1 = _json(capsys, command, one, COMMANDS[command])
    doc2 = _json(capsys, command, two, COMMANDS[command])
    assert shape(doc1) == shape(doc2), (command, shape(doc1), shape(doc2))


@pytest.mark.parametrize("command, key", [("fit", "fits"), ("predict", "predictions"), ("forecast", None)])
def test_one_run_is_the_one_element_case(tmp_path, capsys, command, key):
    one, two = _runs(tmp_path)
    doc1 = _json(capsys, command, one, COMMANDS[command])
    doc2 = _json(capsys, command, two, COMMANDS[command])
    rows1, rows2 = (doc1, doc2) if key is None else (doc1[key], doc2[key])
    assert [d["run_id"] for d in rows1] == ["r1"] and [d["run_id"] for d in rows2] == ["r1", "r2"]
    assert set(rows1[0]) == set(rows2[0])


@pytest.mark.filterwarnings("ignore::entropylaw.errors.EntropyLawWarning")  # windows of 6 points: said, not tested
def test_the_api_collections_to_dict_have_one_shape(tmp_path):
    one, two = _runs(tmp_path)
    for make in (lambda df: el.forecast_all(df, fit_frac=0.3, methods=["exp-saturation"], n_boot=20),
                 lambda df: el.predict_all(df, fit_frac=0.3)):
        doc1, doc2 = (make(el.load(str(p), warn=False)).to_dict() for p in (one, two))
        assert shape(doc1) == shape(doc2)
