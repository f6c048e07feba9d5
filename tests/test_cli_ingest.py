"""``entropylaw ingest`` / ``entropylaw summary`` through the real command line."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from entropylaw import table
from conftest import logical_lines


def test_ingest_writes_table_and_reports(cli, tmp_path):
    log = tmp_path / "verl_grpo_qwen2.5-7b_gsm8k.log"
    log.write_text("step:1 - actor/entropy:0.5 - critic/score/mean:0.1 - val/test_score/gsm8k:0.3\n"
                   "step:2 - actor/entropy:bad - critic/score/mean:0.2\n"
                   "step:3 - actor/entropy:0.3 - critic/score/mean:nan\n")
    out = tmp_path / "runs.parquet"
    res = cli("ingest", str(log), "-o", str(out), "--algorithm", "grpo", "--dataset", "gsm8k")
    assert res.returncode == 0, res.stderr
    said = " ".join(res.stdout.split())  # a long path wraps the line
    assert f"{log}: read 7 values, kept 5, dropped 2 (non-finite value: 1, non-numeric value: 1)" in said
    assert "line 2: key 'actor/entropy' has non-numeric value 'bad'" in said
    assert "line 3 (critic/score/mean)" in said
    assert f"entropylaw: warning: {log}: dropped 2 of 7 values" in "\n".join(logical_lines(res.stderr))
    t = table.read(out)
    assert table.series(t, "verl_grpo_qwen2.5-7b_gsm8k", "entropy").to_dict() == {1: 0.5, 3: 0.3}
    assert "keeps no row accounts" not in res.stderr  # a parquet carries them on
    # a CSV cannot: said once, when it is written
    csv = cli("ingest", str(log), "-o", str(tmp_path / "runs.csv"))
    said = "\n".join(logical_lines(csv.stderr))
    assert csv.returncode == 0 and f"{tmp_path / 'runs.csv'}: a CSV keeps no row accounts" in said
    assert (t["model"].iloc[0], t["algorithm"].iloc[0], t["n_params"].iloc[0]) == ("qwen2.5-7b", "grpo", 7e9)

    res = cli("summary", str(out), "--json")
    assert res.returncode == 0, res.stderr
    [row] = json.loads(res.stdout)["runs"]
    assert (row["steps"], row["entropy_first"], row["entropy_last"], row["score_last"], row["val"]) == \
        (3, 0.5, 0.3, 0.2, "val/gsm8k")


def test_ingest_json_and_resume_note(cli, tmp_path):
    log = tmp_path / "resumed.log"
    log.write_text("step:1 - actor/entropy:0.9\nstep:2 - actor/entropy:0.8\nstep:2 - actor/entropy:0.85\n")
    res = cli("ingest", str(log), "--json")
    assert res.returncode == 0, res.stderr
    [rep] = json.loads(res.stdout)["reports"]
    assert (rep["rows_read"], rep["rows_kept"], rep["dropped"]) == (
        3, 2, {"logged twice at the same step (the last kept)": 1})
    assert any("logged twice at the same step" in n for n in rep["notes"])


@pytest.mark.parametrize("name, content, message", [
    ("empty.log", "", "empty.log: empty file"),
    ("nosteps.log", "loading\nrunning\n", "nosteps.log: no veRL step lines in 2 lines"),
    ("nostep.csv", "epoch,actor/entropy\n1,0.5\n", "nostep.csv: no step column (expected one of step"),
    ("missing.log", None, "missing.log: no such file or directory"),
])
def test_unusable_input_exits_2_with_one_line(cli, tmp_path, name, content, message):
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    res = cli("ingest", str(path), "-o", str(tmp_path / "out.parquet"))
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("entropylaw: error: ") and message in lines[0], res.stderr
    assert "Traceback" not in res.stderr and not (tmp_path / "out.parquet").exists()


def test_summary_of_embedded_real_data(cli):
    res = cli("summary", "data/real", "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    rows = pd.DataFrame(out["runs"])
    verl = rows[rows["run_id"].str.startswith("verl_") & ~rows["run_id"].str.contains("opd")]
    assert len(verl) == 5 and verl["steps"].tolist() == [211, 1120, 1120, 435, 435]
    assert len(out["row_accounts"]) == len(rows)
    assert set(verl["entropy_key"]) == {"actor/entropy", "actor/entropy_loss"}


def test_the_runs_chosen_carry_only_their_own_accounts(cli, tmp_path):
    """`summary table.parquet --run B` printed the dropped rows of run A's log, a run not chosen."""
    import warnings

    import entropylaw as el

    a, b = tmp_path / "a.log", tmp_path / "b.log"
    a.write_text("step:1 - actor/entropy:0.5 - critic/score/mean:0.1\n"
                 "step:2 - actor/entropy:bad - critic/score/mean:0.2\n")
    b.write_text("step:1 - actor/entropy:0.5 - critic/score/mean:0.1\n"
                 "step:2 - actor/entropy:0.4 - critic/score/mean:0.2\n")
    out = tmp_path / "t.parquet"
    assert cli("ingest", str(a), str(b), "-o", str(out)).returncode == 0
    res = cli("summary", str(out), "--run", "b")
    assert res.returncode == 0 and "a.log" not in res.stderr, res.stderr
    res = cli("summary", str(out), "--run", "a")
    assert "a.log (read into" in res.stderr and "dropped 1 of" in " ".join(res.stderr.split())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = el.load(str(out), runs=["b"])
    assert not any("a.log" in str(w.message) for w in caught)
    assert not any(acc["source"].startswith(str(a)) for acc in el.row_accounts(df))


def test_summary_says_which_keys_a_run_has_where_no_entropy_or_score_is_found(cli, tmp_path):
    """A run whose entropy and score no key was found for was a row of '-' and nothing else: the
    user had no way to learn the run's keys or the flags that name them."""
    (tmp_path / "a.csv").write_text("step,loss,my_ent,rew\n1,0.5,0.9,0.1\n2,0.4,0.8,0.2\n3,0.3,0.7,0.3\n")
    res = cli("summary", str(tmp_path / "a.csv"))
    assert res.returncode == 0, res.stderr
    assert "a: no entropy and no score found among its keys (loss, my_ent, rew): name them with --entropy-key and " \
           "--score-key" in " ".join(res.stdout.split())
    out = json.loads(cli("summary", str(tmp_path / "a.csv"), "--json").stdout)
    assert len(out["not_found"]) == 1 and "--entropy-key" in out["not_found"][0]
    assert json.loads(cli("summary", "data/real-sizes", "--json").stdout)["not_found"] == []


def test_ingest_says_a_run_without_entropy_and_names_flags_as_flags(cli, tmp_path):
    """ingest prints the summary too, but a run with no entropy was a row of '-' there (summary
    names it under 'not found:'), and a reading note said `algorithm` where the flag is --algorithm."""
    (tmp_path / "noent.csv").write_text("step,loss,rew\n1,0.5,0.1\n2,0.4,0.2\n3,0.3,0.3\n")
    (tmp_path / "run_ppo.csv").write_text("step,actor/entropy,val/accuracy\n1,0.5,0.1\n2,0.4,0.2\n3,0.3,0.3\n")
    res = cli("ingest", str(tmp_path / "noent.csv"), str(tmp_path / "run_ppo.csv"), "-o", str(tmp_path / "t.parquet"))
    assert res.returncode == 0, res.stderr
    said = " ".join(res.stdout.split())
    assert "not found: noent: no entropy and no score found among its keys (loss, rew): name them with " \
           "--entropy-key and --score-key" in said
    assert "algorithm ppo read off the run's name (give another with --algorithm)" in said
    assert "`" not in res.stdout
    out = json.loads(cli("ingest", str(tmp_path / "noent.csv"), "--json").stdout)
    assert len(out["not_found"]) == 1 and "--entropy-key" in out["not_found"][0]


@pytest.mark.parametrize("name", ["RUNS.CSV", "Runs.Parquet"])
def test_ingest_writes_a_suffix_in_capitals_as_it_reads_one(cli, tmp_path, name):
    """'-o RUNS.CSV' was refused ('expected a .parquet or .csv path') though RUNS.CSV is read as a CSV."""
    (tmp_path / "a.csv").write_text("step,actor/entropy,val/accuracy\n1,0.5,0.1\n2,0.4,0.2\n3,0.3,0.3\n")
    out = tmp_path / name
    res = cli("ingest", str(tmp_path / "a.csv"), "-o", str(out))
    assert res.returncode == 0, res.stderr
    assert out.read_bytes().startswith(b"run_id,") == name.endswith(".CSV")  # a CSV as a CSV, a parquet as one
    assert table.series(table.read(out), "a", "entropy").to_dict() == {1: 0.5, 2: 0.4, 3: 0.3}


def test_a_table_read_into_a_table_names_its_log_and_the_table_once(cli, tmp_path):
    """A table ingested again (into itself, then into another) said each account as 'run.log (read into
    a.parquet) (read into a.parquet) (read into b.parquet)'."""
    log = tmp_path / "run.log"
    log.write_text("".join(f"step:{s} - actor/entropy:0.{9 - s} - critic/score/mean:0.{s}\n" for s in range(1, 5))
                   + "step:5 - actor/entropy:bad - critic/score/mean:0.5\n")
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    assert cli("ingest", str(log), "-o", str(a), "-q").returncode == 0
    assert cli("ingest", str(a), "-o", str(a), "-q").returncode == 0
    assert cli("ingest", str(a), "-o", str(b), "-q").returncode == 0
    res = cli("summary", str(b), "--json")
    [carried] = [r for r in json.loads(res.stdout)["row_accounts"] if r["rows_dropped"]]
    assert carried["source"] == f"{log} (read into {b})"
    assert carried["dropped"] == {"non-numeric value": 1}


def test_an_output_that_is_a_log_being_read_is_refused_before_it_is_replaced(cli, tmp_path):
    """`ingest run.csv -o run.csv` replaced the log with the table (the values it dropped gone with it), said
    only as 'wrote run.csv'. A run table read into itself with more runs stays allowed."""
    log = tmp_path / "run.csv"
    text = "step,entropy,score\n1,0.9,0.1\n2,0.8,oops\n3,0.7,0.3\n"
    log.write_text(text)
    (tmp_path / "logs").mkdir()
    inner = tmp_path / "logs" / "b.csv"
    inner.write_text(text)
    for argv in ([str(log), "-o", str(log)], [str(tmp_path / "logs"), "-o", str(inner)]):
        res = cli("ingest", *argv)
        assert res.returncode == 2, res.stderr
        [line] = logical_lines(res.stderr.strip())
        assert line.startswith(f"entropylaw: error: --output {argv[-1]}: is a log being read") and \
            "would replace it" in line, line
    assert log.read_text() == text and inner.read_text() == text
    runs = tmp_path / "runs.parquet"
    assert cli("ingest", str(log), "-o", str(runs)).returncode == 0
    res = cli("ingest", str(runs), str(inner), "-o", str(runs))
    assert res.returncode == 0, res.stderr
    assert sorted(table.run_ids(table.read(runs))) == sorted(["b", tmp_path.name])  # run.csv names no run
