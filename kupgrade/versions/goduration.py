"""Go's time.Duration, as the reference tools print and round it (the cluster-version
operator's throttling messages, oc's `upgrade status` ages)."""

from __future__ import annotations

import math


def go_duration(seconds: float) -> str:
    """Go's `time.Duration.String()`: 18.061µs, 1.5s, 2m3s, 1h0m0s."""
    ns = round(seconds * 1e9)
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    if ns < 1_000:
        return f"{sign}{ns}ns"
    if ns < 1_000_000:
        return sign + _trim(ns, 1_000) + "µs"
    if ns < 1_000_000_000:
        return sign + _trim(ns, 1_000_000) + "ms"
    hours, rest = divmod(ns, 3_600_000_000_000)
    minutes, rest = divmod(rest, 60_000_000_000)
    text = _trim(rest, 1_000_000_000) + "s"
    if hours:
        return f"{sign}{hours}h{minutes}m{text}"
    if minutes:
        return f"{sign}{minutes}m{text}"
    return sign + text


def _trim(value: int, unit: int) -> str:
    whole, frac = divmod(value, unit)
    if not frac:
        return str(whole)
    digits = str(frac).rjust(len(str(unit)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}"


def go_truncate(seconds: float, unit: float) -> float:
    """time.Duration.Truncate: towards zero, to a multiple of `unit`."""
    return math.copysign(math.floor(abs(seconds) / unit) * unit, seconds)


def parse_go_duration(text: str) -> float:
    """A duration as Go's time.ParseDuration reads it (10m, 1h30m, 45s);
    0 when there is none or it does not parse."""
    seconds, number = 0.0, ""
    units = {"h": 3600.0, "m": 60.0, "s": 1.0}
    for char in text.strip():
        if char.isdigit() or char == ".":
            number += char
        elif char in units and number:
            try:
                seconds += float(number) * units[char]
            except ValueError:
                return 0.0
            number = ""
        else:
            return 0.0
    return 0.0 if number else seconds
