"""The seasons a workload's load really repeats (daily, weekly, or none), and their profiles.

Found on the long history (days to weeks at a coarse step), on the selection
schedule. A season counts as present when the load one period ago resembles
the load now clearly more than it resembles the load at off-phase lags:

* **robust**: values are winsorised (median +/- 5 MAD) so one spike or outage
  cannot make or break a season, missing samples are skipped pair by pair
  (no interpolation inventing a pattern), and the series is detrended with a
  straight line so growth over the weeks does not read as repetition;
* **against off-phase lags**: a random walk or a slow drift correlates with
  itself at every lag; a season correlates at its period *more* than at a
  quarter, half and three quarters of it. A week is compared with whole
  days (1..6 d) when a daily season is present, so the daily season alone
  does not read as a weekly one;
* **two cycles at least**: below that nothing can be told apart, and the
  caller says how much history is still missing (:func:`history_needed`,
  :mod:`.known_seasons`).

A profile is the median seasonal deviation per phase from the local level
(a centred moving average over the shortest season), phases counted from
time zero of the series' clock, so it lines up with any window of the same
clock at any step.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from predictive_scaler.forecasting.forecast import FloatArray

IntArray = NDArray[np.int64]

DAY = 86_400.0
WEEK = 7 * DAY
CANDIDATE_PERIODS = (DAY, WEEK)
MIN_CYCLES = 2
# A history reaches back as far as at least this share of its samples is real: a
# quarter keeps a load defined only by day, and drops a stray sample a week before
# two days of load (one real sample in ten).
MIN_REAL_SHARE = 0.25
# The tests run on bin means, this many per shortest candidate season.
BINS_PER_SEASON = 12
# Autocorrelation of the changes at the period, and its excess over off-phase
# lags, must reach this, and three standard errors on the pairs available.
MIN_PEAK = 0.1
WINSOR_MADS = 5.0
# A season found at the last selection stays found until its repetition falls
# below this share of the threshold that found it (hysteresis: found at three
# standard errors, kept while above two). Near the threshold a plain test
# flipped twice in 72 hourly selections of one load, and each flip changes the
# forecast's pathways and the condition's words; a season really gone reads
# below two standard errors at once (noise exceeds them 2 % of the time).
HELD_SHARE = 2.0 / 3.0
# Changes are clipped further out: a weekly step (the weekend) is one rare
# large change that must survive; spikes are already gone in the bin medians.
CHANGE_WINSOR_MADS = 10.0
# A weekly phase has few samples (two in two weeks): average it over about this long.
PROFILE_SMOOTHING_SECONDS = 3600.0


@dataclass(frozen=True)
class TimedSeries:
    """Samples ``step_seconds`` apart, oldest first, the last at ``end_time``; NaN = missing."""

    values: FloatArray
    step_seconds: float
    end_time: float

    @property
    def start_time(self) -> float:
        return self.end_time - (self.values.size - 1) * self.step_seconds

    def until(self, time: float) -> TimedSeries:
        """The samples taken at or before ``time``."""
        kept = math.floor((time - self.start_time) / self.step_seconds) + 1
        kept = min(max(kept, 0), self.values.size)
        return TimedSeries(
            self.values[:kept], self.step_seconds, self.start_time + (kept - 1) * self.step_seconds
        )

    @property
    def observed_seconds(self) -> float:
        """How far back from its newest real sample the history really reaches.

        The longest stretch ending at the newest real sample of which at least
        MIN_REAL_SHARE of the samples are real: a stray sample days before the
        rest (an old pod of the same name, a brief scrape) adds no days a season
        could be learnt from, while outages, and a load that is only defined by
        day (a latency quantile, NaN without traffic), still count as spanned.
        """
        observed = np.isfinite(self.values)
        finite = np.flatnonzero(observed)
        if finite.size == 0:
            return 0.0
        newest = int(finite[-1])
        # Real samples from each index to the newest, over the samples in that stretch.
        real_after = np.cumsum(observed[: newest + 1][::-1])[::-1]
        stretch = newest + 1 - np.arange(newest + 1)
        spanned = real_after >= MIN_REAL_SHARE * stretch
        reaching = np.flatnonzero(observed[: newest + 1] & spanned)
        return float(newest - reaching[0] + 1) * self.step_seconds


@dataclass(frozen=True)
class SeasonFinding:
    """What was learnt about one candidate period."""

    period_seconds: float
    present: bool
    strength: float  # autocorrelation at the period minus its mean at off-phase lags
    cycles: float  # how many periods the history spans


@dataclass(frozen=True)
class SeasonalProfile:
    """Seasonal deviations from the level, per phase of each season, in the series' clock.

    ``components[i]`` holds one value per ``step_seconds`` of ``periods[i]``;
    phase 0 is time ``offset_seconds``: where the learnt samples lay within
    their step (a rate over a long step, placed like the recent window's, sits
    minutes off the step's grid). :meth:`along` sums them at any times,
    interpolating between phases, so a profile learnt at 5 minutes serves a
    1-minute window.
    """

    periods: tuple[float, ...]
    step_seconds: float
    components: tuple[FloatArray, ...]
    offset_seconds: float = 0.0

    def along(self, times: ArrayLike) -> FloatArray:
        at = np.asarray(times, dtype=np.float64) - self.offset_seconds
        total = np.zeros(at.shape)
        for period, component in zip(self.periods, self.components, strict=True):
            phases = np.arange(component.size + 1) * self.step_seconds
            cyclic = np.append(component, component[0])
            total += np.interp(np.mod(at, period), phases, cyclic)
        return total


def winsorised(values: FloatArray, mads: float = WINSOR_MADS) -> FloatArray:
    finite = values[np.isfinite(values)]
    median = float(np.median(finite))
    spread = 1.4826 * float(np.median(np.abs(finite - median)))
    if spread <= 0.0:
        return values.copy()
    return np.clip(values, median - mads * spread, median + mads * spread)


def lag_correlation(values: FloatArray, lag: int) -> float:
    """Pearson correlation of the series with itself ``lag`` steps earlier, on complete pairs."""
    if lag <= 0 or lag >= values.size:
        return float("nan")
    now, before = values[lag:], values[:-lag]
    pairs = np.isfinite(now) & np.isfinite(before)
    if pairs.sum() < 3:
        return float("nan")
    a, b = now[pairs] - now[pairs].mean(), before[pairs] - before[pairs].mean()
    spread = math.sqrt(float(np.dot(a, a)) * float(np.dot(b, b)))
    return float(np.dot(a, b) / spread) if spread > 0.0 else float("nan")


def _binned(history: TimedSeries, bin_seconds: float) -> FloatArray:
    """Medians over bins of ``bin_seconds`` aligned to the clock; NaN where a bin has no sample.

    Medians, not means: a few spikes inside a bin leave it unchanged.
    """
    per_bin = max(1, round(bin_seconds / history.step_seconds))
    first = round(history.start_time / history.step_seconds)
    lead = (-first) % per_bin  # samples before the first whole bin
    values = np.asarray(history.values[lead:], dtype=np.float64)
    return _grouped(values, per_bin)


def _grouped(levels: FloatArray, group: int) -> FloatArray:
    """Medians of consecutive groups of ``group`` values; NaN where a group has none."""
    if group == 1:
        return levels
    whole = levels.size // group
    grid = levels[: whole * group].reshape(whole, group)
    medians = np.full(whole, np.nan)
    filled = np.isfinite(grid).any(axis=1)
    medians[filled] = np.nanmedian(grid[filled], axis=1)
    return medians


@dataclass(frozen=True)
class Repetition:
    """How the changes of a series repeat at one period (see the module doc)."""

    present: bool
    peak: float  # their correlation at the period
    strength: float  # the peak minus its mean at a quarter, half and three quarters of it


def repeats_at(changes: FloatArray, period: int, share: float = 1.0) -> Repetition:
    """Whether ``changes`` repeat at ``period`` steps, by how much, and how clearly.

    ``share`` scales the threshold (HELD_SHARE for a season found before).
    """
    peak = lag_correlation(changes, period)
    off = [lag_correlation(changes, round(period * f)) for f in (0.25, 0.5, 0.75)]
    strength = peak - float(np.nanmean(off)) if np.isfinite(off).any() else float("nan")
    pairs = int((np.isfinite(changes[period:]) & np.isfinite(changes[:-period])).sum())
    # Three standard errors of a correlation on this many independent pairs.
    significant = share * max(MIN_PEAK, 3.0 / math.sqrt(max(pairs, 1)))
    return Repetition(bool(peak >= significant and strength >= significant), peak, strength)


def find_seasons(
    history: TimedSeries,
    candidates: Sequence[float] = CANDIDATE_PERIODS,
    held: Sequence[float] = (),
) -> tuple[SeasonFinding, ...]:
    """One finding per candidate period (shortest first); see the module doc for the test.

    ``held``: the periods found last time, which stay found on weaker evidence
    (HELD_SHARE of the threshold).
    """
    periods = sorted(candidates)
    bin_seconds = max(history.step_seconds, periods[0] / BINS_PER_SEASON)
    levels = _binned(history, bin_seconds)
    span = history.observed_seconds
    findings: list[SeasonFinding] = []
    for period_seconds in periods:
        # Each season is tested at its own resolution (12 bins a period), on
        # what the shorter seasons found leave (as MSTL does).
        group = max(1, round(period_seconds / BINS_PER_SEASON / bin_seconds))
        coarse = _grouped(levels, group)
        period = round(period_seconds / (bin_seconds * group))
        cycles = span / period_seconds
        present, strength = False, float("nan")
        if np.isfinite(coarse).sum() >= 3 and period >= 4 and cycles >= MIN_CYCLES:
            changes = winsorised(np.diff(coarse), CHANGE_WINSOR_MADS)
            share = HELD_SHARE if period_seconds in held else 1.0
            repetition = repeats_at(changes, period, share)
            present, strength = repetition.present, repetition.strength
        if present:
            fine_period = round(period_seconds / bin_seconds)
            phases = np.arange(levels.size) % fine_period
            levels = levels - _phase_medians(levels, phases, fine_period)[phases]
        findings.append(SeasonFinding(period_seconds, present, strength, cycles))
    return tuple(findings)


def _centred_mean(values: FloatArray, window: int) -> FloatArray:
    """Moving average over ``window`` steps, centred, skipping NaN, shorter at the edges."""
    finite = np.isfinite(values)
    kernel = np.ones(window)
    sums = np.convolve(np.where(finite, values, 0.0), kernel, mode="same")
    counts = np.convolve(finite.astype(np.float64), kernel, mode="same")
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / counts, np.nan)


def _phase_medians(values: FloatArray, phases: IntArray, size: int) -> FloatArray:
    """The median of each phase's finite values (missing phases interpolated around the cycle).

    One sort of a (cycles, phases) table instead of a median per phase: a week at 5 min is
    2,016 phases, and a median call for each took ~36 ms of a fresh selection on 14 days. The middle
    pair is averaged as ``np.median`` averages it, so the medians are the same to the bit.
    """
    order = np.argsort(phases, kind="stable")
    sorted_phases = phases[order]
    # Infinities are no observation either: NaN sorts them last with the missing.
    sorted_values = np.where(np.isfinite(values), values, np.nan)[order]
    bounds = np.searchsorted(sorted_phases, np.arange(size + 1))
    counts = np.diff(bounds)
    table = np.full((max(int(counts.max(initial=0)), 1), size), np.nan)
    table[np.arange(sorted_phases.size) - bounds[sorted_phases], sorted_phases] = sorted_values
    table.sort(axis=0)  # NaN last
    finite = np.isfinite(table).sum(axis=0)
    columns = np.arange(size)
    low = table[np.maximum(finite - 1, 0) // 2, columns]
    high = table[finite // 2, columns]
    medians = np.where(finite > 0, np.mean([low, high], axis=0), np.nan)
    if np.isnan(medians).all():
        return np.zeros(size)
    known = np.flatnonzero(np.isfinite(medians))
    return np.interp(np.arange(size), known, medians[known], period=size)


def _circular_smooth(values: FloatArray, window: int) -> FloatArray:
    if window <= 1:
        return values
    padded = np.concatenate([values[-window:], values, values[:window]])
    smoothed = np.convolve(padded, np.ones(window) / window, mode="same")
    return np.asarray(smoothed[window:-window], dtype=np.float64)


def learn_profile(history: TimedSeries, periods: Sequence[float]) -> SeasonalProfile | None:
    """The profile of ``periods`` (shortest first, each learnt on what the shorter leave)."""
    usable = sorted(p for p in periods if round(p / history.step_seconds) >= 2)
    values = np.asarray(history.values, dtype=np.float64)
    if not usable or np.isfinite(values).sum() < 3:
        return None
    step = history.step_seconds
    clipped = winsorised(values)
    remainder = clipped - _centred_mean(clipped, round(usable[0] / step))
    steps = np.arange(values.size)
    first = round(history.start_time / step)
    absolute = first + steps
    components: list[FloatArray] = []
    for rank, period_seconds in enumerate(usable):
        size = round(period_seconds / step)
        component = _phase_medians(remainder, (absolute % size).astype(np.int64), size)
        if rank:  # later seasons have few samples per phase: smooth them
            component = _circular_smooth(component, round(PROFILE_SMOOTHING_SECONDS / step))
        component = component - component.mean()
        remainder = remainder - component[absolute % size]
        components.append(np.asarray(component, dtype=np.float64))
    return SeasonalProfile(
        tuple(usable), step, tuple(components), history.start_time - first * step
    )


def history_needed(period_seconds: float) -> float:
    """Seconds of long history needed before a season of this period can be found or used."""
    return MIN_CYCLES * period_seconds
