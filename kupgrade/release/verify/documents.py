"""The signed JSON of an atomic container signature and the version controller's rules
for it (SPEC C3): strict schema, the digest it names, the identity it must have."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from kupgrade import intake
from kupgrade.errors import InputError, KupgradeError
from kupgrade.intake.jsondoc import go_json_type

SIGNATURE_TYPE = "atomic container signature"
MAX_SIGNATURES = 9  # signature-1 … signature-9, as the controller searches
# containers/image's iolimits.MaxSignatureBodySize: a larger signature is refused unread.
MAX_SIGNATURE_BYTES = 4 * 1024 * 1024
CACHE_SIZE = 64
VALID_DIGEST = re.compile(r"^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$")
VERIFICATION_ANNOTATION = "release.openshift.io/verification-config-map"
Clock = Callable[[], float]

_SCHEMA: dict[str, Any] = {
    "critical": {
        "type": str,
        "image": {"docker-manifest-digest": str},
        "identity": {"docker-reference": str},
    },
    "optional": {"creator": str, "timestamp": int},
}


class VerificationError(KupgradeError):
    """The digest is not verified; `errors` holds why each signature was rejected."""

    def __init__(self, message: str, errors: list[str] | None = None) -> None:
        super().__init__(message, rule="SPEC C3")
        self.errors = errors or []

    def detail(self) -> str:
        return "; ".join(self.errors)


class SignatureRejectedError(Exception):
    """One signature does not satisfy one keyring."""


# --- the signed JSON --------------------------------------------------------------------------


def signature_document(digest: str, reference: str, creator: str, timestamp: int) -> bytes:
    doc = {
        "critical": {
            "type": SIGNATURE_TYPE,
            "image": {"docker-manifest-digest": digest},
            "identity": {"docker-reference": reference},
        },
        "optional": {"creator": creator, "timestamp": timestamp},
    }
    return json.dumps(doc, indent=2).encode()


def _strict(value: Any, schema: Any, path: str) -> Any:
    """Decode like Go's json with DisallowUnknownFields (keys match case-insensitively)."""
    if value is None:
        return None
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            raise SignatureRejectedError(
                f"json: cannot unmarshal {go_json_type(value)} into Go struct field {path} of type object"
            )
        out: dict[str, Any] = {}
        for key, item in value.items():
            match = (
                key
                if key in schema
                else next((k for k in schema if k.lower() == key.lower()), None)
            )
            if match is None:
                raise SignatureRejectedError(f'json: unknown field "{key}"')
            out[match] = _strict(item, schema[match], f"{path}.{match}" if path else match)
        return out
    if schema is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise SignatureRejectedError(
                f"json: cannot unmarshal {go_json_type(value)} into Go struct field {path} of type int64"
            )
        return value
    if not isinstance(value, str):
        raise SignatureRejectedError(
            f"json: cannot unmarshal {go_json_type(value)} into Go struct field {path} of type string"
        )
    return value


def check_signed_content(content: bytes, digest: str) -> None:
    """The atomic container signature rules; raises SignatureRejectedError with the controller's text."""
    try:
        value, _ = json.JSONDecoder().raw_decode(content.decode("utf-8").lstrip())
        intake.check_depth(value, "signature")
        doc = _strict(value, _SCHEMA, "") or {}
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SignatureRejectedError(f"the signature is not valid JSON: {exc}") from None
    except ValueError:
        raise SignatureRejectedError(
            "the signature is not valid JSON: a number has too many digits"
        ) from None
    except (RecursionError, InputError):
        raise SignatureRejectedError(
            "the signature is not valid JSON: it is nested too deeply"
        ) from None
    except SignatureRejectedError as exc:
        raise SignatureRejectedError(f"the signature is not valid JSON: {exc}") from None
    critical = doc.get("critical") or {}
    if critical.get("type") != SIGNATURE_TYPE:
        raise SignatureRejectedError("signature is not the correct type")
    if not (critical.get("identity") or {}).get("docker-reference"):
        raise SignatureRejectedError("signature must have an identity")
    if (critical.get("image") or {}).get("docker-manifest-digest") != digest:
        raise SignatureRejectedError("signature digest does not match")
