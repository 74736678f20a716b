"""An embedded PromQL instant-query engine with Prometheus 2.42's semantics.

No Python library evaluates PromQL: `promql-parser` (a binding of the Rust parser)
gives the syntax tree and its type checks, and this package evaluates that tree over a
metrics snapshot the way the Prometheus engine does, down to the evaluation order that
decides ties in `topk` and the errors of vector matching.
"""

from kupgrade.risks.promql.engine import evaluate, evaluate_text
from kupgrade.risks.promql.errors import PromQLError
from kupgrade.risks.promql.snapshot import Snapshot, parse_snapshot
from kupgrade.risks.promql.snapshot_file import load_snapshot
from kupgrade.risks.promql.values import Matrix, Scalar, String, Vector, to_api

__all__ = [
    "Matrix",
    "PromQLError",
    "Scalar",
    "Snapshot",
    "String",
    "Vector",
    "evaluate",
    "evaluate_text",
    "load_snapshot",
    "parse_snapshot",
    "to_api",
]
