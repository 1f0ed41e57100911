"""Statistics of paired figures (bench/README.md, "Paired figures").

A paired record holds, per series, one sample per round; the rounds of all
series were interleaved in one process (or, for first results, one run of
driver.py), so sample i of one series and sample i of another were taken
moments apart. A comparison is the median of the per-round differences (or
ratios), with a 95% percentile-bootstrap interval of that median.
"""

from __future__ import annotations

import random
from typing import Dict, List, Optional, Sequence

BOOTSTRAP_RESAMPLES = 2000
SEED = 20261125  # fixed, so the same records always give the same intervals


def median(v: Sequence[float]) -> float:
    s = sorted(v)
    n = len(s)
    if not n:
        raise ValueError("median of no values")
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def interval(values: Sequence[float], level: float = 0.95) -> Dict[str, float]:
    """Median of `values` and the bootstrap interval of that median."""
    v = list(values)
    n = len(v)
    if n == 0:
        raise ValueError("no values")
    rng = random.Random(SEED)
    meds = sorted(median([v[rng.randrange(n)] for _ in range(n)]) for _ in range(BOOTSTRAP_RESAMPLES))
    lo_i = int((1 - level) / 2 * BOOTSTRAP_RESAMPLES)
    hi_i = min(BOOTSTRAP_RESAMPLES - 1, int((1 + level) / 2 * BOOTSTRAP_RESAMPLES))
    return {"median": median(v), "lo": meds[lo_i], "hi": meds[hi_i], "n": n}


def differences(a: Sequence[float], b: Sequence[float]) -> List[float]:
    """Per-round a - b (the rounds both series have)."""
    n = min(len(a), len(b))
    return [a[i] - b[i] for i in range(n)]


def ratios(a: Sequence[float], b: Sequence[float]) -> List[float]:
    """Per-round a / b (rounds where b is positive)."""
    n = min(len(a), len(b))
    return [a[i] / b[i] for i in range(n) if b[i] > 0]


def compare(series: Dict[str, Sequence[float]], a: str, b: str, ratio: bool = False) -> Optional[Dict[str, float]]:
    """Median and interval of a - b (or a / b) over the rounds, or None when
    either series is missing or empty."""
    if a not in series or b not in series or not series[a] or not series[b]:
        return None
    vals = ratios(series[a], series[b]) if ratio else differences(series[a], series[b])
    return interval(vals) if vals else None


def judge_at_most(iv: Optional[Dict[str, float]], limit: float) -> str:
    """'met' when the whole interval is at or below `limit`, 'missed' when the
    whole interval is above it, 'undecided' when it straddles the limit."""
    if iv is None:
        return "not measured"
    if iv["hi"] <= limit:
        return "met"
    if iv["lo"] > limit:
        return "missed"
    return "undecided"


def judge_at_least(iv: Optional[Dict[str, float]], limit: float) -> str:
    if iv is None:
        return "not measured"
    if iv["lo"] >= limit:
        return "met"
    if iv["hi"] < limit:
        return "missed"
    return "undecided"


def compare_across(a: Sequence[float], b: Sequence[float], level: float = 0.95) -> Optional[Dict[str, float]]:
    """median(a) - median(b) for two samples taken in different processes (each
    already a paired difference against the same reference), with a bootstrap
    interval that resamples each independently."""
    if not a or not b:
        return None
    rng = random.Random(SEED)
    na, nb = len(a), len(b)
    d = sorted(median([a[rng.randrange(na)] for _ in range(na)]) -
               median([b[rng.randrange(nb)] for _ in range(nb)])
               for _ in range(BOOTSTRAP_RESAMPLES))
    lo_i = int((1 - level) / 2 * BOOTSTRAP_RESAMPLES)
    hi_i = min(BOOTSTRAP_RESAMPLES - 1, int((1 + level) / 2 * BOOTSTRAP_RESAMPLES))
    return {"median": median(a) - median(b), "lo": d[lo_i], "hi": d[hi_i], "n": min(na, nb)}
