"""The embedded simulated cluster: SQLite-backed, on a virtual clock, seedable (SPEC X2)."""
