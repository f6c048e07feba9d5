"""Run names within one source: unique, and never a suffix onto a name another run has."""

from entropylaw.readers.names import unique_run_ids


def test_a_suffix_never_lands_on_a_name_already_taken():
    # "a" twice more: a-2 and a-3 belong to other runs, so the copies become a-4 and a-5
    out = unique_run_ids(["a-2", "a", "a", "b", "a", "a-3"])
    assert out == ["a-2", "a", "a-4", "b", "a-5", "a-3"]
    assert len(set(out)) == len(out)


def test_distinct_names_are_kept():
    assert unique_run_ids(["x", "y", "z"]) == ["x", "y", "z"]
    assert unique_run_ids([]) == []
