"""Release payloads: OCI images, manifests and their inclusion rules, the task graph, signatures (SPEC B, C3-C5, D)."""
