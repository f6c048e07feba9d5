"""``rank`` and ``watch`` on narrow terminals and long sweeps: every line within the width,
every run told from the others, no number parted from its name, no interval split in two."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from entropylaw.cli.main import main
from entropylaw.fit.forecast import rank as rk
from entropylaw.terminal import shorts, wrap

ROOT = Path(__file__).resolve().parents[1]
VERL = ROOT / "data" / "real" / "verl_grpo_deepseek-llm-7b-chat_gsm8k_mi300.parquet"
INTERVAL = re.compile(r"\[-?\d[\d.]*, [-+]?\d[\d.]*\]")  # on one line


def _fake(run_id, centre, regime="saturation", law=None, seed=0):
    """A forecast as rank reads it (its final draws, its regime), without fitting anything."""
    draws = np.random.default_rng(seed).normal(centre, 0.01, 200)
    method = SimpleNamespace(final={"no_forecast": None})
    return SimpleNamespace(run_id=run_id, target_key="val/math", final_draws=draws, final_point=float(centre),
                           conf=0.9, decision={"method": "m", "threshold": 0.01, "point": 0.01}, default="m",
                           methods={"m": method}, regime={"name": regime}, run_last=None, window_end=0.0,
                           final_observed=None, fit_frac=None, law_reasons=law)


def _ranking(fakes, step=None):
    return rk.rank({f.run_id: f for f in fakes}, step=step)


def test_rank_at_60_columns_gives_each_run_its_name_whole_on_a_line_of_its_own(monkeypatch):
    """At 60 columns a row without a note was wider than the screen: a TypeError (its note None
    appended under it); the names cut to 12 characters were also alike (verl_~l-data twice)."""
    monkeypatch.setenv("COLUMNS", "60")
    names = ["verl_ppo_deepseek-llm-7b-chat_gsm8k_mi300", "verl_ppo_qwen2.5-0.5b-instruct_gsm8k_resp512_verl-data",
             "verl_ppo_qwen2.5-0.5b-instruct_gsm8k_resp256_verl-data"]
    text = str(_ranking([_fake(n, 0.7 - 0.05 * i, seed=i) for i, n in enumerate(names)]))
    lines = text.splitlines()
    assert max(map(len, lines)) <= 60, text
    for i, n in enumerate(names, 1):
        k = next(j for j, line in enumerate(lines) if line.split()[:2] == [str(i), n])  # the name, whole
        assert INTERVAL.search(lines[k + 1]), lines[k + 1]  # its numbers under it, their interval whole


def test_names_alike_at_both_ends_are_cut_apart():
    names = ["verl_ppo_deepseek-llm-7b-chat_gsm8k_mi300", "verl_ppo_qwen2.5-0.5b-instruct_gsm8k_resp512_verl-data",
             "verl_ppo_qwen2.5-0.5b-instruct_gsm8k_resp256_verl-data"]
    cut = shorts(names, 12)
    assert len(set(cut)) == 3 and max(map(len, cut)) <= 12, cut
    assert "512" in cut[1] and "256" in cut[2]


def test_names_of_one_family_alike_at_their_ends_keep_what_follows_their_shared_start():
    """A sweep over model sizes: the names' ends are alike (-instruct_grpo-lora_gsm8k), so cut
    from their end or middle they read qwen2.5-0~ora_gsm8k (0.5b? 0.5 of what?)."""
    sizes = ["0.5b", "1.5b", "3b", "7b", "14b"]
    cut = shorts([f"qwen2.5-{s}-instruct_grpo-lora_gsm8k" for s in sizes], 19)
    assert all(f"{s}-" in c and len(c) <= 19 for s, c in zip(sizes, cut)), cut


def test_a_sweep_of_27_runs_at_80_columns_keeps_one_line_a_run(monkeypatch):
    """Every run of a sweep in take-off, the law not describing any: the tags went under each row
    (54 lines for 27 runs) and the law's line named all 27 runs; now the tags most runs carry are
    said once with their rows, and the runs that end at one step are their rows."""
    monkeypatch.setenv("COLUMNS", "80")
    fakes = [_fake(f"grpo_grpo_clip_lr1e-05_epoch{i % 3}_train_batch{64 << i % 3}__run{i:02d}", 0.6 - 0.004 * i,
                   regime="take-off" if i != 12 else "saturation", law=["too few points (2; a trend needs 4)"], seed=i)
             for i in range(27)]
    text = str(_ranking(fakes))
    lines = text.splitlines()
    assert max(map(len, lines)) <= 80, text
    rows = [line for line in lines if re.match(r"\s*\d+\s+\S", line) and INTERVAL.search(line)]
    assert len(rows) == 27 and not any("take-off" in r or "law does not apply" in r for r in rows), text
    assert "take-off (rows 1-12, 14-27):" in text and "law does not apply (every run):" in text, text
    # the rows and a few lines under them (54 rows and 73 lines before; 2 more since a row kept below the prune
    # cut says why: rank_keep)
    assert len(lines) <= 27 + 19, text


def test_one_run_live_says_the_step_its_score_is_forecast_to():
    text = " ".join(str(_ranking([_fake("run-a", 0.6)], step=(99.0, "as far ahead as it has run"))).split())
    assert "final score is at step 99, where it is forecast to" in text and "its last step" not in text, text


def test_wrapping_keeps_an_interval_whole():
    text = ("  gain (logit-drift): continuing from step 1120 to step 2239 adds +0.9 [-0.6, +2.1] points; "
            "logit-drift 0.7052 [0.6641, 0.7412]; law+entropy 0.6941 [0.678, 0.7084]")
    for width in range(40, 121):  # wherever the line breaks
        out = wrap(text, width)
        assert len(INTERVAL.findall(out)) == 3 and max(map(len, out.splitlines())) <= width, (width, out)


@pytest.mark.parametrize("width", ["60", "80"])
def test_watch_at_narrow_widths_keeps_the_laws_fields_whole(width, monkeypatch, capsys):
    """At 80 columns the law's line was wrapped at its spaces: "points" at a line's end, its count
    at the next one's start; the forecast's intervals parted likewise."""
    monkeypatch.setenv("COLUMNS", width)
    assert main(["watch", str(VERL), "--plain", "--max-refreshes", "1", "--n-boot", "10"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(map(len, lines)) <= int(width), out
    assert any(re.search(r"points \d+", line) for line in lines), out
    assert re.search(r"ceiling [\d.]+ \[[\d.]+, [\d.]+\]", out), out
    assert not any(line.rstrip().endswith(("points", "ceiling", "R²")) for line in lines), out
    law = [line for line in lines if line.startswith("  law")]
    assert law and "R = " in law[0], out


def test_watch_live_display_at_80_columns_keeps_each_forecast_on_one_line(monkeypatch):
    """The live display's label column was as wide as "gain (logit-drift)": the forecasts beside it
    wrapped inside their intervals, and the panel's title cut the log's path short."""
    pytest.importorskip("rich")
    import io

    from rich.console import Console

    from entropylaw.cli import watch
    from entropylaw.cli.main import build_parser

    monkeypatch.setenv("COLUMNS", "80")
    args = build_parser().parse_args(["watch", str(VERL), "--n-boot", "10"])
    snap = watch.snapshot(args, VERL)
    console = Console(file=io.StringIO(), width=80, record=True)
    console.print(watch.render_rich(snap, [], "12:00:00", VERL))
    text = console.export_text()
    for method, _, ci, _ in snap["forecast"]:
        assert re.search(rf"{re.escape(method)}.* \[{ci[0]:.4g}, {ci[1]:.4g}\]", text), text
    assert VERL.name in text.splitlines()[0], text


def test_a_column_of_labels_is_as_wide_as_the_labels(monkeypatch):
    """Runs named with long ids shown by what sets them apart ('live0xx'): rank's and forecast's run
    columns stayed as wide as the ids could be (at 95 columns, 'live0xx' then 37 blanks)."""
    from entropylaw.fit.forecast.text import line_table

    monkeypatch.setenv("COLUMNS", "95")
    ids = [f"grpo_clip_lr1e-05_epoch3_train_batch128__live{i}xx" for i in range(5)]
    lines = str(_ranking([_fake(n, 0.7 - 0.05 * i, seed=i) for i, n in enumerate(ids)])).splitlines()
    assert next(ln for ln in lines if ln.lstrip().startswith("#")).startswith(" #  run      final"), lines
    assert any(ln.startswith(" 2  live1xx  0.650") for ln in lines), lines
    rows = [{"run": r, "final": "0.749 [0.668, 0.835]", "call": "continue"} for r in ids]
    out = line_table(rows, [("run", "run"), ("final [90 %]", "final"), ("call", "call")], width=60).splitlines()
    assert out[0].startswith("run      final") and out[1].startswith("live0xx  0.749"), out
    # the room a label leaves keeps the columns a whole id would have pushed out at 80
    rows = [dict(r, to="300", gain="+11.3 [+5.6, +17.7]", window="<= 120", call="undecided") for r in rows]
    cols = [("run", "run"), ("window", "window"), ("final [90 %]", "final"), ("to step", "to"), ("gain", "gain"),
            ("call", "call")]
    out = line_table(rows, cols, width=80)
    assert "left out at 80" not in out and all(len(ln) <= 80 for ln in out.splitlines()), out
