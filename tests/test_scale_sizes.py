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
