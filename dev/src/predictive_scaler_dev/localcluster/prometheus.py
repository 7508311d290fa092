"""The local Prometheus: queried with a deadline (`up`'s readiness check, the tests),
backfilled, and made to log the queries it runs while a test needs to know them."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import requests
from prometheus_api_client.exceptions import PrometheusApiClientException

from predictive_scaler.promclient import Sample, instant_query
from predictive_scaler_dev.localcluster.state import LocalCluster
from predictive_scaler_dev.localcluster.waiting import read_until


def query_until(
    base_url: str,
    promql: str,
    accept: Callable[[list[Sample]], bool],
    *,
    timeout: float,
    interval: float = 0.5,
) -> list[Sample]:
    """Repeat `promql` until `accept` approves the answer; at the deadline, show the last one."""

    def answer() -> list[Sample] | str:
        try:
            return instant_query(base_url, promql)
        except (requests.RequestException, PrometheusApiClientException) as error:
            return f"error: {error}"

    found = read_until(
        answer,
        lambda found: not isinstance(found, str) and accept(found),
        timeout=timeout,
        what=f"an accepted answer to {promql!r}",
        interval=interval,
    )
    assert not isinstance(found, str)
    return found


@contextmanager
def query_log(cluster: LocalCluster) -> Iterator[Path]:
    """Prometheus logs every query it runs to the file yielded, until the block ends.

    The query log is switched on by a configuration reload (`--web.enable-lifecycle`;
    the reload answers once the configuration is applied) and off again the same way:
    it is never rotated, so it is not left on. (A run killed outright leaves it on
    until the cluster is next started, which writes the configuration afresh.)
    """
    config = cluster.layout.prometheus_config
    written = config.read_text()
    path = config.parent / "queries.log"
    path.unlink(missing_ok=True)
    with_log = json.loads(written)
    with_log["global"]["query_log_file"] = str(path)
    config.write_text(json.dumps(with_log, indent=2) + "\n")
    try:
        _reload(cluster.prometheus_url)
        # Prometheus's own gauge, read from its /metrics (it does not scrape itself here).
        metrics = requests.get(f"{cluster.prometheus_url}/metrics", timeout=30.0).text
        if "\nprometheus_engine_query_log_enabled 1" not in metrics:
            raise RuntimeError("Prometheus reloaded its configuration but logs no queries")
        yield path
    finally:
        config.write_text(written)
        _reload(cluster.prometheus_url)
        path.unlink(missing_ok=True)


def _reload(base_url: str) -> None:
    requests.post(f"{base_url}/-/reload", timeout=30.0).raise_for_status()


def logged_queries(path: Path) -> list[str]:
    """The PromQL of every query in a Prometheus query log, oldest first."""
    text = path.read_text() if path.exists() else ""
    # A line Prometheus is still writing is left for the next read.
    lines = text[: text.rfind("\n") + 1].splitlines()
    return [str(json.loads(line)["params"]["query"]) for line in lines if line.strip()]


def finite(samples: list[Sample]) -> bool:
    return bool(samples) and all(math.isfinite(s.value) for s in samples)


@dataclass(frozen=True)
class BackfillSeries:
    """One series to write into Prometheus's past: a name, its labels, (epoch, value) samples."""

    name: str
    labels: Mapping[str, str]
    samples: Sequence[tuple[float, float]]
    kind: str = "gauge"  # or "counter": then `name` ends in _total


def backfill(cluster: LocalCluster, series: Sequence[BackfillSeries]) -> list[Path]:
    """Write history into the local Prometheus, as `promtool tsdb create-blocks-from` does.

    The blocks are made beside the data directory and moved into it;
    Prometheus loads new blocks when it next reloads them (once a minute),
    so callers poll for the data. Returns the block directories.
    """
    promtool = cluster.binaries.prometheus.with_name("promtool")
    data = cluster.layout.prometheus_data
    with tempfile.TemporaryDirectory(dir=data.parent) as scratch:
        source, blocks = Path(scratch) / "history.om", Path(scratch) / "blocks"
        source.write_text(_openmetrics(series))
        subprocess.run(
            [str(promtool), "tsdb", "create-blocks-from", "openmetrics", str(source), str(blocks)],
            check=True,
            capture_output=True,
            text=True,
        )
        moved = []
        for block in sorted(blocks.iterdir()):
            moved.append(Path(shutil.move(block, data / block.name)))
    return moved


def _openmetrics(series: Sequence[BackfillSeries]) -> str:
    lines: list[str] = []
    for one in series:
        family = one.name.removesuffix("_total") if one.kind == "counter" else one.name
        labels = ",".join(f'{key}="{value}"' for key, value in sorted(one.labels.items()))
        lines.append(f"# TYPE {family} {one.kind}")
        lines.extend(f"{one.name}{{{labels}}} {value!r} {at:.3f}" for at, value in one.samples)
    return "\n".join([*lines, "# EOF", ""])
