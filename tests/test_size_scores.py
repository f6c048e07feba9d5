"""The final-score size law and `entropylaw scale` on a size series."""

import json
from pathlib import Path

from conftest import run_cli

import numpy as np
import pandas as pd
import pytest
from scipy import special

from entropylaw import table
from entropylaw.errors import EntropyLawError
from entropylaw.fit.size_scores import FinalScoreLaw
from entropylaw.fit.size_series import scale_series

# prints numbers: run again under another BLAS kernel set (make test, OPENBLAS_CORETYPE=Prescott)
pytestmark = pytest.mark.printed

ROOT = Path(__file__).resolve().parents[1]
SIZES = ROOT / "data" / "real-sizes"
N5 = np.array([0.5e9, 1.5e9, 3e9, 7e9, 14e9])


def test_logit_linear_recovered_and_inside_range():
    u = np.log10(N5)
    y = special.expit(-12.0 + 1.4 * u)
    law = FinalScoreLaw().fit(N5, y)
    assert law.combined_ == ["logit-linear", "saturating", "logit-ceiling"]
    assert law.params_["logit-linear"]["beta"] == pytest.approx(1.4, rel=1e-6)
    assert law.params_["logit-ceiling"]["c"] == pytest.approx(1.0, abs=1e-6)  # no bend: its ceiling at the top
    truth = float(special.expit(-12.0 + 1.4 * np.log10(72e9)))
    p = law.predict(72e9)
    assert 0 <= p["final_score_lo"] <= truth <= p["final_score_hi"] <= 1
    assert p["forms"]["logit-linear"]["final_score"] == pytest.approx(truth, abs=1e-9)


def test_saturating_recovered_when_the_series_saturates():
    y = 0.9 - 40.0 * N5 ** -0.2  # a ceiling of 0.9, well below 1
    law = FinalScoreLaw().fit(N5, y)
    assert law.params_["saturating"]["C"] == pytest.approx(0.9, abs=2e-3)
    p = law.predict(70e9)
    assert p["forms"]["saturating"]["final_score"] == pytest.approx(0.9 - 40.0 * 70e9 ** -0.2, abs=2e-3)
    assert max(law.weights_, key=law.weights_.get) != "logit-linear"  # the line misses the held-out top
    assert p["final_score_lo"] <= 0.9 - 40.0 * 70e9 ** -0.2 <= p["final_score_hi"]


def test_logit_ceiling_recovered():
    y = 0.8 * special.expit(-9.0 + 1.0 * np.log10(N5))
    law = FinalScoreLaw().fit(N5, y)
    assert law.params_["logit-ceiling"]["c"] == pytest.approx(0.8, abs=2e-3)
    assert law.params_["logit-ceiling"]["beta"] == pytest.approx(1.0, abs=0.02)


def test_hostile_sizes():
    with pytest.raises(EntropyLawError, match="at least 2 model sizes"):
        FinalScoreLaw().fit([7e9, 7e9], [0.9, 0.91])
    two = FinalScoreLaw().fit([1e9, 7e9], [0.6, 0.9])
    p = two.predict(32e9)
    assert p["final_score_lo"] is None and "no interval" in p["note"] and two.combined_ == ["logit-linear"]
    assert "no interval" in two.report() and two.to_dict()["spread"] is None
    same = FinalScoreLaw().fit([1e9, 1e9, 3e9, 7e9], [0.6, 0.62, 0.8, 0.9])  # replicates of one size
    assert len(same.sizes_) == 3 and same.scores_[0] == pytest.approx(0.61)
    assert "extrapolation downward" in same.predict(0.1e9)["note"]
    with pytest.raises(EntropyLawError, match="parameter count"):
        FinalScoreLaw().fit([1e9, np.nan, 3e9], [0.6, 0.7, 0.8])


def _rows(**change):
    base = {"run_id": ["s", "m", "l", "xl"], "n_params": [0.5e9, 1.5e9, 3e9, 7e9], "target_key": ["val/g"] * 4,
            "final_score": [0.5, 0.7, 0.8, 0.9], "final_step": [100.0] * 4, "plateau": [0.5, 0.7, 0.8, 0.9],
            "lo": [0.0] * 4, "hi": [0.5, 0.7, 0.8, 0.9], "note": [None] * 4,
            "trust": ["good fit", "weak fit", "law does not apply", "law does not apply"],
            "a": [0.3, 0.2, -0.1, -0.2], "b": [0.9, 1.0, 0.7, 0.8], "ceiling": [0.6, 0.8, 0.8, 1.0]}
    base.update(change)
    return pd.DataFrame(base)


def test_coefficient_law_refused_below_three_described_sizes():
    res = scale_series(_rows())
    assert res.coefficient_law is None
    assert "describes 2 sizes" in res.coefficient_refused and "3B (law does not apply)" in res.coefficient_refused
    assert res.to_dict()["coefficient_law"] == {"refused": res.coefficient_refused}
    # every run described, too few sizes: no "Left out:" with nothing after it
    two = scale_series(_rows(trust=["good fit"] * 4, a=[0.3] * 4, n_params=[0.5e9, 0.5e9, 1.5e9, 1.5e9]))
    assert two.coefficient_refused.endswith("the coefficient law needs 3.")
    ok = scale_series(_rows(trust=["good fit", "weak fit", "good fit", "law does not apply"]))
    assert ok.coefficient_law is not None and "xl" not in ok.coefficient_law.labels_
    c = ok.predict(72e9)
    assert 0 <= c["ceiling_lo"] <= c["ceiling_hi"] <= 1  # held inside the score's range


def test_different_benchmarks_and_rewards():
    res = scale_series(_rows(target_key=["val/g", "val/g", "val/math", "val/g"]))
    assert res.score_law is None and "different benchmarks" in res.score_refused
    assert res.predict(32e9)["final_score"] is None
    neg = scale_series(_rows(final_score=[-0.5, 0.1, 0.5, 0.8], plateau=[-0.5, 0.1, 0.5, 0.8],
                             lo=[-1.0] * 4, hi=[-0.5, 0.1, 0.5, 0.8]))
    assert neg.bounds == (-1.0, 1.0)
    p = neg.predict(72e9)
    assert -1 <= p["final_score_lo"] <= p["final_score"] <= p["final_score_hi"] <= 1
    with pytest.raises(EntropyLawError, match="no model size"):
        scale_series(_rows(n_params=[0.5e9, np.nan, 3e9, 7e9]), strict=True)
    with pytest.raises(EntropyLawError, match="no model size"):
        scale_series(_rows(n_params=[np.nan] * 4))
    left = scale_series(_rows(n_params=[0.5e9, np.nan, 3e9, 7e9]))  # the run of unknown size is left out, said
    assert len(left.runs) == 3 and any(n.startswith("left out (1 run)") and "no model size" in n for n in left.notes)


def test_published_nonembedding_and_size_order_from_the_shipped_series():
    import entropylaw as el

    df = el.load([str(SIZES)])
    meta = table.runs(df).set_index("model")
    assert meta.loc["qwen2.5-7b-instruct", "n_params_nonembedding"] == pytest.approx(6.53e9)
    with pytest.warns(Warning):
        res = el.scale(df)
    assert list(res.runs["n_params"]) == sorted(res.runs["n_params"])
    assert res.coefficient_law is None and res.coefficient_refused.startswith("the law describes 2 sizes")


def test_cli_scale_json_predictions():
    out = run_cli("scale", str(SIZES), "--predict", "32B", "--predict", "72B", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert [p["size"] for p in doc["predictions"]] == ["32B", "72B"]
    for p in doc["predictions"]:
        assert p["n_params"] > 0 and 0 <= p["final_score_lo"] <= p["final_score"] <= p["final_score_hi"] <= 1
    assert set(doc["coefficient_law"]) == {"refused"}
    # why the law does not describe a run, beside its verdict and ceiling: --json has no warnings to say it
    seven = next(r for r in doc["runs"] if r["run_id"].startswith("qwen2.5-7b"))
    assert seven["trust"] == "law does not apply" and any("entropy rises" in w for w in seven["trust_reasons"])
    assert all(r["trust_reasons"] or r["trust"] == "good fit" for r in doc["runs"])
    one = run_cli("scale", str(SIZES / "qwen2.5-7b-instruct_grpo-lora_gsm8k.csv"), "--predict", "32B")
    assert one.returncode == 0 and "refused: the final-score law needs at least 2 model sizes" in one.stdout
    assert "Traceback" not in one.stderr


def test_final_point_says_when_the_last_validation_is_early():
    from entropylaw.fit.size_series import final_point

    final, step, plateau, note = final_point([0, 10, 20, 30], [0.2, 0.5, 0.6, 0.62], last_step=100)
    assert (final, step) == (0.62, 30.0) and "70 steps before its last logged step 100" in note
    assert final_point([0, 10, 20, 30], [0.2, 0.5, 0.6, 0.62], last_step=31)[3] is None


def test_cli_unknown_size_is_one_line(tmp_path):
    recs = []
    for run, top in (("alpha", 0.6), ("beta", 0.8)):
        recs += [(s, "val/gsm8k", top - 0.3 * np.exp(-s / 30)) for s in range(0, 200, 10)]
        recs += [(s, "entropy", 0.1 + np.exp(-s / 40)) for s in range(0, 200)]
        table.from_records(recs, run_id=run).to_csv(tmp_path / f"{run}.csv", index=False)
        recs = []
    out = run_cli("scale", str(tmp_path))
    assert out.returncode == 2 and "no model size" in out.stderr and "--params" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


def test_a_sizeless_run_among_several_is_not_told_to_take_params(tmp_path):
    """`--params` sizes every run read: the advice for one sizeless run of a series must not be
    "give it with --params N" (it made the whole series that one size: "the runs have 1 (7B)"); nor
    "ingest such a run on its own" while `--params RUN=SIZE` sizes each run named."""
    left = scale_series(_rows(n_params=[0.5e9, np.nan, 3e9, 7e9]))
    note = next(n for n in left.notes if n.startswith("left out (1 run)"))
    assert "with `params` RUN=SIZE, once per run" in note and "`params` N alone gives every run read one size" in note
    with pytest.raises(EntropyLawError, match=r"^4 runs \(\w+, \w+, \w+ and 1 more\): no model size in their") as err:
        scale_series(_rows(n_params=[np.nan] * 4))
    assert "gives every run read one size" in str(err.value)
    for run in ("alpha", "beta"):
        recs = [(s, "val/gsm8k", 0.7 - 0.3 * np.exp(-s / 30)) for s in range(0, 200, 10)]
        recs += [(s, "entropy", 0.1 + np.exp(-s / 40)) for s in range(0, 200)]
        table.from_records(recs, run_id=run).to_csv(tmp_path / f"{run}.csv", index=False)
    out = run_cli("scale", str(tmp_path))
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
    assert "2 runs (alpha, beta)" in out.stderr and "--params N alone gives every run read one size" in out.stderr
    # RUN=SIZE, repeatable, sizes each run: it is the advice, first (`--params N` would size both alike)
    assert "give each such run its size with --params RUN=SIZE, once per run (e.g. alpha=7B)" in out.stderr
    assert out.stderr.index("RUN=SIZE") < out.stderr.index("--params N")
    sized = run_cli("scale", str(tmp_path), "--params", "alpha=1B", "--params", "beta=3B")
    assert sized.returncode == 0, sized.stderr
    one = run_cli("scale", str(tmp_path / "alpha.csv"))
    assert one.returncode == 2 and "give it with --params N" in one.stderr


def test_saturating_fit_reaches_the_optimum_at_steep_gamma():
    """Against scipy's curve_fit from many starts (an independent optimiser): the profile fit
    finds the same least squares also where 10^(-gamma u) underflows lstsq's rank test."""
    from scipy.optimize import curve_fit

    from entropylaw.fit.size_forms import eval_form as _eval
    from entropylaw.fit.size_forms import fit_form as _fit_form

    u = np.log10(N5)
    for gamma in (0.2, 1.0, 2.4):
        y = 0.95 - 0.45 * 10 ** (-gamma * (u - u[0])) + np.array([0.002, -0.001, 0.0, 0.001, -0.002])
        ours = np.sum((y - _eval("saturating", _fit_form("saturating", u, y, (0.0, 1.0)), u, (0.0, 1.0))) ** 2)
        best = np.inf
        for g0 in np.linspace(0.05, 3.0, 30):
            def f(uu, C, logB, g):
                return C - np.exp(logB - g * np.log(10) * (uu - u[0]))
            try:
                q, _ = curve_fit(f, u, y, p0=[0.95, np.log(0.45), g0], bounds=([0, -50, 0.01], [1, 50, 3]),
                                 maxfev=20000)
                best = min(best, float(np.sum((y - f(u, *q)) ** 2)))
            except RuntimeError:
                pass
        assert ours <= best * (1 + 1e-6) + 1e-12, (gamma, ours, best)


def test_a_run_whose_last_score_is_early_is_left_out():
    res = scale_series(_rows(note=[None, None, None, "xl: its last score is at step 40, 60 steps before its last "
                                                      "logged step 100"]))
    assert "xl" not in res.score_law.labels_ and any("not their final one: xl" in n for n in res.notes)


def test_a_size_asked_as_a_total_is_read_as_the_familys_non_embedding_count():
    """The Qwen2.5 series is fitted on the model cards' non-embedding counts (0.36B for 0.5B):
    32B is then 31.0B, and the figure, the text and the JSON say and use the same."""
    import entropylaw as el

    res = el.scale(el.load(Path(__file__).resolve().parents[1] / "data" / "real-sizes", warn=False))
    assert res.family == "qwen2.5"
    p = res.predict(32e9)
    assert p["n_params"] == pytest.approx(31.0e9) and p["size"] == "32B" and "31B non-embedding" in p["size_note"]
    other = res.predict(50e9)
    assert other["n_params"] == 50e9 and "taken as one too" in other["size_note"]
    assert "read as 31B non-embedding" in res.report(predict=[32e9])
    runs = res.runs.assign(run_id=[f"r{i}" for i in range(len(res.runs))])
    assert scale_series(runs).family is None  # sizes of no known family: nothing is read differently


def test_sizes_that_mix_non_embedding_and_total_counts_are_said_and_labelled():
    """TRL's Qwen2.5-7B runs (a published non-embedding count, 6.53B) beside Qwen3.5-9B runs (no
    such count: 9B total) were drawn on an axis labelled "non-embedding" with no word."""
    import warnings

    import entropylaw as el
    from entropylaw.draw.sizes import size_kind

    frames = []
    for k, (model, n, nonemb) in enumerate([("Qwen2.5-0.5B-Instruct", 0.5e9, 0.36e9),
                                            ("Qwen2.5-7B-Instruct", 7e9, 6.53e9),
                                            ("Other-9B", 9e9, np.nan), ("Other-20B", 20e9, np.nan)]):
        recs = [(s, "entropy", 0.6 * np.exp(-s / 40) + 0.05) for s in range(0, 100, 5)]
        recs += [(s, "val/gsm8k", 0.3 + 0.1 * k + 0.2 * (1 - np.exp(-s / 30))) for s in range(0, 100, 10)]
        frames.append(table.from_records(recs, run_id=f"r{k}", model=model, n_params=n, n_params_nonembedding=nonemb))
    df = pd.concat(frames, ignore_index=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = el.scale(df)
    assert list(res.runs["size_kind"]) == ["non-embedding"] * 2 + ["total"] * 2
    assert any(n.startswith("the sizes mix two counts: 2 runs by non-embedding parameters, 2 runs by total")
               for n in res.notes)
    assert size_kind(res.runs) == "non-embedding; total where unknown"
    assert size_kind(res.runs[res.runs["size_kind"] == "total"]) == "total"
    assert size_kind(pd.DataFrame({"n_params": [1e9]})) == "non-embedding"  # rows that do not say: as before


def test_a_run_of_no_size_is_not_counted_as_a_non_embedding_count(tmp_path):
    """Three runs by total count and one whose name gives no size (left out): the note said
    "the sizes mix two counts: 1 run by non-embedding parameters", counting the sizeless run."""
    for name, k in (("mymodel-1b", 0), ("mymodel-3B", 1), ("mymodel-13000M", 2), ("mymodel_7b", 3)):
        steps = np.arange(0, 100, 5)
        H = 0.6 * np.exp(-steps / 40) + 0.05
        pd.DataFrame({"step": steps, "entropy": H, "val_acc": 0.9 + 0.02 * k - 0.3 * np.exp(H)}).to_csv(
            tmp_path / f"{name}.csv", index=False)  # sizes from the file names, as a user's runs give them
    out = run_cli("scale", str(tmp_path), "--json")
    assert out.returncode == 0, out.stderr
    notes = json.loads(out.stdout)["notes"]
    assert any("mymodel_7b (no model size" in n for n in notes)
    assert not any("mix two counts" in n for n in notes), notes


def test_an_entropy_key_in_no_run_is_refused_in_one_line(tmp_path):
    """`scale --x-key nope` printed every run "cannot fit" (a note each) and exited 0; `--y-key nope`
    and `fit --x-key nope` refuse: a key in no run is the call's mistake."""
    import entropylaw as el

    for k, size in enumerate((0.5e9, 1.5e9, 3e9)):
        recs = [(s, "entropy", 0.6 * np.exp(-s / 40) + 0.05) for s in range(0, 100, 5)]
        recs += [(s, "val/gsm8k", 0.3 + 0.1 * k + 0.2 * (1 - np.exp(-s / 30))) for s in range(0, 100, 10)]
        run = table.from_records(recs, run_id=f"r{k}", n_params=size)
        run.to_csv(tmp_path / f"r{k}.csv", index=False)
    out = run_cli("scale", str(tmp_path), "--x-key", "nope")
    assert out.returncode == 2 and out.stdout == "" and "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines() == [
        "entropylaw: error: --x-key 'nope': no run has this entropy metric (their keys: entropy, val/gsm8k)"]
    with pytest.raises(EntropyLawError, match="^`x` 'nope': no run has this entropy metric"):
        el.scale(el.load(str(tmp_path), warn=False), x="nope")
    assert el.scale(el.load(str(tmp_path), warn=False), x="entropy").runs["trust"].ne("cannot fit").all()


def test_a_table_made_by_hand_is_sized_by_its_model_or_run_name():
    """A tidy table built with `table.from_records(model="Qwen2.5-0.5B-Instruct")` (or a run named
    qwen2.5-1.5b-...) has no count: scale refused it with "no model size in its name or config"."""
    import warnings

    import entropylaw as el

    frames = []
    for k, (rid, model) in enumerate([("r-a", "Qwen2.5-0.5B-Instruct"), ("qwen2.5-1.5b-instruct_grpo", ""),
                                      ("r-c", "Qwen2.5-3B"), ("plain", "")]):
        recs = [(s, "entropy", 0.6 * np.exp(-s / 40) + 0.05) for s in range(0, 100, 5)]
        recs += [(s, "val/gsm8k", 0.3 + 0.1 * k + 0.2 * (1 - np.exp(-s / 30))) for s in range(0, 100, 10)]
        frames.append(table.from_records(recs, run_id=rid, model=model))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = el.scale(pd.concat(frames, ignore_index=True))
    sized = dict(zip(res.runs["run_id"], res.runs["n_params"]))
    assert sized == pytest.approx({"r-a": 0.36e9, "qwen2.5-1.5b-instruct_grpo": 1.31e9, "r-c": 2.77e9})
    assert set(res.runs["size_kind"]) == {"non-embedding"}
    assert any(n.startswith("left out (1 run): plain (no model size in its name") for n in res.notes)


def test_a_sizeless_run_left_out_does_not_unmake_the_family():
    """Qwen2.5 runs fitted on their non-embedding counts, and one run of no size (left out, said):
    32B was then read as 32B, not the 31.0B the fitted sizes are counted in."""
    import warnings

    import entropylaw as el

    frames = []
    for k, model in enumerate(["Qwen2.5-0.5B-Instruct", "Qwen2.5-1.5B-Instruct", "Qwen2.5-3B-Instruct", ""]):
        recs = [(s, "entropy", 0.6 * np.exp(-s / 40) + 0.05) for s in range(0, 100, 5)]
        recs += [(s, "val/gsm8k", 0.3 + 0.1 * k + 0.2 * (1 - np.exp(-s / 30))) for s in range(0, 100, 10)]
        frames.append(table.from_records(recs, run_id=f"r{k}", model=model))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = el.scale(pd.concat(frames, ignore_index=True))
    assert len(res.runs) == 3 and any(n.startswith("left out (1 run): r3") for n in res.notes)
    assert res.family == "qwen2.5" and res.predict("32B")["n_params"] == pytest.approx(31.0e9)


def test_runs_with_no_entropy_still_have_the_final_score_law(tmp_path):
    """The final-score law needs no entropy: `scale` on runs that log only a score was refused with
    "--x-key 'entropy': no run has this entropy metric" (the CLI always passes its default key; the
    refusal is for a key the call names)."""
    for k, size in enumerate((0.36e9, 1.3e9, 2.8e9, 6.5e9)):
        recs = [(s, "val/gsm8k", (0.4 + 0.1 * k) * (1 - np.exp(-s / 30))) for s in range(1, 101)]
        table.from_records(recs, run_id=f"r{k}", n_params=size).to_csv(tmp_path / f"r{k}.csv", index=False)
    out = run_cli("scale", str(tmp_path), "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert len(doc["runs"]) == 4 and {r["trust"] for r in doc["runs"]} == {"cannot fit"}
    assert "refused" not in doc["final_score_law"], doc["final_score_law"]
    nope = run_cli("scale", str(tmp_path), "--x-key", "nope")
    assert nope.returncode == 2 and "--x-key 'nope': no run has this entropy metric" in nope.stderr


def test_the_predictions_come_before_the_laws_that_give_them():
    """`scale --predict 32B,72B` printed the predictions last, under the forward-chaining table, the
    forms' weights and the coefficient law: the answer came after every method detail."""
    text = scale_series(_rows()).report(predict="32B,72B")
    lines = text.splitlines()
    first = next(i for i, ln in enumerate(lines) if ln.strip().startswith("32B: final score"))
    assert lines[first - 1] == "predicted (the laws that give these: below):", text
    assert first < lines.index(next(ln for ln in lines if ln.startswith("coefficient law")))
    assert lines.index(next(ln for ln in lines if ln.strip().startswith("72B: final score"))) < \
        lines.index(next(ln for ln in lines if ln.startswith("final score vs size")))
