"""Image pull specs checked the way opm checks them (containers/image docker/reference
ParseNormalizedNamed plus go-digest), so a bad reference fails with the same words.

Written here because no Python library reproduces that grammar and its error texts.
"""

from __future__ import annotations

import re

_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_HOST = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[(?:[a-fA-F0-9:]+)\])"
_DOMAIN = rf"{_HOST}(?::[0-9]+)?"
_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*"
_NAME = rf"(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9a-fA-F]{32,}"
_REFERENCE = re.compile(rf"({_NAME})(?::({_TAG}))?(?:@({_DIGEST}))?", re.ASCII)
_IDENTIFIER = re.compile(r"[a-f0-9]{64}")
_DIGEST_LENGTHS = {"sha256": 64, "sha384": 96, "sha512": 128}
_NAME_TOTAL_LENGTH_MAX = 255


def reference_error(spec: str) -> str | None:
    """The error ParseNormalizedNamed gives for `spec`, or None when it is a valid name."""
    if _IDENTIFIER.fullmatch(spec):
        return f"invalid repository name ({spec}), cannot specify 64-byte hexadecimal strings"
    domain, remainder = _split_docker_domain(spec)
    remote = remainder.split(":", 1)[0]
    if remote.lower() != remote:
        return "invalid reference format: repository name must be lowercase"
    return _parse_error(f"{domain}/{remainder}")


def _split_docker_domain(name: str) -> tuple[str, str]:
    head, sep, tail = name.partition("/")
    if not sep or (
        not any(c in head for c in ".:") and head != "localhost" and head.lower() == head
    ):
        domain, remainder = "docker.io", name
    else:
        domain, remainder = head, tail
    if domain == "index.docker.io":
        domain = "docker.io"
    if domain == "docker.io" and "/" not in remainder:
        remainder = "library/" + remainder
    return domain, remainder


def _parse_error(text: str) -> str | None:
    match = _REFERENCE.fullmatch(text)
    if match is None:
        if not text:
            return "repository name must have at least one component"
        if _REFERENCE.fullmatch(text.lower()):
            return "invalid reference format: repository name must be lowercase"
        return "invalid reference format"
    if len(match.group(1)) > _NAME_TOTAL_LENGTH_MAX:
        return f"repository name must not be more than {_NAME_TOTAL_LENGTH_MAX} characters"
    digest = match.group(3)
    return _digest_error(digest) if digest else None


def _digest_error(digest: str) -> str | None:
    algorithm, _, encoded = digest.partition(":")
    length = _DIGEST_LENGTHS.get(algorithm)
    if length is None:
        return "unsupported digest algorithm"
    if len(encoded) != length:
        return "invalid checksum digest length"
    if not re.fullmatch(r"[a-f0-9]+", encoded):
        return "invalid checksum digest format"
    return None
