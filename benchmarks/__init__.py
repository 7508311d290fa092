"""Benchmarks that measure the library on real load traces and write BENCHMARKS.md."""
