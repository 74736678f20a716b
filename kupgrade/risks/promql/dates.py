"""PromQL's date functions (year(), day_of_week(), ...) for any float, as Go computes them:
int64 conversion as on amd64, and the proleptic Gregorian calendar past what the C
library's gmtime holds."""

from __future__ import annotations

import math
import time as _time


def date_part(name: str, v: float) -> float:
    if math.isnan(v) or math.isinf(v):
        return math.nan
    seconds = int(v) if -(2**63) <= v < 2**63 else -(2**63)  # Go's int64(v) on amd64
    try:
        tm = _time.gmtime(seconds)
        year, month, mday, yday = tm.tm_year, tm.tm_mon, tm.tm_mday, tm.tm_yday
        wday, hour, minute = (tm.tm_wday + 1) % 7, tm.tm_hour, tm.tm_min  # Go: Sunday = 0
    except (OverflowError, OSError, ValueError):
        # Past what the C library's gmtime holds: the proleptic Gregorian calendar by hand.
        year, month, mday, yday = _civil(seconds // 86400)
        wday = (seconds // 86400 + 4) % 7  # 1970-01-01 was a Thursday
        hour, minute = seconds % 86400 // 3600, seconds % 3600 // 60
    if name == "days_in_month":
        return float(_days_in_month(year, month))
    return float(
        {
            "day_of_month": mday,
            "day_of_week": wday,
            "day_of_year": yday,
            "hour": hour,
            "minute": minute,
            "month": month,
            "year": year,
        }[name]
    )


def _civil(days: int) -> tuple[int, int, int, int]:
    """(year, month, day, day of year) of a day count from 1970-01-01 (H. Hinnant's
    days_from_civil inverse), exact for any integer."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    year = yoe + era * 400 + (1 if month <= 2 else 0)
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    before = (0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)[month - 1]
    return year, month, day, before + day + (1 if leap and month > 2 else 0)


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31
