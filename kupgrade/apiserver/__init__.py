"""The Kubernetes API of a simulated cluster, as real clients (kubectl, oc) speak it."""
