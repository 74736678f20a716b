"""OLM on the cluster: subscriptions, install plans, CSVs (SPEC F)."""
