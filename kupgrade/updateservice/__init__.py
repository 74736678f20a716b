"""The Cincinnati-compatible update service: graph state, the builder process and its
immutable snapshots, replicas, metrics, OpenAPI and the graph console."""
