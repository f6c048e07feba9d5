"""The report forecasts a sweep's runs as ``entropylaw forecast`` does: pooled with their sweep,
with what the log says of the run's plan (entropylaw.results.cache)."""

from __future__ import annotations

import json
import math

import pytest

import entropylaw as el
from entropylaw.fit.forecast.core import DEFAULT, forecast_table
from entropylaw.results.cache import LAW_METHOD, forecast_runs


def _sweep(root, rates=(0.9, 1.0, 1.1, 1.2)):
    for i, c in enumerate(rates):
        folder = root / f"grpo_lr{i}e-6"
        folder.mkdir(parents=True)
        rows = []
        for step in range(1, 101):
            rows.append({"type": "train", "grpo_step": step, "token_entropy": 0.9 / step ** 0.3,
                         "train_reward": min(0.9, 0.01 * step)})
            if step % 5 == 0 or step == 1:
                z = math.log(0.04 / 0.96) + c * math.log1p(step)
                rows.append({"type": "eval", "grpo_step": step, "answer_accuracy": round(1 / (1 + math.exp(-z)), 4),
                             "num_examples": 1024})
        (folder / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        (folder / "config.json").write_text(json.dumps({"n_grpo_steps": 200}))


def test_the_reports_forecasts_of_a_sweep_are_the_forecast_commands(tmp_path):
    _sweep(tmp_path / "runs")
    df = el.load(str(tmp_path / "runs"), warn=False)
    computed, _ = forecast_runs(df, sorted(df["run_id"].unique()), 0.2, 60, 0.9)
    table = forecast_table(df, fit_frac=0.2, methods=[DEFAULT, LAW_METHOD], n_boot=60, conf=0.9, seed=0)
    for rid, (_, fc) in computed.items():
        assert fc.regime.get("sweep_runs") == 3, rid  # pooled with the 3 others, as the command pools them
        # a backtest: the log's last step, where its plan (200, from its config) lies past the log's end
        assert fc.decision["gain"]["to_step"] == 100 and "200" in fc.decision["gain"]["to_step_source"]
        assert fc.decision["gain"] == pytest.approx(table[rid].decision["gain"])
        assert fc.final_point == pytest.approx(table[rid].final_point)
    # one run asked for alone, from the sweep's table, is pooled with its peers too
    one = el.forecast(df, "grpo_lr0e-6", fit_frac=0.2, methods=[DEFAULT, LAW_METHOD], n_boot=60, seed=0)
    assert one.regime.get("sweep_runs") == 3 and one.final_point == pytest.approx(table["grpo_lr0e-6"].final_point)


def test_the_reports_forecast_reads_the_logs_timing_and_follows_a_changed_config(tmp_path):
    from entropylaw import table

    recs = []
    for i, c in enumerate((0.9, 1.0, 1.1)):
        for step in range(1, 101):
            recs += [(step, "entropy", 0.9 / step ** 0.3, f"r{i}"), (step, "timing_s/step", 30.0, f"r{i}")]
            if step % 5 == 0 or step == 1:
                z = math.log(0.04 / 0.96) + c * math.log1p(step)
                recs.append((step, "val/math", 1 / (1 + math.exp(-z)), f"r{i}"))
    df = table.stack([table.from_records([r[:3] for r in recs if r[3] == rid], run_id=rid)
                      for rid in ("r0", "r1", "r2")])
    computed, _ = forecast_runs(df, ["r0", "r1", "r2"], 0.2, 40, 0.9)
    cost = computed["r0"][1].decision["cost"]
    assert cost is not None and cost["per_step"] == 30.0 and "the log's timing" in cost["source"]
    # the same values under another config: another forecast, not the one cached for the first
    _sweep(tmp_path / "runs")
    first = forecast_runs(el.load(str(tmp_path / "runs"), warn=False), ["grpo_lr0e-6"], 0.2, 40, 0.9)[0]
    for folder in (tmp_path / "runs").iterdir():  # two training files read in order: the data changes
        (folder / "config.json").write_text(json.dumps({"n_grpo_steps": 200, "shuffle": False,
                                                        "train_files": ["d/gsm8k.parquet", "d/math.parquet"]}))
    again = forecast_runs(el.load(str(tmp_path / "runs"), warn=False), ["grpo_lr0e-6"], 0.2, 40, 0.9)[0]
    assert [bool(x["grpo_lr0e-6"][1].regime.get("data_switch")) for x in (first, again)] == [False, True]


def test_the_report_and_the_screen_name_each_forecasts_regime_beside_its_number(tmp_path):
    """The page's forecast cells and the demo's screen say take-off and collapse risk where the
    forecast is in them (its words on hover), and nothing in saturation."""
    from entropylaw import table
    from entropylaw.page.forecasts import forecast_table_html
    from entropylaw.results.columns import SCREEN, screen_line
    from entropylaw.results.rows import forecast_rows_of

    _sweep(tmp_path / "runs")
    df = el.load(str(tmp_path / "runs"), warn=False)
    recs = []  # a run whose entropy rose four-fold in the window (0.14 -> 0.6), its score level at 0.3
    for step in range(1, 121):
        h = 0.14 if step < 30 else 0.6
        recs.append((step, "entropy", h * (1 + 0.01 * math.sin(step))))
        if step % 5 == 0 or step == 1:
            recs.append((step, "val/math", 0.30 + 0.01 * math.sin(step)))
    df = table.stack([df, table.from_records(recs, run_id="unstable")])
    ids = ["grpo_lr0e-6", "unstable"]
    computed, _ = forecast_runs(df, ids, 0.4, 40, 0.9)
    rows = forecast_rows_of([{"run_id": r, "number": i + 1, "label": r} for i, r in enumerate(ids)],
                            {r: v for r, v in computed.items()})
    got = {r["run_id"]: r for r in rows}
    assert got["grpo_lr0e-6"]["regime"] == "take-off" and "pooled" in got["grpo_lr0e-6"]["regime_note"]
    assert got["unstable"]["regime"] == "collapse risk" and "entropy rose" in got["unstable"]["regime_note"]
    page = forecast_table_html(rows)
    assert page.count('class="regime"') == 2 and ">take-off</span>" in page and ">collapse risk</span>" in page
    mark = next(c for c in SCREEN if c.key == "regime").screen
    assert [mark({"fc": r}) for r in rows] == ["^", "v"]
    assert mark({"fc": {**got["unstable"], "forecast": float("nan")}}) == " "  # no forecast: no interval to widen
    line = screen_line(SCREEN, {"run_id": "unstable", "fc": got["unstable"]})
    assert len(line) <= 120 and "v" in line
    # saturation says nothing
    calm = forecast_rows_of([{"run_id": "grpo_lr0e-6"}], {"grpo_lr0e-6": (computed["grpo_lr0e-6"][0],
                                                                         _saturated(computed["grpo_lr0e-6"][1]))})
    assert calm[0]["regime"] == "" and 'class="regime"' not in forecast_table_html(calm)


def _saturated(fc):
    from dataclasses import replace

    return replace(fc, regime={"name": "saturation"}, warnings=[])
