"""When the process pool reads a project: the rule (a pure function of the pieces' estimated
costs and the processes allowed), and the same table whichever path it picks. No timings."""

from __future__ import annotations

from pathlib import Path

import pytest

from entropylaw.readers.pool import (MARGIN, PER_MB_S, PIECE_S, UNMEASURED_MB_S, WORKER_START_S, _format_and_size,
                                    choose_workers, load_parallel, piece_seconds, plan, pool_seconds)

REAL = Path(__file__).resolve().parents[1] / "data" / "real"


def test_piece_seconds_by_format_and_size():
    assert piece_seconds("wandb_offline", 0.0) == PIECE_S
    assert piece_seconds("wide", 10.0) == pytest.approx(PIECE_S + 10 * PER_MB_S["wide"])
    assert piece_seconds("unheard-of", 10.0) == pytest.approx(PIECE_S + 10 * UNMEASURED_MB_S)  # the cheapest
    assert UNMEASURED_MB_S == min(PER_MB_S.values())


@pytest.mark.parametrize("costs, most, workers", [
    ([], 4, 1),                        # nothing to read
    ([5.0], 4, 1),                     # one piece: nothing to share
    ([0.5] * 40, 1, 1),                # one process allowed
    ([0.5] * 40, 2, 2),
    ([0.5] * 40, 4, 4),
    ([0.01] * 4, 8, 1),                # tiny: the workers' start outweighs the reading
    ([10.0] + [0.01] * 10, 4, 1),      # one piece is nearly all the work: the pool waits for it
])
def test_choose_workers(costs, most, workers):
    assert choose_workers(costs, most) == workers


def test_choose_workers_at_the_margin():
    # two equal pieces of c s: a pool of 2 takes 2 * start + c against 2 c in one process
    at = WORKER_START_S * 2 / (2 * MARGIN - 1)  # where 2 * start + c == MARGIN * 2 c
    assert choose_workers([at * 1.01] * 2, 2) == 2
    assert choose_workers([at * 0.99] * 2, 2) == 1
    assert pool_seconds([1.0, 1.0], 2) == pytest.approx(2 * WORKER_START_S + 1.0)


def test_plan_of_the_shipped_runs_and_a_bad_piece(tmp_path):
    p = plan([str(REAL)], most=2)
    assert len(p.pieces) == len(p.costs) == 20 and all(c > PIECE_S for c in p.costs)
    assert p.workers == choose_workers(p.costs, 2) and str(p).startswith(("one process: 20 pieces", "a 2-process"))
    assert plan([str(REAL)], most=1).workers == 1 and "1 process allowed" in str(plan([str(REAL)], most=1))
    assert _format_and_size(str(tmp_path / "missing.log")) == ("", 0)  # the read says why, not the plan


def test_every_path_reads_the_same_table():
    chosen, chosen_reports = load_parallel([str(REAL)])
    one, one_reports = load_parallel([str(REAL)], workers=1)
    two, two_reports = load_parallel([str(REAL)], workers=2)
    assert chosen.equals(one) and two.equals(one)
    assert [r.to_dict() for r in chosen_reports] == [r.to_dict() for r in one_reports] == \
        [r.to_dict() for r in two_reports]
