"""Short run labels for sweeps whose run ids are long: the CS336 GRPO grid (28 W&B runs, their ids
copied from data/real-cs336-wandb/reference), and the other real id sets of the project."""

import re

from entropylaw.table.labels import families, short_labels

CS336 = [
    "grpo_grpo_clip_lr1e-05_epoch1_train_batch128__8jla7krl",
    "grpo_grpo_clip_lr1e-05_epoch1_train_batch256__whra6cbi",
    "grpo_grpo_clip_lr1e-05_epoch1_train_batch64__tmeb8iyd",
    "grpo_grpo_clip_lr1e-05_epoch2_train_batch128__5f987owm",
    "grpo_grpo_clip_lr1e-05_epoch2_train_batch256__udt50zat",
    "grpo_grpo_clip_lr1e-05_epoch2_train_batch64__7beqsvyc",
    "grpo_grpo_clip_lr1e-05_epoch3_train_batch128__4c2lw1ul",
    "grpo_grpo_clip_lr1e-05_epoch3_train_batch128__6sse57zp",
    "grpo_grpo_clip_lr1e-05_epoch3_train_batch128_masked_mean_no_use_std_normalization__qmxi4x3g",
    "grpo_grpo_clip_lr1e-05_epoch3_train_batch128_masked_mean_use_std_normalization__gz6jvz4c",
    "grpo_grpo_clip_lr1e-05_epoch3_train_batch128_masked_normalize_use_std_normalization__fje8thep",
    "grpo_grpo_clip_lr1e-05_epoch3_train_batch256__32d6uaz6",
    "grpo_grpo_clip_lr1e-05_epoch3_train_batch64__01j7lhmp",
    "grpo_grpo_clip_lr2e-05_epoch1_train_batch128__22pjweci",
    "grpo_grpo_clip_lr2e-05_epoch1_train_batch64__2dzgo8bu",
    "grpo_grpo_clip_lr2e-05_epoch2_train_batch128__twb6yiou",
    "grpo_grpo_clip_lr2e-05_epoch2_train_batch256__enn7rsbd",
    "grpo_grpo_clip_lr2e-05_epoch2_train_batch256__mvyia6u7",
    "grpo_grpo_clip_lr2e-05_epoch2_train_batch256__tu5i782w",
    "grpo_grpo_clip_lr2e-05_epoch2_train_batch256__yae5r07o",
    "grpo_grpo_clip_lr2e-05_epoch2_train_batch64__2oe8j1um",
    "grpo_grpo_clip_lr2e-05_epoch3_train_batch128__gpvoecv5",
    "grpo_grpo_clip_lr2e-05_epoch3_train_batch256__kkncl9su",
    "grpo_grpo_clip_lr2e-05_epoch3_train_batch256__m16nzj60",
    "grpo_grpo_clip_lr2e-05_epoch3_train_batch64__a9y44bkp",
    "grpo_grpo_no_clip_lr1e-05_epoch3_train_batch128_masked_normalize_use_std_normalization__w13gkcxw",
    "grpo_no_baseline_lr1e-05_epoch1_train_batch256__gl4y2b9j",
    "grpo_reinforce_with_baseline_lr1e-05_epoch1_train_batch256__vsoc7uou",
]


def _cs336():
    got = short_labels(families(CS336))
    assert len(set(got.values())) == len(CS336) and all(len(v) <= 30 for v in got.values())
    return got


def test_runs_of_one_setting_keep_it_whole_and_the_start_of_their_tracker_id():
    """Runs of one setting differ by their W&B id alone: they were cut in the middle, the epoch lost
    ("clip_lr1e epoc…128__4c2lw1ul"). The setting stays whole; the id's start tells them apart."""
    got = _cs336()
    assert got["grpo_grpo_clip_lr1e-05_epoch3_train_batch128__4c2lw1ul"] == "clip_lr1e-05_e3 b128 4c"
    assert got["grpo_grpo_clip_lr1e-05_epoch3_train_batch128__6sse57zp"] == "clip_lr1e-05_e3 b128 6s"
    four = [r for r in CS336 if "lr2e-05_epoch2_train_batch256__" in r]
    assert [got[r] for r in four] == [f"lr2e-05_epoch2 batch256 {h}" for h in ("en", "mv", "tu", "ya")]
    # a run whose setting is its own loses the id, as before
    assert got["grpo_grpo_clip_lr1e-05_epoch1_train_batch64__tmeb8iyd"] == "clip_lr1e-05_epoch1 batch64"


def test_variants_keep_lr_epoch_batch_and_what_tells_them_apart():
    """The masked runs fell back to what ends their ids ("~no_use_std_normalization": lr, epoch and
    batch lost), the others were cut in the middle ("no_baseline_lr…och1 batch256"). A label too long
    loses the parts most runs share (clip; masked, std, normalization of the masked runs) while it
    still tells its run apart, and writes its settings by their initial (e3, b128) where it must."""
    got = _cs336()
    masked = {r: got[r] for r in CS336 if "_masked_" in r or "baseline" in r}
    assert not [v for v in masked.values() if "…" in v or "~" in v], masked  # none cut
    for r, label in masked.items():
        assert "lr1e-05" in label, label
        assert re.search(r"(?<![a-z0-9])(epoch|e)\d", label) and re.search(r"(?<![a-z0-9])(batch|b)\d", label), label
    mean_no, mean, normalize, no_clip, no_baseline, reinforce = (masked[r] for r in sorted(masked, key=CS336.index))
    assert "mean" in mean_no and "no_use" in mean_no
    assert "mean" in mean and "no_use" not in mean and "use" in mean
    assert "normalize" in normalize and "clip" in normalize and "no_clip" not in normalize
    assert no_clip == "no_clip_lr1e-05_e3 b128"
    assert no_baseline.startswith("no_baseline") and "e1 b256" in no_baseline
    assert reinforce.startswith("reinforce") and "e1 b256" in reinforce
    # the runs whose labels fit are as before
    assert got["grpo_grpo_clip_lr2e-05_epoch3_train_batch64__a9y44bkp"] == "clip_lr2e-05_epoch3 batch64"


def test_other_real_id_sets_label_whole():
    """TRL, veRL and rasbt ids: short ones as before; long ones (one family of several models) keep
    their model or method and are not cut."""
    trl = [f"trl_qwen2.5-7b__exp1a__rho{x}" for x in ("0.10_seed43", "0.30_seed42", "0.50_seed44", "1.00_seed42",
                                                       "1.00_seed44", "1.50_seed44", "2.00_seed43", "5.00_seed42")]
    trl += [f"trl_qwen3.5-9b__sweep_coarse__rho{x}"
            for x in ("0.10_seed42", "0.70_seed44", "1.00_seed43", "3.00_seed42")]
    trl += ["trl_qwen3.5-9b__variants__dapo_rho1.0_seed43", "trl_qwen3.5-9b__variants__dapo_rho3.0_seed42"]
    by_model = short_labels(families(trl, [r.split("__")[0] for r in trl]))
    assert by_model[trl[0]] == "rho0.10_seed43" and by_model[trl[8]] == "sweep_coarse__rho0.10_seed42"
    one = short_labels({"all": trl})  # no model names: one family
    assert len(set(one.values())) == len(trl) and all(len(v) <= 28 and "…" not in v for v in one.values())
    assert one[trl[0]] == "qwen2.5-7b rho0.10_seed43"  # exp1a: in every qwen2.5 run, it says nothing
    assert "rho1.00" in one[trl[10]] and "rho1.0" in one[trl[12]] and "variants" in one[trl[12]]
    verl = ["verl_grpo_deepseek-llm-7b-chat_gsm8k_mi300", "verl_ppo_deepseek-llm-7b-chat_gsm8k_mi300",
            "verl_ppo_qwen2.5-0.5b-instruct_gsm8k_resp256_verl-data", "verl_opd_qwen3-4b_aime24_collapse"]
    got = short_labels({"all": verl})
    assert got[verl[0]] == "grpo_deepseek-llm-7b-chat" and got[verl[3]] == "opd_qwen3-4b_aime24_collapse"
    rasbt = ["7_3_plus_tracking_metrics", "7_6_plus_format_reward_metrics",
             "ch06_rlvr_grpo_original_no_kl_metrics"]
    got = short_labels({"all": rasbt})
    assert got[rasbt[0]] == "7_3_plus_tracking" and got[rasbt[1]] == "7_6_plus_format_reward"
    assert got[rasbt[2]].startswith("ch06_rlvr_grpo") and "…" not in got[rasbt[2]]


def test_a_learning_rate_keeps_its_exponent():
    """Split at every hyphen, 1e-05 and 2e-05 lost their shared "05": every CS336 label read "lr1e" or
    "lr2e". A hyphen in a number's exponent is no gap between parts."""
    got = _cs336()
    for run, label in got.items():
        lr = re.search(r"lr\de-05", run).group()
        assert lr in label, (run, label)
    assert short_labels({"f": ["a_lr1e-6_b", "a_lr3e-6_b"]}) == {"a_lr1e-6_b": "lr1e-6", "a_lr3e-6_b": "lr3e-6"}
    # other hyphens split, and one after a number's e before a word
    assert short_labels({"f": ["qwen-7b-a", "qwen-7b-b"]}) == {"qwen-7b-a": "a", "qwen-7b-b": "b"}
    assert short_labels({"f": ["run1e-final", "run1e-draft"]}) == {"run1e-final": "final", "run1e-draft": "draft"}


def test_terminal_tables_name_runs_by_what_sets_them_apart(monkeypatch):
    """The one-line forecast table cut CS336's ids from the left: every row read
    ``~train_batch128__8jla7krl``, its learning rate and epochs gone. Where the ids do not fit, the
    rows carry the short labels (lr, epoch and batch whole), and a line says so."""
    from entropylaw.fit.forecast.text import line_table
    from entropylaw.table.labels import HANDLES_SAID, handles

    rows = [{"run": r, "final": "0.500 [0.400, 0.600]", "call": "continue"} for r in CS336]
    text = line_table(rows, [("run", "run"), ("final [90 %]", "final"), ("call", "call")], width=80)
    lines = text.splitlines()
    assert max(map(len, lines)) <= 80 and " ".join(HANDLES_SAID.split()) in " ".join(text.split()), text
    names = [line.split("  ")[0].strip() for line in lines[1:1 + len(CS336)]]
    assert len(set(names)) == len(CS336) and not any(n.startswith("~") for n in names), names
    assert sum(bool(re.search(r"lr[12]e-05", n)) for n in names) >= len(CS336) - 2, names  # at most 2 cut there
    assert handles(["short", "names"], 10) == (["short", "names"], False)  # ids that fit stay as they are
    same = ["x" * 40 + "_a", "x" * 40 + "_a"]  # alike ids: no labels to tell them apart, the ids cut
    assert handles(same, 12)[1] is False


def test_table_names_keep_what_sets_runs_apart_whichever_way_says_more():
    """Labels stand in for ids where they keep more of what sets the runs apart than the ids cut:
    CS336 at 25 characters (``lr1e-05_epoch1 batch128``, not ``~train_batch128__8jla7krl``) and at
    14 (``lr1e-05…1 b128``, not ``~_8jla7krl``); two runs of names that fit stay their ids."""
    from entropylaw.table.labels import _said, handles

    for width in (25, 14):
        names, labelled = handles(CS336, width)
        assert labelled and len(set(names)) == len(CS336) and max(map(len, names)) <= width, names
        least = len(CS336) - 1 if width == 25 else 20  # one cut at 25: no_baseline_…e-05_e1 b256
        assert sum("lr1e-05" in n or "lr2e-05" in n for n in names) >= least, names
    from entropylaw.terminal import shorts
    cut = shorts(CS336, 14)
    assert _said(CS336, handles(CS336, 14)[0]) > _said(CS336, cut)
