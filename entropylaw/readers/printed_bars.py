"""A printed log's step lines beside a tqdm bar's displays with values in its postfix (:mod:`.kv_console`: a loop
that prints only its evaluations between the bars, ``tqdm.write("eval step 10 acc 0.31")``): the bar's rows read
with the printed lines in one run, or the file read as bars alone where their steps are out of line."""

from __future__ import annotations

from entropylaw.readers.common import RawRun
from entropylaw.readers.key_names import entropy_by_name, score_by_name
from entropylaw.readers.tqdm_bars import bar_rows, read_tqdm_console
from entropylaw.terminal import count


def with_bars_read(raw: RawRun, bars: list, below: set[int], percent: set[str], totals: set[int]) -> bool | None:
    """The training bar's rows (``tqdm_bars``' rules: its count, its redraws) put among the printed lines' in line
    order; its keys printed with % and its planned total added to the log's. False where the bar names no training
    entropy or score (another tool's); None where a printed step goes back beside the bar's count (an optimizer step
    beside a bar over micro-batches, an epoch): a count of its own."""
    report = raw.report
    said = report.rows_read, len(report.notes), len(report.changed)
    rows = bar_rows(bars, report, below=below)
    # another tool's bar (vLLM's speeds, a dataset's map) between an evaluation script's lines names no training value
    names = sorted(set(rows.keys)) if rows is not None else []
    named = bool(entropy_by_name(names, []) or score_by_name(names, []))
    steps, keys, values, lines = (list(a) + list(b) for a, b in zip((raw.steps, raw.keys, raw.values, raw.lines),
                                                                    rows or ([],) * 4))
    order = sorted(range(len(lines)), key=lines.__getitem__)
    behind = any(steps[b] < steps[a] for a, b in zip(order, order[1:]))  # in line order, taken for a resumed run
    if not named or behind:
        report.rows_read, report.notes[said[1]:], report.changed[said[2]:] = said[0], [], []
        return None if named else False
    raw.steps, raw.keys, raw.values, raw.lines = ([a[i] for i in order] for a in (steps, keys, values, lines))
    percent |= rows.percent
    totals.update([rows.total] if rows.total else [])
    if rows.repeats:
        raw.repeats = "last"  # a postfix set again at one count: the last stands, as in a file of bars alone
    return True


def bars_alone(path, values: int, evals: int, first: int) -> list[RawRun]:
    """The file read as bars alone, its printed evaluations' ``values`` said not read and counted dropped."""
    runs = read_tqdm_console(path)
    report = runs[0].report
    report.read(values)
    report.drop("an evaluation's step on a count of its own", values)
    report.note(f"{count(evals, 'line')} an evaluation printed (the first at step {first}): not read, their steps out "
                "of line with the bar's count (a count of their own: an optimizer step beside a bar over "
                "micro-batches, an epoch)")
    return runs
