"""The cluster version controller (SPEC A, C, D): status, history, preconditions, the sync loop."""
