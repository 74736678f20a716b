"""The distributed-cloud upgrade controller (SPEC G1, G6-G11)."""
