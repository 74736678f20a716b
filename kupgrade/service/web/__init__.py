"""The web console: the update graph, paths and known issues to look at (SPEC A3, X4)."""
