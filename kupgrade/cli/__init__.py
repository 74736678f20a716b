"""The command-line interface: one Typer module per area."""
