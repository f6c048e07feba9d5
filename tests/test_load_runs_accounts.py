"""``load(..., runs=[...])`` (every command's ``--run``) keeps the row accounts of the sources
the runs kept were read from, and only those: a run table's own ``source`` column names the log
it was made from, not the file it is read from, and the accounts of every other table of
``data/real`` stayed (``demo --run X`` said "Read 1 runs ...: 204,652 values kept", the values
of all 20 runs)."""

from pathlib import Path

import entropylaw as el

REAL = Path(__file__).resolve().parent.parent / "data" / "real"
RUN = "verl_ppo_qwen2.5-0.5b-instruct_gsm8k_resp512_verl-data"


def test_the_accounts_kept_are_those_of_the_runs_kept():
    df = el.load(str(REAL), runs=[RUN], warn=False)
    sources = [Path(a["source"]).name for a in el.row_accounts(df)]
    assert sources == [f"{RUN}.parquet"]
    assert sum(a["rows_kept"] for a in el.row_accounts(df)) == len(df)


def test_the_demo_counts_the_values_of_its_runs_only():
    df = el.load(str(REAL), runs=[RUN], warn=False)
    text = str(el.overview(df, sources=["data/real"], fit_frac=0.15))
    assert text.splitlines()[0] == f"Read 1 run from data/real: {len(df):,} values kept, dropped: none."
