"""`python -m kupgrade` runs the CLI."""

from kupgrade.cli.main import run

if __name__ == "__main__":  # only when run, not when imported
    run()
