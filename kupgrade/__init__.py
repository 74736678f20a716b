"""kupgrade: serve, plan and carry out upgrades of Kubernetes-based clusters."""

__version__ = "0.1.0"
