"""The figure builders on small synthetic tables: which runs they pick, the numbers they
put on the figure, and the reasons they give when a figure cannot be drawn."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from scipy import stats  # noqa: E402

from entropylaw import table  # noqa: E402
from entropylaw.figure_sets import build as B  # noqa: E402
from entropylaw.figure_sets.probe_tables import ladder_parts  # noqa: E402

# prints numbers: run again under another BLAS kernel set (make test, OPENBLAS_CORETYPE=Prescott)
pytestmark = pytest.mark.printed


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def law_run(run_id, a, b, n_params=np.nan, algorithm="grpo", model="m", tau=50.0, phase=0.0, score="val/mean"):
    steps = np.arange(0, 300, 10)
    H = 1.0 * np.exp(-steps / tau) + 0.1
    R = b - a * np.exp(H) + 0.003 * np.sin(1.7 * steps + phase)
    recs = [(int(s), "entropy", float(h)) for s, h in zip(steps, H)]
    recs += [(int(s), score, float(r)) for s, r in zip(steps, R)]
    return table.from_records(recs, run_id=run_id, model=model, algorithm=algorithm, dataset="d",
                              n_params_nonembedding=n_params)


def test_scaling_fits_every_run_and_holds_out_the_largest_size():
    pytest.importorskip("entropylaw.fit.scaling")
    sizes = np.array([1e8, 4e8, 1.6e9, 6.4e9])
    runs = []
    for i, n in enumerate(sizes):
        for seed in range(2):  # two seeds a size, each a replicate of the size law
            a = 0.05 + 0.04 * np.log10(n / 1e8) + (0.004 if seed else -0.004)
            b = 0.6 + 0.05 * np.log10(n / 1e8)
            runs.append(law_run(f"s{i}-{seed}", a, b, n_params=n, model=f"m{i}", phase=seed))
    # an intervention run of the same sizes is another algorithm: not in the size law
    runs.append(law_run("s0-bonus", 0.3, 0.9, n_params=1e8, model="m0", algorithm="grpo+entropy_bonus"))
    t = table.concat(runs)
    built = {b.name: b for b in B.build("scaling", t)}
    assert set(built) == {"scaling_final_score_vs_size", "scaling_coefficients_vs_size"}
    built = built["scaling_coefficients_vs_size"]
    assert len(built.fig.axes) == 3
    ax_a = built.fig.axes[0]
    fitted, held = [c.lines[0] for c in ax_a.containers]
    # every run is a point: 8 runs, the 2 of the largest size held out
    assert len(fitted.get_xdata()) == 6 and len(held.get_xdata()) == 2
    np.testing.assert_allclose(np.asarray(held.get_xdata(), float), [6.4e9, 6.4e9])
    numbers = ax_a.get_legend().get_title().get_text()  # under the panel
    assert "6 runs of 3 sizes, 1 dof" in numbers
    # the size law is ordinary least squares of the plotted per-run a on log10 N
    slope, icpt = np.polyfit(np.log10(np.asarray(fitted.get_xdata(), float)), np.asarray(fitted.get_ydata(), float), 1)
    note = numbers.split("held out: ")[1]
    observed = float(note.split("\n")[0].split()[1])
    predicted = float(note.split("\n")[1].split(",")[0].split()[-1])
    assert observed == pytest.approx(np.mean(held.get_ydata()), abs=1e-3)
    assert predicted == pytest.approx(slope * np.log10(6.4e9) + icpt, abs=1e-3)
    # the law is exact in log10 N: the held-out a is predicted to fitting noise
    assert predicted == pytest.approx(0.05 + 0.04 * np.log10(64), abs=0.01)
    # the y range shows every point and the prediction
    lo, hi = ax_a.get_ylim()
    assert lo < min(fitted.get_ydata()) and hi > max(held.get_ydata()) and lo < predicted < hi
    assert any("prediction band" in x.get_text() for x in ax_a.get_legend().get_texts())


def test_scaling_fitted_on_two_sizes_says_no_band_and_no_dof():
    """Three sizes, two seeds each, the largest held out: the size law, each size one point, has two
    points and no interval; the figure said "4 runs, 2 dof" and listed a prediction band it did not draw."""
    runs = []
    for i, n in enumerate([1e8, 4e8, 1.6e9]):
        for seed in range(2):
            a = 0.05 + 0.04 * np.log10(n / 1e8) + (0.004 if seed else -0.004)
            runs.append(law_run(f"s{i}-{seed}", a, 0.6 + 0.05 * np.log10(n / 1e8), n_params=n, model=f"m{i}",
                                phase=seed))
    built = {b.name: b for b in B.build("scaling", table.concat(runs))}["scaling_coefficients_vs_size"]
    ax_a = built.fig.axes[0]
    numbers = ax_a.get_legend().get_title().get_text()
    assert "4 runs of 2 sizes, 0 dof" in numbers, numbers
    labels = [t.get_text() for t in ax_a.get_legend().get_texts()]
    assert not any("prediction band" in label for label in labels), labels


def test_scaling_needs_three_sizes_for_the_coefficients():
    """Two sizes: the final-score figure (no interval), the coefficient law refused and said so;
    one size: no figure."""
    t = table.concat([law_run("s0", 0.1, 0.7, n_params=1e8), law_run("s1", 0.12, 0.72, n_params=1e9)])
    [built] = B.build("scaling", t)
    assert built.name == "scaling_final_score_vs_size" and "refused" in built.caption
    with pytest.raises(B.Skipped, match="fewer than 2 model sizes"):
        B.build("scaling", law_run("s0", 0.1, 0.7, n_params=1e8))


def test_the_final_score_figure_names_runs_as_the_tables_do():
    """Its legend listed whole ids (qwen2.5-0.5b-instruct_grpo-lora_gsm8k) where the tables say 0.5b."""
    from entropylaw.table.labels import run_labels

    ids = ["qwen2.5-0.5b_grpo_gsm8k", "qwen2.5-1.5b_grpo_gsm8k", "qwen2.5-7b_grpo_gsm8k"]
    t = table.concat([law_run(r, 0.1 + 0.01 * i, 0.7 + 0.05 * i, n_params=n, model=r.split("_")[0])
                      for i, (r, n) in enumerate(zip(ids, (5e8, 1.5e9, 7e9)))])
    [built] = [b for b in B.build("scaling", t) if b.name == "scaling_final_score_vs_size"]
    texts = [x.get_text() for x in built.fig.axes[0].get_legend().get_texts()]
    _, labels = run_labels(t)
    assert {labels[r] for r in ids} == {"0.5b", "1.5b", "7b"}
    assert all(any(x.startswith(f"{labels[r]} (") for x in texts) for r in ids)
    assert not any(r in x for r in ids for x in texts)


def test_scaling_caption_names_the_sizes_the_figure_predicts():
    """A series up to 1.6B is predicted at 2.5 and 5 times its largest size (4B, 8B: 32B lies
    beyond 10 times it), and the caption said 'the score it predicts at 32B and 72B'."""
    runs = [law_run(f"s{i}", 0.2, 0.7 + 0.05 * i, n_params=n, model=f"m{i}") for i, n in enumerate((1e8, 4e8, 1.6e9))]
    built = {b.name: b for b in B.build("scaling", table.concat(runs))}["scaling_final_score_vs_size"]
    assert "predicts at 4B and 8B." in built.caption and "32B" not in built.caption, built.caption
    drawn = [x.get_text() for x in built.fig.axes[0].texts]
    assert "4B" in drawn and "8B" in drawn


def test_algorithms_needs_two_algorithms_on_one_model():
    t = table.concat([law_run("r0", 0.1, 0.7), law_run("r1", 0.1, 0.7, tau=70)])
    with pytest.raises(B.Skipped, match="two or more algorithms"):
        B.build("algorithms", t)


def test_algorithms_draws_the_shared_fit_for_grpo_and_rloo():
    pytest.importorskip("entropylaw.fit.algorithms")
    t = table.concat([law_run("g", 0.2, 0.8), law_run("r", 0.2, 0.8, algorithm="rloo", tau=80)])
    [built] = B.build("algorithms", t)
    assert built.name == "algorithms_one_curve"
    ax = built.fig.axes[0]
    numbers = built.fig.legends[0].get_title().get_text()  # under the plot, where it covers no point
    assert "a = 0.200, b = 0.800, ceiling b-a = 0.600" in numbers and "F = " in numbers
    assert len(ax.collections) == 2 and not ax.texts


def test_algorithms_figure_says_one_run_an_algorithm_beside_its_verdict():
    """One run of each algorithm: the command notes the difference may be the run's own (seed,
    data order), while the figure said 'algorithm matters' alone."""
    [built] = B.build("algorithms", table.concat([law_run("g", 0.2, 0.8), law_run("r", 0.25, 0.85, algorithm="rloo",
                                                                                   tau=80)]))
    numbers = built.fig.legends[0].get_title().get_text().replace("\n", " ")
    assert "algorithm matters" in numbers and "one run of grpo, rloo: the difference may be the run's own" in numbers
    assert "Note: one run of grpo, rloo: what tells it apart may be that run's own" in built.caption


def test_algorithms_leaves_interventions_out():
    t = table.concat([law_run("g", 0.2, 0.8), law_run("r", 0.2, 0.8, algorithm="reinforce++", tau=80),
                      law_run("c", 0.2, 0.8, algorithm="grpo+clip_cov", tau=60)])
    [built] = B.build("algorithms", t)
    names = [x.get_text() for x in built.fig.legends[0].get_texts()]
    assert any("reinforce++" in n for n in names) and not any("clip_cov" in n for n in names)
    with pytest.raises(B.Skipped, match="interventions"):
        B.build("algorithms", table.concat([law_run("g", 0.2, 0.8), law_run("c", 0.2, 0.8, algorithm="grpo+kl_cov")]))


def test_algorithms_figure_compares_the_runs_the_algorithms_command_compares():
    """The figure drew every run of a model: a run the law does not describe (a <= 0, entropy
    rising) gave its algorithm an (a, b) and an F test the command refuses ('got grpo alone'),
    and runs of two benchmarks were one curve the command refuses to test. Now: the run left
    out and named, and no figure where the command gives no test, with the same reason."""
    flat = law_run("p-flat", -0.05, 0.6, algorithm="ppo", tau=80)  # score falls with the entropy: a <= 0
    rising = law_run("p-up", 0.2, 0.8, algorithm="ppo", tau=80)
    rising = rising.assign(step=300 - rising["step"])  # time reversed: entropy rises
    with pytest.raises(B.Skipped, match=r"at least 2 algorithms the law describes \(got grpo\).*p-flat.*p-up"):
        B.build("algorithms", table.concat([law_run("g", 0.2, 0.8), law_run("g2", 0.2, 0.8, tau=60), flat, rising]))
    [built] = B.build("algorithms", table.concat([law_run("g", 0.2, 0.8), law_run("r", 0.2, 0.8, algorithm="rloo",
                                                                                   tau=80), flat]))
    names = [x.get_text() for x in built.fig.legends[0].get_texts()]
    assert not any("p-flat" in n for n in names)
    assert any("left out of the algorithm test (1 run): p-flat (the law does not apply" in n for n in built.warnings)
    assert "Left out: 1 run the law does not describe." in built.caption
    with pytest.raises(B.Skipped, match="2 benchmarks"):
        B.build("algorithms", table.concat([law_run("g", 0.2, 0.8, score="val/gsm8k"),
                                            law_run("r", 0.2, 0.8, algorithm="rloo", tau=80, score="val/math")]))


def lab_run():
    rng = np.random.default_rng(3)
    steps = np.arange(40)
    cov = 0.02 * np.exp(-steps / 10) + 0.001
    delta = -0.5 * cov + rng.normal(0, 0.001, 40)
    recs = [(int(s), "entropy", float(1 - 0.01 * s)) for s in steps]
    recs += [(int(s), "cov/response_level", float(c)) for s, c in zip(steps, cov)]
    recs += [(int(s), "actor/entropy_delta", float(d)) for s, d in zip(steps, delta)]
    recs += [(int(s), "cov/response_level/hard", float(c / 2)) for s, c in zip(steps, cov)]
    recs += [(int(s), "cov/response_level/easy", float(c * 2)) for s, c in zip(steps, cov)]
    return table.from_records(recs, run_id="lab-grpo"), cov, delta


def test_covariance_uses_the_measured_entropy_change_and_difficulty_groups():
    t, cov, delta = lab_run()
    [built] = B.build("covariance", t)
    left = built.fig.axes[0]
    r = stats.pearsonr(cov, -delta).statistic
    assert f"Pearson r = {r:.3f} over 40 steps" in left.get_legend().get_title().get_text()
    assert built.name == "covariance_vs_entropy_change_lab-grpo"
    groups = [a for a in built.fig.axes if a.get_title() == "By prompt accuracy"][0]
    assert sorted(l.get_label().split(" ")[0].rstrip(":") for l in groups.get_lines()
                  if not l.get_label().startswith("_")) == ["easy", "hard"]
    assert "measured" in built.caption


def test_covariance_skips_without_the_metric():
    with pytest.raises(B.Skipped, match="cov/response_level"):
        B.build("covariance", law_run("r", 0.1, 0.7))


def test_ladder_parts_reads_the_probe_layout():
    ladder = {"eta": 0.01, "estimators": {"lemma1": {"pearson": 0.99, "predicted_mean": -0.02, "measured_mean": -0.021},
                                          "theorem2": {"pearson": 0.3, "predicted_mean": -0.005,
                                                       "measured_mean": -0.021}}}
    est, measured = ladder_parts(ladder)
    assert list(est) == ["lemma1", "theorem2"] and measured == -0.021
    flat = {"lemma1": {"pearson": 0.9, "predicted": -0.01}, "measured": -0.012}
    est, measured = ladder_parts(flat)
    assert est["lemma1"]["predicted_mean"] == -0.01 and measured == -0.012


def test_ladder_figure_from_the_probe_layout_keeps_tabular_estimators_off_the_scale():
    summary = {"ladder": {"eta": 0.004, "estimators": {
        "lemma1": {"pearson": 0.99, "spearman": 0.98, "sign_agreement": 0.99, "predicted_mean": -0.0034,
                   "measured_mean": -0.0028},
        "theorem2": {"pearson": 0.14, "spearman": 0.03, "sign_agreement": 0.35, "predicted_mean": -3e-7,
                     "measured_mean": -0.0028}},
        "eta_squared_check": {"etas": [0.004, 0.002, 0.001], "lemma1_mean_abs_error": [8e-4, 2e-4, 5e-5]}}}
    [built] = B.build_probe("ladder", summary)
    left, middle, right = built.fig.axes
    assert [t.get_text() for t in middle.get_yticklabels()] == ["measured", "lemma1"]
    words = [t.get_text() for t in middle.texts]
    assert any(w.startswith("measured -0.0028") for w in words) and any(w.startswith("lemma1 -0.0034") for w in words)
    assert right.get_xscale() == "log" and "fitted slope 2.00" in [t.get_text() for t in right.get_legend().get_texts()]
    assert "correlation and sign only" in built.caption and "theorem2" in built.caption


def test_unknown_figure_name_is_a_user_error():
    from entropylaw.errors import EntropyLawError

    with pytest.raises(EntropyLawError, match="unknown figure 'fig99'"):
        B.build("fig99", law_run("r", 0.1, 0.7))


def test_the_api_names_every_figure_the_builders_draw():
    """``el.FIGURES`` (the CLI's --which choices, known without importing matplotlib) is the builders' list."""
    from entropylaw import api

    assert list(api.FIGURES) == list(B.BUILDERS) + list(B.PROBE_BUILDERS)


def test_a_score_that_is_no_fraction_is_not_labelled_fraction_correct():
    """A distillation run's validation sits at -1 (a reward in [-1, 1]): its axes read
    "final score (fraction correct)" from -1.0 to -0.6."""
    from types import SimpleNamespace

    from entropylaw.draw.law import score_axis_label, score_label
    from entropylaw.figure_sets.ceilings import plot_forecasts

    assert score_axis_label([{"score_kind": "validation", "fraction": True}]) == "validation score (fraction)"
    assert score_axis_label([{"score_kind": "validation", "fraction": True},
                             {"score_kind": "validation", "fraction": False}]) == "validation score (score units)"
    fit = SimpleNamespace(meta_={"y_key": "val/aime", "score_kind": "validation"}, R_=np.array([-1.0, -0.97]))
    assert score_label(fit) == "score: val/aime (score units)"
    fit.R_ = np.array([0.2, 0.5])
    assert score_label(fit) == "score: val/aime (fraction correct)"
    row = {"run_id": "opd", "label": "opd", "forecast": -1.0, "forecast_ci": [-1.0, -0.51], "final_observed": -1.0,
           "fraction": False, "method": "last-value"}
    ax = plot_forecasts([row])
    assert ax.get_xlabel() == "final score (score units)"
    plt.close(ax.figure)


def test_figures_write_all_or_nothing_and_say_an_earlier_sets_files(tmp_path):
    """A folder named as a figure stopped `figures` part-way, two PNGs already written and not
    said; an earlier set's figures in the same folder stayed beside the new ones without a word."""
    import entropylaw as el
    from entropylaw import api
    from entropylaw.errors import EntropyLawError

    df = el.load(str(Path(__file__).resolve().parents[1] / "data" / "real-sizes"), warn=False)
    out = tmp_path / "out"
    (out / "law_per_run.png").mkdir(parents=True)
    with pytest.raises(EntropyLawError, match="law_per_run.png: a folder has the name of a figure to write; nothing "
                                              "was written"):
        api.figures(df, out=out, which=["ceilings", "law"], formats=["png"])
    assert sorted(p.name for p in out.iterdir()) == ["law_per_run.png"]  # nothing new, no staging folder left
    (out / "law_per_run.png").rmdir()
    (out / "early_prediction.png").write_bytes(b"an earlier set's")
    res = api.figures(df, out=out, which=["ceilings"], formats=["png"])
    assert [p.name for p in res.paths] == ["law_ceilings_per_run.png"]
    assert res.earlier == ["early_prediction.png"]
    assert res.earlier_note() == (f"1 figure of an earlier run left in {out} (not written now, kept as they were): "
                                  "early_prediction.png")
    assert not any("early_prediction" in w for w in res.warnings)  # said apart from the fits' warnings
    assert sorted(p.name for p in out.iterdir()) == ["early_prediction.png", "law_ceilings_per_run.png"] + (
        ["warnings.txt"] if res.warnings else [])  # the fits' warnings, every one, beside the figures


def test_figures_says_the_figures_of_an_earlier_run_left_in_out_even_under_q(tmp_path, capsys):
    """A second `figures` run with fewer figures left the first run's PNGs beside the new ones, said
    (if at all) among the fits' warnings, which -q silences: a user could not tell which are
    current. The files written are listed, then one note counts and names the earlier ones (kept:
    a user's files are never deleted)."""
    from entropylaw.cli.main import main

    sizes, out = str(Path(__file__).resolve().parents[1] / "data" / "real-sizes"), tmp_path / "figs"
    assert main(["figures", sizes, "--out", str(out), "--which", "ceilings", "law", "-q"]) == 0
    first = sorted(p.name for p in out.iterdir())
    capsys.readouterr()
    assert main(["figures", sizes, "--out", str(out), "--which", "ceilings", "-q"]) == 0
    said = capsys.readouterr()
    written = [Path(line).name for line in said.out.splitlines()]
    left = sorted(set(first) - set(written))
    assert written and left and sorted(p.name for p in out.iterdir()) == first  # nothing deleted
    err = " ".join(said.err.split())  # the note, unwrapped
    assert err.startswith(f"entropylaw: note: {len(left) // 2} figures of an earlier run left in {out}"), err
    assert "warning" not in err and left[0] in err


def test_early_panel_says_when_the_law_does_not_describe_its_window():
    """A run the law describes whose first 15 % holds flat entropy: `predict` flags the window
    "law does not apply"; its panel says so beside the numbers, not only the table."""
    steps = np.arange(0, 400, 5)
    H = np.where(steps < 100, 1.0 + 0.004 * np.sin(steps), 1.25 * np.exp(-(steps - 100) / 120) + 0.1)
    R = 1.2 - 0.3 * np.exp(H) + 0.004 * np.sin(1.7 * steps)
    recs = [(int(s), "entropy", float(h)) for s, h in zip(steps, H)]
    recs += [(int(s), "val/mean", float(r)) for s, r in zip(steps, R)]
    t = table.from_records(recs, run_id="flat-start", model="m", algorithm="grpo", dataset="d")
    [built] = B.build("early", t)
    [ax] = [a for a in built.fig.axes if a.get_visible()]
    texts = [x.get_text() for x in ax.texts]
    assert any(x.startswith("law does not apply · RMSE") for x in texts), texts
    assert "trust flag" in built.caption


def test_scaling_says_no_next_figure_and_names_the_runs_it_does_not_draw():
    """Three sizes the law describes: the coefficient law is fitted, but its figure (the largest
    size held out) needs four; the caption said "fitted (next figure)" with no next figure, the
    plot a bare "fitted", and a run of another data set was dropped without a word."""
    runs = [law_run(f"s{i}", 0.05 + 0.04 * i, 0.6 + 0.05 * i, n_params=n) for i, n in enumerate([1e8, 1e9, 1e10])]
    other = law_run("elsewhere", 0.1, 0.7, n_params=3e9)
    other["dataset"] = "another"
    built = B.build("scaling", table.concat([*runs, other]))
    assert [b.name for b in built] == ["scaling_final_score_vs_size"]
    [b] = built
    assert "next figure" not in b.caption and "figure not drawn" in b.caption
    said = b.fig.axes[0].get_legend().get_title().get_text()
    assert "ceiling = " in said and "log10 N" in said
    assert any("elsewhere" in n and "another data set" in n for n in b.warnings), b.warnings
