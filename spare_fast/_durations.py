"""The one duration syntax of the package: ``"60s"``, ``"5min"``, ``"1h30min"`` or seconds.

A bottom-floor module: it imports nothing of the package, so that the option parsers of
:mod:`spare_fast._validation` and :func:`spare_fast.theory.plan.parse_duration` (its public
address) share it without an import running back up.
"""

from __future__ import annotations

import datetime as dt
import re

__all__ = ["parse_duration"]

_UNITS = {
    "ms": 1e-3,
    "s": 1.0,
    "sec": 1.0,
    "secs": 1.0,
    "second": 1.0,
    "seconds": 1.0,
    "m": 60.0,
    "min": 60.0,
    "mins": 60.0,
    "minute": 60.0,
    "minutes": 60.0,
    "h": 3600.0,
    "hr": 3600.0,
    "hrs": 3600.0,
    "hour": 3600.0,
    "hours": 3600.0,
    "d": 86400.0,
    "day": 86400.0,
    "days": 86400.0,
}
# A number (1, 1.5, .5, 1e9, 2.5E+3) and an optional unit; the exponent is matched first so
# that "1e9" is 10^9 seconds, not 1 and a unit "e".
_TOKEN = re.compile(r"\s*((?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*([a-zA-Z]*)")


def parse_duration(text: str) -> dt.timedelta:
    """Parse ``"60s"``, ``"5min"``, ``"1h"``, ``"1h30min"`` or a bare number of seconds.

    Parameters
    ----------
    text : str
        One or more ``<number><unit>`` tokens; units ms, s, m/min, h, d (and long forms).

    Returns
    -------
    datetime.timedelta

    Raises
    ------
    ValueError
        If the text is empty, has an unknown unit or anything left over.

    Examples
    --------
    >>> parse_duration("5min").total_seconds(), parse_duration("1h30min").total_seconds()
    (300.0, 5400.0)
    >>> parse_duration("1e9").total_seconds(), parse_duration("90").total_seconds()
    (1000000000.0, 90.0)
    """
    s = text.strip()
    if not s:
        raise ValueError("duration is empty; use e.g. 60s, 5min or 1h")
    total, pos = 0.0, 0
    while pos < len(s):
        m = _TOKEN.match(s, pos)
        if m is None or m.end() == pos:
            raise ValueError(f"cannot parse duration {text!r} at {s[pos:]!r}; use e.g. 60s")
        number, unit = m.groups()
        unit = unit.lower() or "s"
        if unit not in _UNITS:
            raise ValueError(f"unknown unit {unit!r} in duration {text!r}; use ms, s, min, h or d")
        total += float(number) * _UNITS[unit]
        pos = m.end()
        while pos < len(s) and s[pos].isspace():
            pos += 1
    return dt.timedelta(seconds=total)
