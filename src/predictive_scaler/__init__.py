"""predictive-scaler: scale Kubernetes workloads ahead of their forecast load."""

__version__ = "0.1.0"
