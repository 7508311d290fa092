"""A real control plane with kwok nodes and Prometheus on loopback, for tests and the demo."""
