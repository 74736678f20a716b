"""The node controller (SPEC E): machine config pools rolled out node by node."""
