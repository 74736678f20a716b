"""`make bench`: run as `python -m bench.run` from the repository root (no sys.path tricks)."""
