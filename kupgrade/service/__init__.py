"""The HTTP update service (Cincinnati-compatible policy-engine API), metrics and health."""
