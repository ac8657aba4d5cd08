# SPDX-License-Identifier: GPL-2.0
"""Helpers shared by bench.sh's summaries: key=value files and medians."""
import statistics


def kv(path):
    """key=value lines of a file ({} if it is missing)."""
    d = {}
    try:
        with open(path, errors="replace") as f:
            for line in f:
                k, sep, v = line.strip().partition("=")
                if sep and k.isidentifier():
                    d[k] = v
    except FileNotFoundError:
        pass
    return d


def num(d, k):
    """d[k] as a float, None if absent or not a number."""
    try:
        return float(d[k])
    except (KeyError, ValueError):
        return None


def med(vals):
    """Median of the values that are not None, None if there are none."""
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None
