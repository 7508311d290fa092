"""Tests of the benchmarks' own arithmetic: windows, origins, scores and costs."""
