"""Plain Kubernetes upgrades, kubeadm-style (SPEC H6)."""
