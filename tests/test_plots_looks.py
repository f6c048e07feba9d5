"""One look per run in every figure, boxes where no data are, marks where the axes cut,
short run labels, and the paper style (sizes, fonts, TrueType in PDF)."""

from __future__ import annotations

import random
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.colors as mcolors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from entropylaw import table  # noqa: E402
from entropylaw.figure_sets import build as B  # noqa: E402
from entropylaw.draw import placement, style  # noqa: E402
from entropylaw.figure_sets.base import write_figures  # noqa: E402
from entropylaw.table import labels  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_run_styles_give_every_run_its_own_look_past_eight_and_in_any_order():
    ids = [f"run{k:02d}" for k in range(20)]
    shuffled = random.Random(0).sample(ids, len(ids))
    a, b = style.RunStyles(ids), style.RunStyles(shuffled)
    looks = {(a.color(r), a.linestyle(r), a.marker(r)) for r in ids}
    assert len(looks) == 20  # 8 colours, then line style and marker tell runs apart
    assert all(a.line(r) == b.line(r) and a.points(r) == b.points(r) for r in ids)


def _law_run(run_id, a, b, model="m", tau=50.0):
    steps = np.arange(0, 300, 10)
    H = np.exp(-steps / tau) + 0.1
    R = b - a * np.exp(H) + 0.003 * np.sin(1.7 * steps)
    recs = [(int(s), "entropy", float(h)) for s, h in zip(steps, H)]
    recs += [(int(s), "val/mean", float(r)) for s, r in zip(steps, R)]
    return table.from_records(recs, run_id=run_id, model=model, algorithm="grpo")


def test_a_run_has_one_colour_in_every_figure_of_a_table():
    t = table.concat([_law_run(f"r{k}", 0.1 + 0.01 * k, 0.8, model=f"m{k % 3}", tau=40 + 5 * k) for k in range(10)])
    expected = {r: mcolors.to_hex(style.RunStyles(table.run_ids(t)).color(r)) for r in table.run_ids(t)}
    with style.using("screen"):
        ceilings = B.build("ceilings", t)[0]
        family, per_run = B.build("law", t)
    # the ceiling chart: one interval bar per row, rows in the table's family order
    seen = {}
    ax = ceilings.fig.axes[0]
    names = {tick.get_text(): tick.get_position()[1] for tick in ax.get_yticklabels()}
    for container in ax.containers:
        y = float(container.lines[0].get_ydata()[0])
        label = next(n for n, pos in names.items() if pos == y)
        seen[label] = mcolors.to_hex(container.lines[0].get_color())
    rows_by_label = {f"r{k}": f"r{k}" for k in range(10)}  # one token ids: the label is the id
    assert {rows_by_label[k]: v for k, v in seen.items()} == expected
    # the per-run panels: each panel's points in the run's colour
    for ax in per_run.fig.axes:
        if not ax.get_visible():
            continue
        run = ax.get_title(loc="left").split(" · ")[0]
        face = ax.collections[0].get_facecolor()[0]
        assert mcolors.to_hex(face) == expected[run]


def test_number_box_goes_where_no_point_is():
    fig, ax = style.new_axes()
    rng = np.random.default_rng(0)
    # points fill the two left corners and the lower right: only the upper right is free
    x = np.concatenate([rng.uniform(0, 0.3, 60), rng.uniform(0.7, 1, 30)])
    y = np.concatenate([rng.uniform(0, 1, 60), rng.uniform(0, 0.4, 30)])
    ax.scatter(x, y)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    box = style.numbers_box(ax, {"a": 0.1, "b": 0.2}, loc="best")
    placement.settle(fig)
    fig.draw_without_rendering()
    extent = box.get_bbox_patch().get_window_extent(fig.canvas.get_renderer())
    shown = ax.transData.transform(np.column_stack([x, y]))
    inside = ((shown[:, 0] >= extent.x0) & (shown[:, 0] <= extent.x1) & (shown[:, 1] >= extent.y0)
              & (shown[:, 1] <= extent.y1))
    assert not inside.any() and box.get_position() == (0.98, 0.97)  # the upper right corner


def test_points_and_intervals_beyond_the_axes_are_marked_at_the_edge():
    fig, ax = style.new_axes()
    ax.scatter([0.2, 0.4, 0.6], [0.5, 1.4, -0.3])  # one above, one below the axes
    ax.errorbar([0.8], [0.9], yerr=[[0.1], [0.5]], fmt="o")  # its interval ends at 1.4
    ax.set_ylim(0, 1)
    ax.set_xlim(0, 1)
    assert placement.settle(fig) == 3
    marks = [ln for ln in ax.get_lines() if ln.get_gid() == placement.CLIP_MARK]
    where = sorted((round(float(m.get_xdata()[0]), 2), float(m.get_ydata()[0]), m.get_marker()) for m in marks)
    assert where == [(0.4, 1.0, "^"), (0.6, 0.0, "v"), (0.8, 1.0, "^")]


def test_short_labels_are_unique_in_each_family_and_families_pool_single_runs():
    ids = ["trl_qwen__exp1a__rho0.10_seed43", "trl_qwen__exp1a__rho0.30_seed42", "verl_gpg_big_model_math",
           "verl_opd_other_model_aime"]
    groups = labels.families(ids, ["qwen", "qwen", "gpg-model", "opd-model"])
    assert groups == {"qwen": ids[:2], labels.OTHER: ids[2:]}
    short = labels.short_labels(groups)
    assert short[ids[0]] == "rho0.10_seed43" and short[ids[1]] == "rho0.30_seed42"  # as the id writes them
    assert short[ids[2]] == "gpg_big math"  # "verl" and "model", common to the pooled runs, are dropped
    assert labels.shorten("abcdefghij", 5) == "ab…ij"


def test_paper_style_sizes_fonts_and_truetype_pdf(tmp_path):
    t = table.concat([_law_run("r0", 0.1, 0.8), _law_run("r1", 0.12, 0.82, tau=70)])
    with style.using("paper"):
        [b] = B.build("ceilings", t)
        paths = write_figures([b], tmp_path, formats=("pdf", "png"))
    w, _ = b.fig.get_size_inches()
    assert w == pytest.approx(3.5)  # one journal column
    fonts = [x.get_fontsize() for x in b.fig.findobj(matplotlib.text.Text) if x.get_text().strip()]
    assert min(fonts) >= 7
    pdf = paths[0].read_bytes()
    assert b"/FontFile2" in pdf and b"/Subtype /Type3" not in pdf


def test_committed_paper_pdfs_embed_truetype_fonts():
    pdfs = sorted((ROOT / "figures" / "paper").glob("*.pdf"))
    if not pdfs:
        pytest.skip("figures/paper has no PDF yet (make figures)")
    type3 = [p.name for p in pdfs if b"/Subtype /Type3" in p.read_bytes()]
    assert not type3, f"Type 3 fonts in {type3}"


def test_labels_drop_a_trackers_run_id_before_what_sets_runs_apart():
    """A sweep's ids ending in W&B's run ids were cut in the middle to "clip_lr1e epoc…h64__tmeb8iyd":
    the id kept, the epoch and batch lost. The id goes where the rest tells runs apart; two runs of
    one setting keep its start ("4c", "6s"). A number alone keeps the part before it (rasbt's "7_3 tracking", not a
    "3 tracking" beside the tables' row numbers)."""
    from entropylaw.table.labels import short_labels

    ids = [f"grpo_grpo_clip_lr{lr}e-05_epoch{e}_train_batch{b}__{h}" for lr, e, b, h in (
        (1, 1, 64, "tmeb8iyd"), (1, 2, 64, "7beqsvyc"), (1, 3, 128, "4c2lw1ul"), (1, 3, 128, "6sse57zp"),
        (2, 1, 128, "22pjweci"), (2, 3, 256, "kkncl9su"))]
    got = short_labels({"all": ids})
    assert got[ids[0]] == "lr1e-05_epoch1 batch64" and got[ids[1]] == "lr1e-05_epoch2 batch64"
    assert got[ids[4]] == "lr2e-05_epoch1 batch128" and got[ids[5]] == "lr2e-05_epoch3 batch256"
    assert got[ids[2]] == "lr1e-05_epoch3 batch128 4c" and got[ids[3]] == "lr1e-05_epoch3 batch128 6s"
    assert len(set(got.values())) == len(ids)
    rasbt = ["7_3_plus_tracking_metrics", "7_4_plus_clip_ratio_metrics", "7_5_plus_kl_metrics"]
    assert short_labels({"all": rasbt}) == dict(zip(rasbt, ["7_3 tracking", "7_4 clip_ratio", "7_5 kl"]))
    # a short id's parts stay whole: aime24 is no run id
    assert short_labels({"all": ["verl_opd_qwen3-4b_aime24_collapse", "verl_gpg_qwen2-7b_gsm8k"]})[
        "verl_opd_qwen3-4b_aime24_collapse"] == "opd_qwen3-4b_aime24_collapse"


def test_labels_keep_a_lone_runs_parts_and_other_models_names():
    """A tracker's run id is its id's last part, told by the runs beside it: a run alone had every
    part of letters and digits taken for one ("verl_opd_qwen3-4b collapse" on a one-run report, its
    benchmark gone; a CS336 run alone "grpo_grpo_clip_lr1e-05 train", its epoch and batch gone), and
    the pooled other runs lost their models (llama3, mistral7b) where their labels were long."""
    from entropylaw.table.labels import short_labels, shorten

    for lone in ("verl_opd_qwen3-4b_aime24_collapse", "grpo_grpo_clip_lr1e-05_epoch1_train_batch64__tmeb8iyd"):
        assert short_labels({"f": [lone]})[lone] == shorten(lone, 30)  # the id, cut in the middle (as before)
    ids = ["trl_grpo_llama3_gsm8k_lr1e-6_warmup_cosine_beta0.04",
           "trl_ppo_mistral7b_math_lr3e-6_warmup_linear_beta0.01"]
    got = short_labels({"other runs": ids})
    assert "llama3" in got[ids[0]] and "mistral7b" in got[ids[1]]
