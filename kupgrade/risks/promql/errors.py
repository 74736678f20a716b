"""Errors of a PromQL evaluation, typed like the Prometheus HTTP API's `errorType`."""

from __future__ import annotations


class PromQLError(Exception):
    """A query that Prometheus would refuse: `bad_data` (parse) or `execution` (evaluation)."""

    def __init__(self, message: str, error_type: str = "execution") -> None:
        super().__init__(message)
        self.message = message
        self.error_type = error_type
