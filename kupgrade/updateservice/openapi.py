"""The OpenAPI 3 document of the policy-engine API, with the path prefix in its paths."""

from __future__ import annotations

from typing import Any

from kupgrade import __version__
from kupgrade.graph.policy import ARCH_PATTERN, CHANNEL_PATTERN

_ERROR = {"$ref": "#/components/schemas/Error"}
_GRAPH = {"$ref": "#/components/schemas/Graph"}


def _graph_operation() -> dict[str, Any]:
    return {
        "summary": "The update graph of one channel and architecture",
        "parameters": [
            {
                "name": "channel",
                "in": "query",
                "required": True,
                "schema": {"type": "string", "pattern": CHANNEL_PATTERN},
                "description": "Channel to filter by, e.g. stable-4.14.",
            },
            {
                "name": "arch",
                "in": "query",
                "required": False,
                "schema": {"type": "string", "pattern": ARCH_PATTERN, "default": "amd64"},
                "description": "Architecture; the +arch build suffix is stripped from versions.",
            },
            {"name": "id", "in": "query", "required": False, "schema": {"type": "string"}},
            {"name": "version", "in": "query", "required": False, "schema": {"type": "string"}},
        ],
        "responses": {
            "200": {
                "description": "The filtered update graph",
                "content": {
                    "application/json": {"schema": _GRAPH},
                    "application/vnd.redhat.cincinnati.v1+json": {"schema": _GRAPH},
                },
            },
            "304": {"description": "Not modified (If-None-Match matched the ETag)"},
            "400": {
                "description": "Missing or invalid parameters",
                "content": {"application/json": {"schema": _ERROR}},
            },
            "406": {
                "description": "Unsupported Accept header",
                "content": {"application/json": {"schema": _ERROR}},
            },
            "500": {
                "description": "The graph cannot be served",
                "content": {"application/json": {"schema": _ERROR}},
            },
        },
    }


def openapi_document(prefix: str) -> dict[str, Any]:
    operation = _graph_operation()
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "kupgrade update service (Cincinnati policy-engine API)",
            "version": __version__,
            "license": {"name": "Apache-2.0"},
        },
        "paths": {
            f"{prefix}/graph": {"get": operation},
            f"{prefix}/v1/graph": {"get": operation},
        },
        "components": {
            "schemas": {
                "Error": {
                    "type": "object",
                    "required": ["kind", "value"],
                    "properties": {"kind": {"type": "string"}, "value": {"type": "string"}},
                },
                "Graph": {
                    "type": "object",
                    "required": ["version", "nodes", "edges"],
                    "properties": {
                        "version": {"type": "integer"},
                        "nodes": {"type": "array", "items": {"type": "object"}},
                        "edges": {
                            "type": "array",
                            "items": {"type": "array", "items": {"type": "integer"}},
                        },
                        "conditionalEdges": {"type": "array", "items": {"type": "object"}},
                    },
                },
            }
        },
    }
