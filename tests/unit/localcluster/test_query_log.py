"""Reading Prometheus's query log: whole lines only, the PromQL of each."""

from __future__ import annotations

import json
from pathlib import Path

from predictive_scaler_dev.localcluster.prometheus import logged_queries


def entry(query: str) -> str:
    return json.dumps({"params": {"query": query, "step": 0}, "stats": {}, "ts": "t"})


def test_the_queries_of_complete_lines_are_read_in_order(tmp_path: Path) -> None:
    log = tmp_path / "queries.log"
    log.write_text(entry("up") + "\n" + entry('sum(rate(x{a="b"}[8s]))') + "\n" + '{"params": {"qu')
    assert logged_queries(log) == ["up", 'sum(rate(x{a="b"}[8s]))']


def test_no_log_yet_is_no_query(tmp_path: Path) -> None:
    assert logged_queries(tmp_path / "absent.log") == []
