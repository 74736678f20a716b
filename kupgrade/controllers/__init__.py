"""Reconcilers: observe, decide, act, record (SPEC A, C, D, E)."""
