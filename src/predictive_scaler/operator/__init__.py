"""The kopf operator: handlers (thin) and the adapters to Kubernetes and Prometheus (all I/O)."""
