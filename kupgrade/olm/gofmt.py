"""Go's text for decoded JSON values, where opm's messages print them: fmt's %v and %t
verbs and strconv.FormatFloat(f, 'g', -1, bits).

Hand-written because opm formats a wrongly typed meta key with `%t: %v`
(operator-registry alpha/declcfg/declcfg.go extractUniqueMetaKeys) and sigs.k8s.io/yaml
names float map keys with FormatFloat; Python prints neither form. A value here is what
Go's encoding/json gives an `interface{}`: nil, bool, float64 (a Python int counts as
one), string, []interface{} or map[string]interface{}.
"""

from __future__ import annotations

import math
import struct
from decimal import Decimal
from typing import Any

_SHORTEST_EPREC = 6  # strconv: "if precision was the shortest possible, use precision 6"


def go_g(value: float, bits: int = 64) -> str:
    """strconv.FormatFloat(value, 'g', -1, bits): the shortest digits that read back."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0"
    text = _shortest(abs(value), bits)
    digits_tuple, exponent = Decimal(text).normalize().as_tuple()[1:]
    digits = "".join(map(str, digits_tuple))
    point = len(digits) + int(exponent)  # where the decimal point falls in `digits`
    exp = point - 1
    if exp < -4 or exp >= _SHORTEST_EPREC:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


def _shortest(value: float, bits: int) -> str:
    if bits == 64:
        return repr(value)
    single = struct.unpack("f", struct.pack("f", value))[0]
    for precision in range(1, 10):
        text = f"{single:.{precision}g}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == single:
            return text
    return repr(single)


def go_v(value: Any) -> str:
    """fmt's %v of a decoded JSON value."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return go_g(float(value))
    if isinstance(value, list):
        return "[" + " ".join(go_v(v) for v in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_v(value[k])}" for k in sorted(value)) + "]"
    return str(value)


def go_t(value: Any) -> str:
    """fmt's %t of a decoded JSON value: a bool as itself, anything else as Go's
    bad-verb text (`%!t(float64=5)`), element by element inside slices and maps."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "%!t(<nil>)"
    if isinstance(value, list):
        return "[" + " ".join(go_t(v) for v in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{go_t(k)}:{go_t(value[k])}" for k in sorted(value)) + "]"
    kind = "float64" if isinstance(value, int | float) else "string"
    return f"%!t({kind}={go_v(value)})"
