"""`python -m kupgrade` runs the CLI."""

from kupgrade.cli.main import run

if __name__ == "__main__":  # not when a worker process imports it (multiprocessing)
    run()
