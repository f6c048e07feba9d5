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
