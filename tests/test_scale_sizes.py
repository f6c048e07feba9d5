"""One reader of model sizes for the API and the CLI: `el.scale(df, predict=["32B"])`,
`ScaleResult.predict("32B")` and `scale --predict 32B,72B` read a size alike, and a size
without its unit ("32") is refused in one line by each."""

import json
import warnings
from pathlib import Path

from conftest import run_cli

import pytest

import entropylaw as el
from entropylaw.errors import EntropyLawError, EntropyLawWarning
from entropylaw.readers.model_size import MIN_BARE, parse_size, parse_sizes

ROOT = Path(__file__).resolve().parents[1]
SIZES = ROOT / "data" / "real-sizes"


@pytest.mark.parametrize("text, value", [("32B", 32e9), ("32b", 32e9), ("0.5B", 0.5e9), ("350M", 350e6),
                                         ("28K", 28e3), ("1T", 1e12), ("7e9", 7e9), ("7000000000", 7e9),
                                         (7e9, 7e9), (27792, 27792.0), ("Qwen2.5-14B-Instruct", 14e9)])
def test_a_size_is_read_with_its_unit_or_as_the_whole_count(text, value):
    assert parse_size(text) == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize("text", ["32", "0.5", 72, "9999"])
def test_a_size_without_its_unit_is_refused(text):
    with pytest.raises(EntropyLawError, match="a size needs its unit") as err:
        parse_size(text, "`predict`")
    assert str(err.value).startswith("`predict` ") and "\n" not in str(err.value)
    assert float(text) < MIN_BARE


@pytest.mark.parametrize("text", ["-7B", "0B", "nan", "seven", "inf"])
def test_a_size_that_is_no_count_is_refused(text):
    with pytest.raises(EntropyLawError, match="expected a positive parameter count"):
        parse_size(text)


@pytest.mark.parametrize("text", ["1e30", "2000T", 1e16])
def test_a_size_no_model_has_is_refused(text):
    # 1e30 was read, extrapolated 20 decades and printed as "1e+21B: no prediction"
    with pytest.raises(EntropyLawError, match="expected a parameter count up to 1000T") as err:
        parse_size(text, "`predict`")
    assert str(err.value).startswith("`predict` ") and "\n" not in str(err.value)


def test_scale_refuses_an_absurd_predict_size_in_one_line():
    out = run_cli("scale", str(SIZES), "--predict", "1e30")
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "--predict" in lines[0] and "up to 1000T" in lines[0] and "Traceback" not in out.stderr


def test_several_sizes_in_one_text_or_a_list():
    assert parse_sizes("32B,72B") == parse_sizes("32B, 72B") == parse_sizes(["32B", 72e9]) == [32e9, 72e9]
    assert parse_sizes(None) == [] and parse_sizes(14e9) == [14e9]
    with pytest.raises(EntropyLawError, match="^'32': a size needs its unit"):
        parse_sizes("32B,32")


@pytest.fixture(scope="module")
def sizes_table():
    if not SIZES.is_dir():
        pytest.skip("no data/real-sizes")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EntropyLawWarning)
        return el.load(str(SIZES))


def test_the_api_takes_the_cli_sizes(sizes_table):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EntropyLawWarning)
        res = el.scale(sizes_table, predict=["32B", "72B"])
    assert [p["size"] for p in res.to_dict()["predictions"]] == ["32B", "72B"]
    again = el.scale(sizes_table, predict=["32B", "32B", 32e9, "72B"])  # one size asked twice is said once
    assert [p["size"] for p in again.to_dict()["predictions"]] == ["32B", "72B"]
    assert res.predict("32B") == res.predict(32e9) == res.predict("32e9")
    text = str(res)
    assert "32B: final score" in text and "72B: final score" in text
    assert res.to_dict(predict=[])["predictions"] == [] and "32B: final score" not in res.report(predict=[])
    with pytest.raises(EntropyLawError, match="^`predict` '32': a size needs its unit"):
        res.predict("32")
    with pytest.raises(EntropyLawError, match="^`predict` '32': a size needs its unit"):
        el.scale(sizes_table, predict=["32"])  # refused before any fitting


def _scale(*args):
    return run_cli("scale", str(SIZES), "-q", *args)


@pytest.mark.skipif(not SIZES.is_dir(), reason="no data/real-sizes")
def test_the_cli_refuses_a_size_without_a_unit_in_one_line():
    out = _scale("--predict", "32")
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and "--predict: '32': a size needs its unit (32B, 32M, 32K)" in lines[0], out.stderr


@pytest.mark.skipif(not SIZES.is_dir(), reason="no data/real-sizes")
def test_the_cli_takes_sizes_separated_by_commas_as_one_flag():
    one = _scale("--predict", "32B,72B", "--json")
    two = _scale("--predict", "32B", "--predict", "72B", "--json")
    assert one.returncode == 0 and two.returncode == 0, one.stderr + two.stderr
    first, second = json.loads(one.stdout), json.loads(two.stdout)
    assert [p["size"] for p in first["predictions"]] == ["32B", "72B"]
    assert first["predictions"] == second["predictions"]


def _series(models, keys, algorithms=None):
    """Runs that follow the law, one per (model, score key); a and b grow with log10 of the size."""
    import numpy as np

    from entropylaw import table
    from entropylaw.readers.model_size import params_from_name

    rng = np.random.default_rng(0)
    tabs = []
    for model, key, alg in zip(models, keys, algorithms or [""] * len(models)):
        n = params_from_name(model)
        a, b = 0.2 + 0.05 * np.log10(n / 1e8), 0.7 + 0.08 * np.log10(n / 1e8)
        steps = np.arange(0, 200, 4)
        H = 0.1 + np.exp(-steps / 50)
        R = b - a * np.exp(H) + rng.normal(0, 0.004, len(steps))
        tabs.append(table.from_records([(int(s), table.ENTROPY, h) for s, h in zip(steps, H)]
                                       + [(int(s), key, r) for s, r in zip(steps, R)], run_id=model, model=model,
                                       n_params=n, algorithm=alg))
    return table.concat(tabs)


def test_the_coefficient_law_is_one_benchmarks_and_a_mix_of_families_is_said():
    """a and b fitted across runs scored on different benchmarks (the final-score law refused them,
    the coefficient law went on and drew a line through GSM8K validation and a training reward):
    refused with the count. Runs of several families on one benchmark: fitted, and the families said."""
    qwen = ["Qwen2.5-0.5B-Instruct", "Qwen2.5-1.5B-Instruct", "Qwen2.5-3B-Instruct", "Qwen2.5-7B-Instruct"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EntropyLawWarning)
        one = el.scale(_series(qwen, ["val/gsm8k"] * 4))
        two = el.scale(_series(qwen, ["val/gsm8k", "val/gsm8k", "val/math", "val/math"]))
        mixed = el.scale(_series(["Qwen2.5-0.5B-Instruct", "Llama-3.2-1B-Instruct", "Qwen2.5-3B-Instruct",
                                  "Llama-3.1-8B-Instruct"], ["val/gsm8k"] * 4))
    assert one.coefficient_law is not None and not any("model families" in n for n in one.notes)
    assert one.coefficient_law.lines_["a"]["slope"] == pytest.approx(0.05, abs=0.01)
    assert two.coefficient_law is None
    assert two.coefficient_refused.startswith("the runs are scored on 2 different benchmarks")
    assert "coefficient law (a, b, ceiling vs log10 N): refused: the runs are scored on 2" in str(two)
    assert mixed.coefficient_law is not None
    assert any(n.startswith("the runs come from 3 model families (llama-3.1, llama-3.2, qwen2.5)") for n in mixed.notes)


def test_a_size_law_is_one_recipes_runs_of_two_algorithms_are_refused():
    """GRPO at 0.5B-3B and PPO at 7B were one size series: both laws were fitted, and the PPO run's
    lower score was read as what size does (the figure draws one algorithm's runs; `algorithms`
    refuses a mix of models). Both laws refused, the algorithms and their runs named."""
    qwen = ["Qwen2.5-0.5B-Instruct", "Qwen2.5-1.5B-Instruct", "Qwen2.5-3B-Instruct", "Qwen2.5-7B-Instruct"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EntropyLawWarning)
        one = el.scale(_series(qwen, ["val/gsm8k"] * 4, ["grpo"] * 4))
        mixed = el.scale(_series(qwen, ["val/gsm8k"] * 4, ["grpo", "grpo", "grpo", "ppo"]))
    assert one.coefficient_law is not None and one.score_law is not None
    assert mixed.coefficient_law is None and mixed.score_law is None
    said = ("the runs come from 2 algorithms (grpo: Qwen2.5-0.5B-Instruct, Qwen2.5-1.5B-Instruct, "
            "Qwen2.5-3B-Instruct; ppo: Qwen2.5-7B-Instruct)")
    assert mixed.score_refused.startswith(said)
    assert mixed.coefficient_refused.startswith("the runs come from 2 algorithms (named under the final-score law)")
    assert "algorithm" not in mixed.to_dict()["runs"][0]  # the JSON's runs as they were


def test_a_trillion_parameters_reads_as_one(capsys):
    """--predict 1e12 printed "1e+03B" and its ratio "1.1e+02x"."""
    from entropylaw.cli.main import main

    assert main(["scale", str(SIZES), "--predict", "1e12,1.5T"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "1T: final score" in out and "1.5T: final score" in out and "e+0" not in out, out
    assert "115x the largest size fitted" in out
