"""What a forecast says of its window's regime, in words (:mod:`.regimes` reads the regime and
applies the stored rates; this module only words them): the take-off's rates and whose they
are, and for instability the collapse risk with the rate at which such runs collapsed.

>>> warnings_for({"name": "saturation"}, {})
[]
"""

from __future__ import annotations

from entropylaw.fit.forecast.regimes import STAYED, on_floor
from entropylaw.fit.forecast.takeoff import CARRIED, carries_sweep, said, steady, takeoff_rates


def warnings_for(regime, rates) -> list[str]:
    """What the forecast says of its regime, in words: the regime, and for instability the
    collapse risk with the rate at which such runs collapsed."""
    name = regime["name"]
    out = [regime["data_switch"]] if regime.get("data_switch") else []
    if name == "saturation":
        return out
    take, whose = takeoff_rates(rates, regime)
    take, like = steady(take, regime)
    whose = f"{whose}, {like}" if like else whose
    if name == "take-off":
        if take:
            q = take["rho"]
            mine = f"the climb {CARRIED}" if carries_sweep(rates, regime) else \
                "the window's own climb where its method extrapolates it"
            out.append(f"take-off: {regime['why']}; where the climb stops is not in the window: {whose} in take-off "
                       f"{said(q[10], went=True)} (5-95 %: {said(q[1])} to {said(q[19])}) "
                       f"({take['cases']} windows of {take['runs']} runs, {len(take['recipes'])} "
                       f"recipe{'s' if len(take['recipes']) != 1 else ''}): the "
                       f"forecast follows them (mixed half and half with {mine}) and its "
                       "interval opens upward to what they reached")
        else:
            out.append(f"take-off: {regime['why']}; no rates learned for runs in take-off are stored: the forecast "
                       "extrapolates the window and may stop the climb too soon")
    floor = on_floor(regime, rates) if name == "instability" else None
    if floor:
        q = floor["reached"]
        out.append(f"collapse risk: {regime['why']}; the run is on its floor already (within 2 standard errors of a "
                   f"point): of "
                   f"{floor['cases']} windows of {floor['runs']} real runs ({len(floor['recipes'])} recipes) on their "
                   f"floor after such a fall, {floor['stayed']} ended within {STAYED:.0%} of the score's range of it "
                   f"(their 95 % point: {q[19]:.0%} of the range above it): the forecast is where they ended, not the "
                   "window's noise")
    elif name == "instability":
        ins = rates.get("instability")
        if ins:
            share = ins["collapsed"] / ins["cases"]
            out.append(f"collapse risk: {regime['why']}; of {ins['cases']} windows of {ins['runs']} real runs "
                       f"({len(ins['recipes'])} recipes) in this state, {ins['collapsed']} ({share:.0%}) ended below "
                       f"half their level ({ins['collapsed_runs']} runs collapsed): " +
                       ("the run is on its floor already (within 2 standard errors of a point), with little left "
                        "to lose: the widening toward the floor moves its interval little"
                        if regime.get("on_floor") else "the interval is widened downward"))
        else:
            out.append(f"collapse risk: {regime['why']}; no rates learned for such runs are stored: the interval "
                       "is not widened")
    return out
