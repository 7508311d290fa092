"""Pure replay of load traces through scaling and forecasting (backtests, benchmarks). Issue 3."""
