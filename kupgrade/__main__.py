"""`python -m kupgrade` runs the CLI."""

from kupgrade.cli.main import run

run()
