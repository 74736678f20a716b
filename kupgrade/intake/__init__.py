"""One safe way in for every file and every response kupgrade reads.

Bytes are read only from regular files and only up to a size limit, decoded as UTF-8 with
an error naming the source and the byte offset, and parsed as JSON or YAML with bounded
nesting, bounded alias expansion and (YAML) refused duplicate keys. Every reader in the
package goes through here, so a hostile input ends in one line of error, never in a
traceback, a hang or runaway memory. The limits come from the environment (`limits.py`), so
a user with a legitimately huge input can raise them.
"""

from __future__ import annotations

from kupgrade.intake.files import read_file, require_regular
from kupgrade.intake.jsondoc import check_depth, decode_json, decode_json_stream
from kupgrade.intake.limits import LimitError
from kupgrade.intake.text import decode_utf8
from kupgrade.intake.yamldoc import YamlError, guarded_loader, load_yaml, load_yaml_all

__all__ = [
    "LimitError",
    "YamlError",
    "check_depth",
    "decode_json",
    "decode_json_stream",
    "decode_utf8",
    "guarded_loader",
    "load_yaml",
    "load_yaml_all",
    "read_file",
    "require_regular",
]
