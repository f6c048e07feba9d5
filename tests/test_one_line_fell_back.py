"""``forecast``'s one-line view of many runs marks a final that is last-value's ``*``, as ``demo``
marks it (one rule: :func:`~entropylaw.fit.forecast.line_notes.fell_back`), and says the last value a
take-off moved it from. Before, a run whose window ended at 0.520 read "0.793 [0.527, 0.826]" beside
the curves' forecasts, unmarked, and no line said the final was last-value's at all (a take-off was
left out of that line)."""

from __future__ import annotations

import re

from conftest import run_cli
from test_rank import _takeoff_sweep

import pytest

import entropylaw as el
from entropylaw.fit.forecast.line_notes import fell_back, moved_from
from entropylaw.results import rows as result_rows

pytestmark = pytest.mark.printed


def _finals(text):
    """Each run's final cell, by its row of the one-line table."""
    return dict(re.findall(r"^(run\d\d) +(\S+ \[\S+, \S+\]\*?) ", text, re.M))


def test_a_take_offs_last_value_moved_by_its_climb_is_marked_with_the_value_it_moved_from(tmp_path):
    # at 25 %, run00 and run01 (the sweep's leaders) end their windows inside the take-off: logit-drift cannot
    # run, last-value is recommended, and the sweep's climb carries it on from 0.520 to 0.793
    fcs = el.forecast_all(_takeoff_sweep(), fit_frac=0.25, n_boot=100)
    fell = {rid for rid, fc in fcs.items() if fell_back(fc)}
    assert fell == {"run00", "run01"} and all(fcs[r].regime_name == "take-off" for r in fell)
    assert moved_from(fcs["run00"]) == pytest.approx(0.52)
    finals = _finals(str(fcs))
    assert set(finals) == set(fcs) and {r for r, cell in finals.items() if cell.endswith("*")} == fell, finals
    assert finals["run00"].startswith("0.793 [") and not finals["run02"].endswith("*")
    text = str(fcs).replace("\n  ", " ")
    assert "*: last-value (run00, run01): the default method cannot run on the window (--full says why); the final " \
           "is the window's last value carried on, except where the run's regime moves it (a take-off's climb " \
           "carried on as such runs' did; a collapse, to where such runs ended), from the window's last value: " \
           "run00 from 0.520, run01 from 0.520" in text, text
    # demo's screen marks by the same rule
    assert result_rows.fell_back is fell_back

    # the CLI on a folder of the sweep says the same
    (tmp_path / "sweep").mkdir()
    for rid, part in _takeoff_sweep().groupby("run_id", observed=True):
        part.to_parquet(tmp_path / "sweep" / f"{rid}.parquet")
    out = run_cli("forecast", str(tmp_path / "sweep"), "--fit-frac", "0.25", "--n-boot", "100")
    assert out.returncode == 0, out.stderr
    assert {r for r, cell in _finals(out.stdout).items() if cell.endswith("*")} == fell, out.stdout
    assert "run00 from 0.520, run01 from 0.520" in out.stdout.replace("\n  ", " ")


def test_a_final_not_last_values_is_not_marked_and_none_says_nothing():
    """A window the default runs on: no mark, no line."""
    fcs = el.forecast_all(_takeoff_sweep(), fit_frac=0.15, n_boot=100)
    assert len(fcs) == 6 and not any(fell_back(fc) for fc in fcs.values())
    assert "]*" not in str(fcs) and "*: last-value" not in str(fcs)


def test_data_real_sizes_half_b_run_is_marked_as_on_the_demos_screen():
    """The demo's row 7 (qwen2.5-0.5b at 15 %: ``0.518 [0.49, 0.78]*^``) is the one-line view's marked row."""
    out = run_cli("forecast", "data/real-sizes", "--fit-frac", "0.15")
    assert out.returncode == 0, out.stderr
    marked = [line.split()[0] for line in out.stdout.splitlines() if "]* " in line]
    assert marked == ["0.5b"], out.stdout
    assert "qwen2.5-0.5b-instruct_grpo-lora_gsm8k from 0.371" in out.stdout.replace("\n  ", " ")


def _sizes(lines, cell):
    """The model size (``0.5b``) of each line holding ``cell``."""
    return {re.search(r"(\d+(?:\.\d+)?b)\b", line).group(1) for line in lines if cell in line}


def test_a_no_forecast_of_last_values_is_marked_in_the_one_line_view_as_on_the_demos_screen():
    """data/real-sizes at 7 %: last-value runs for 4 runs, its interval too wide for 3 of them. The demo's
    screen read "no forecast*" for those 3 where the one-line view read "no forecast", unmarked, and its
    footnote named only the run whose number it marked. Now one rule marks both, and one footnote says both."""
    out = run_cli("forecast", "data/real-sizes", "--fit-frac", "0.07")
    assert out.returncode == 0, out.stderr
    rows = out.stdout.splitlines()[2:7]
    assert _sizes(rows, "no forecast*") == {"0.5b", "3b", "14b"}, out.stdout
    assert _sizes(rows, "]*") == {"1.5b"} and "no forecast " not in "\n".join(rows), out.stdout
    text = out.stdout.replace("\n  ", " ")
    assert ("*: last-value (qwen2.5-0.5b-instruct_grpo-lora_gsm8k, qwen2.5-1.5b-instruct_grpo-lora_gsm8k, "
            "qwen2.5-14b-instruct_grpo-lora_gsm8k and 1 more): the default method cannot run on the window (--full "
            "says why); beside 'no forecast': last-value's interval is too wide as well; the final is the window's "
            "last value carried on, except where") in text, out.stdout
    # a "no forecast" was moved from nothing: only the number shown is said to be
    assert text.count(" from 0.") == 1 and "qwen2.5-1.5b-instruct_grpo-lora_gsm8k from 0.583" in text

    screen = el.overview(el.load("data/real-sizes", warn=False), sources=["data/real-sizes"], fit_frac=0.07,
                         report_to=None).lines()
    table = [line for line in screen if re.match(r" ?\d+ qwen", line)]
    assert len(table) == 5 and _sizes(table, "no forecast*") == {"0.5b", "3b", "14b"}, screen
    assert _sizes(table, "]*") == {"1.5b"}, screen
    said = re.sub(r"\s+", " ", " ".join(screen))
    assert ("*: last-value: the default method cannot run on the window; beside 'no forecast': last-value's "
            "interval is too wide as well.") in said, screen


def test_the_demos_screen_says_no_mark_where_no_row_is_marked():
    """The footnote stands where a row is marked, as ^ and v do; the call's line always."""
    screen = el.overview(el.load("data/real-sizes", warn=False), sources=["data/real-sizes"], fit_frac=0.3,
                         report_to=None).lines()
    assert len([line for line in screen if re.match(r" ?\d+ qwen", line)]) == 5, screen  # the rows looked at
    assert not any("]*" in line or "forecast*" in line for line in screen), screen
    assert not any(line.startswith("*:") for line in screen), screen
    assert "call: stop / continue: the gain's interval lies below / above the noise." in screen
