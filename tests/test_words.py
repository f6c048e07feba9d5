"""Words a newcomer reads: counts agree with their nouns, training steps are whole, a reason
says what happened, and a figure's title is never cut at the figure's edge."""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import entropylaw as el
from entropylaw.errors import EntropyLawError, EntropyLawWarning
from entropylaw.fit.early import EarlyPrediction
from entropylaw.terminal import count

ROOT = Path(__file__).resolve().parents[1]
ONE_SIZE = ROOT / "data" / "real-sizes" / "qwen2.5-7b-instruct_grpo-lora_gsm8k.csv"


def test_a_count_agrees_with_its_noun():
    assert [count(n, "run") for n in (0, 1, 2)] == ["0 runs", "1 run", "2 runs"]


@pytest.mark.skipif(not ONE_SIZE.exists(), reason="no data/real-sizes")
def test_one_run_of_one_size_is_said_in_the_singular():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EntropyLawWarning)
        text = str(el.scale(el.load(str(ONE_SIZE))))
    assert text.startswith("[[Scale]] 1 run, 1 size; ")
    assert "describes 0 sizes (none)" in text and "size(s)" not in text and "1 runs" not in text


def test_a_window_ends_at_a_whole_step():
    steps = np.arange(101, 602, 50)  # a run resumed at step 101, logged every 50 steps
    H = 0.05 + np.exp(-(steps - 101) / 200)
    pairs = pd.DataFrame({"step": steps, "H": H, "R": 0.8 - 0.2 * np.exp(H)})
    with pytest.raises(EntropyLawError) as err:
        EarlyPrediction(fit_frac=0.0911).fit(pairs)  # 101 + 0.0911 * 500 = 146.55
    assert "(steps 101..146) holds 1 paired point;" in str(err.value), str(err.value)


def test_the_forecast_says_plainly_what_it_could_not_measure():
    import inspect

    from entropylaw.fit.forecast import methods

    source = inspect.getsource(methods)
    assert "is a guess" not in source and "misses by as much as the score's noise" in source


def test_a_dropped_pair_at_a_cut_line_is_said_in_words():
    from entropylaw.readers.verl_console import CUT

    assert "cut-off pair" != CUT and "line" in CUT


def test_a_long_run_name_in_a_title_stays_inside_the_figure():
    import matplotlib

    matplotlib.use("Agg")
    from entropylaw.draw.law import plot_fit
    from entropylaw.fit.law import EntropyLawFit

    H = 0.05 + np.exp(-np.arange(40) / 8)
    fit = EntropyLawFit().fit(H, 0.8 - 0.2 * np.exp(H) + 0.01 * np.sin(np.arange(40)))
    fit.run_id_ = "verl_grpo_deepseek-llm-7b-chat_gsm8k_mi300_a-long-suffix-of-a-sweep"
    fig = plot_fit(fit)
    fig.canvas.draw()
    title = fig.axes[0]._left_title
    box, page = title.get_window_extent(), fig.bbox
    assert page.x0 <= box.x0 and box.x1 <= page.x1, (box, page)
    assert fit.run_id_ == "".join(title.get_text().split("\n")[:-1]).rstrip(":")  # wrapped, not cut
    assert title.get_text().endswith("R = -a·exp(H) + b")


# strings that are data, not text a user reads (a key's name, a pattern): (path, text); none at present
PLURAL_DATA: set[tuple[str, str]] = set()
HEDGE = r"[A-Za-z]\((e|ie)?s\)"  # run(s), process(es), entr(ies)


def _hedged_plurals(source: str) -> list[tuple[int, str]]:
    """(line, text) of each string constant, docstrings aside, that hedges a noun as ``noun(s)``."""
    import ast
    import re

    tree = ast.parse(source)
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
            and re.search(HEDGE, n.value)]


def test_a_message_says_its_count_with_the_noun_agreeing_not_noun_s():
    """Every module of the package, every folder (readers, figures, the CLI's help, the lab ...)."""
    package = ROOT / "entropylaw"
    paths = sorted(package.rglob("*.py"))
    assert {p.parent.name for p in paths} >= {"readers", "figure_sets", "cli", "lab", "integrations", "fit", "page"}
    found = [f"{path.relative_to(ROOT)}:{line}: {text!r}" for path in paths
             for line, text in _hedged_plurals(path.read_text(encoding="utf-8"))
             if (str(path.relative_to(ROOT)), text) not in PLURAL_DATA]
    assert not found, "\n".join(found)
    assert sorted(_hedged_plurals('"""a doc with run(s)"""\nx = f"{n} point(s)"\ny = "2 process(es)"\n')) == [
        (2, " point(s)"), (3, "2 process(es)")]


def test_the_readers_notes_agree_with_their_counts():
    from entropylaw.readers.accounts import IngestReport
    from entropylaw.readers.damage import Region, charge

    one, two = IngestReport("a.wandb"), IngestReport("b.wandb")
    charge(one, [Region(100, "truncated", 20, 3)], [0], ".wandb record")
    charge(two, [Region(100, "truncated", 20, 3), Region(300, "bad checksum", 20, 9)], [2, 0], ".wandb record")
    assert "unreadable in 1 region at byte 100 (truncated);" in one.notes[-1], one.notes
    assert one.notes[-1].endswith("; 1 region of unknown size counted as one row each"), one.notes
    assert "unreadable in 2 regions at byte 100 (truncated), byte 300" in two.notes[-1], two.notes
    assert two.dropped == {"damaged .wandb record: truncated": 2,
                           "damaged .wandb record: bad checksum (rows unknown)": 1}


def test_the_counts_of_a_forecast_and_a_probe_agree_with_their_nouns():
    import torch

    from entropylaw.fit.forecast.curves import LAW, TooFewPoints, fit_profile
    from entropylaw.probing.advantages import advantages

    with pytest.raises(TooFewPoints, match=r"^1 point for "):
        fit_profile(LAW, np.array([1.0]), np.array([0.5]))
    with pytest.warns(EntropyLawWarning, match=r"^1 prompt group has a single response"):
        advantages(torch.tensor([1.0, 0.0, 1.0]), [0, 0, 1])
