"""Fleets of simulated clusters on one virtual clock, rehearsing a plan (SPEC X5)."""
