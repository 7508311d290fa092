"""Concrete forecasting models; import them through the registry."""
