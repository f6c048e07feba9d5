"""Golden outputs of the commands users read, the report page's text included.

Every number, integers included, is compared within :data:`REL` of the golden's value or, for a
decimal, one unit of its last printed digit, whichever is larger; everything else must be equal to the
letter. The tolerance is there because a fit's last bits follow the BLAS kernels of the CPU
(OpenBLAS picks Haswell, SkylakeX or Prescott code at run time), and a step found by
extrapolating a power law to a target moves with them (1801 on one kernel set, 1802 on
another). ``make test`` runs this file a second time under ``OPENBLAS_CORETYPE=Prescott``.

Regenerate only for a deliberate change of behaviour:
    ENTROPYLAW_GOLDEN=write .venv/bin/python -m pytest tests/test_golden.py
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import run_cli

import pytest

# prints numbers: run again under another BLAS kernel set (make test, OPENBLAS_CORETYPE=Prescott)
pytestmark = pytest.mark.printed

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"
SIZES = "data/real-sizes"
RUN = "data/real-sizes/qwen2.5-1.5b-instruct_grpo-lora_gsm8k.csv"
COMMANDS = {
    "demo.txt": ["demo", "--no-report"],
    "forecast.json": ["forecast", RUN, "--fit-frac", "0.15", "--json"],
    "forecast_compare.txt": ["forecast", RUN, "--fit-frac", "0.25", "--compare"],
    "scale.json": ["scale", SIZES, "--predict", "32B", "--predict", "72B", "--json"],
    "scale.txt": ["scale", SIZES, "--predict", "32B", "--predict", "72B"],
}
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
REL = 2e-3  # 0.2 %: far above the spread between kernel sets, far below any change of behaviour


def close(x: float, golden: float, unit: float = 0.0) -> bool:
    """``x`` within REL of ``golden``, or within ``unit`` (the golden's last printed digit)."""
    return abs(x - golden) <= max(REL * abs(golden), 1.01 * unit, 1e-12)


def _run(args):
    out = run_cli(*args)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _same_json(a, b, path="$"):
    if isinstance(a, dict) and isinstance(b, dict):
        assert sorted(a) == sorted(b), f"{path}: keys {sorted(set(a) ^ set(b))}"
        for k in a:
            _same_json(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), f"{path}: {len(a)} items, golden {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            _same_json(x, y, f"{path}[{i}]")
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) \
            and not isinstance(b, bool):
        assert close(float(a), float(b), 1e-9), f"{path}: {a} != golden {b}"
    else:
        assert a == b, f"{path}: {a!r} != golden {b!r}"


def _fits(text, limit=120):
    """A command's text, piped: no line over 120 characters, none ending in spaces."""
    assert all(len(ln) <= limit and ln == ln.rstrip() for ln in text.splitlines()), \
        [ln for ln in text.splitlines() if len(ln) > limit or ln != ln.rstrip()][:2]


def _same_text(a, b):
    assert NUMBER.sub("#", a) == NUMBER.sub("#", b), "the text around the numbers changed"
    for x, y in zip(NUMBER.findall(a), NUMBER.findall(b)):
        mant, _, exp = y.lower().partition("e")
        # an integer has no last digit to round: only REL (so 4 runs against 5 is a change)
        unit = 10.0 ** (int(exp or 0) - len(mant.split(".")[1])) if "." in mant else 0.0
        assert close(float(x), float(y), unit), f"{x} != golden {y}"


def page_text(html: str) -> str:
    """What a reader reads on the report page: its text, each figure as [img] (the pictures'
    bytes depend on matplotlib's version; their numbers are in the text around them)."""
    html = re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", html, flags=re.S)
    html = html.replace("<wbr>", "")  # a place a long name may break: no space in the text
    html = re.sub(r"<img[^>]*>", "[img]", html)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def test_report_page_equals_its_golden(tmp_path):
    _run(["report", SIZES, "--out", str(tmp_path)])
    out = page_text((tmp_path / "report.html").read_text())
    path = GOLDEN / "report_sizes.txt"
    if os.environ.get("ENTROPYLAW_GOLDEN") == "write":
        path.write_text(out + "\n")
    _same_text(out, path.read_text().rstrip("\n"))


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_output_equals_its_golden(name):
    out = _run(COMMANDS[name])
    path = GOLDEN / name
    if os.environ.get("ENTROPYLAW_GOLDEN") == "write":
        path.write_text(out)
    golden = path.read_text()
    if name.endswith(".json"):
        _same_json(json.loads(out), json.loads(golden))
    else:
        _fits(out)
        _same_text(out, golden)


def _probe_inputs(d: Path) -> None:
    """A tiny random policy and twelve rollouts, fixed by their seeds (the probe's CLI test's inputs)."""
    from _probe_inputs import rollout_rows, write_jsonl

    from entropylaw.probing.model import tiny_model

    tiny_model("qwen2", vocab=120, hidden=16, layers=1, seed=0).save_pretrained(d / "model")
    write_jsonl(d / "roll.jsonl", rollout_rows(120))


def test_probe_summary_equals_its_golden(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    _probe_inputs(tmp_path)
    out = subprocess.run([sys.executable, "-m", "entropylaw.cli.main", "probe", "--model", "model", "--rollouts",
                          "roll.jsonl", "--out", "out", "--dtype", "float64", "--whatif", "none,steer,clip_cov",
                          "--no-progress"], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    summary.pop("memory_gib")  # this process's measured peak: not a result
    path = GOLDEN / "probe_summary.json"
    if os.environ.get("ENTROPYLAW_GOLDEN") == "write":
        path.write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
        (GOLDEN / "probe.txt").write_text(out.stdout)
    _same_json(summary, json.loads(path.read_text()))
    _fits(out.stdout)
    _same_text(out.stdout, (GOLDEN / "probe.txt").read_text())


def test_the_comparison_allows_kernel_noise_and_nothing_more():
    _same_text("step 1802, lower 0.5772", "step 1801, lower 0.5777")  # two BLAS kernel sets
    _same_text("n = 4 runs", "n = 4 runs")
    for changed, golden in [("step 1810", "step 1801"), ("lower 0.5877", "lower 0.5777"), ("n = 5 runs", "n = 4 runs"),
                            ("1.6e-03", "1.4e-03"), ("ceiling 0.85", "ceiling 0.83")]:
        with pytest.raises(AssertionError):
            _same_text(changed, golden)
    with pytest.raises(AssertionError, match="text around the numbers"):
        _same_text("step 1801 (power)", "step 1801 (exp)")
    _same_json({"k": 1802, "x": 0.5772}, {"k": 1801, "x": 0.5777})
    for changed in [{"k": 1810, "x": 0.5772}, {"k": 1801, "x": 0.59}, {"k": 1801, "x": True}]:
        with pytest.raises(AssertionError):
            _same_json(changed, {"k": 1801, "x": 0.5777})
