"""Pure scaling policy: replicas from a forecast (lead time, headroom, behavior). Issue 3."""
