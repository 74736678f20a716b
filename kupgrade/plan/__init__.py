"""Planners: update paths through a graph, fleet plans, estimates (SPEC H, X1, X2)."""
