"""Drive a Deployment's simulated CPU from a load curve, as a load balancer would spread it.

Every tick the driver reads the Deployment's Running pods, gives each an equal
share of the current load through kwok's usage annotation, and records what it
set and how many replicas there were, so the demo's summary and the tests can
judge the operator against the load it really faced.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Self

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from predictive_scaler_dev.localcluster.kube import running_pods, set_pod_usage


@dataclass(frozen=True)
class Tick:
    seconds: float  # since the driver started
    load: float  # cores in total
    replicas: int  # the Deployment's spec.replicas when the load was set
    running: int  # pods Running and sharing the load


@dataclass
class LoadDriver:
    """Sets a Deployment's pods' CPU from ``curve`` every ``period`` seconds, on a thread.

    May be used as a context manager: started on entry, stopped on exit.
    """

    core: client.CoreV1Api
    apps: client.AppsV1Api
    namespace: str
    deployment: str
    curve: Callable[[float], float]  # seconds since start -> total cores
    period: float = 1.0
    ticks: list[Tick] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    errors: list[str] = field(default_factory=list)
    _first_applied: threading.Event = field(default_factory=threading.Event)
    first_applied_at: float | None = None  # wall clock: the first tick's load was on every pod

    def start(self) -> None:
        self._started = time.monotonic()
        self.started_at = time.time()  # the same instant on the wall clock, for Prometheus
        self._thread = threading.Thread(target=self._run, name="load-driver", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def wait_first_applied(self, timeout: float) -> float:
        """When the first tick had set every pod's load (wall clock), waiting up to ``timeout``.

        Later than :attr:`started_at` by a list and a patch per pod, seconds on
        a busy machine; until then the pods keep the load they had.
        """
        if not self._first_applied.wait(timeout):
            raise TimeoutError(
                f"the load driver did not set {self.deployment}'s load in {timeout:g} s"
            )
        assert self.first_applied_at is not None
        return self.first_applied_at

    def elapsed(self) -> float:
        return time.monotonic() - self._started

    def _run(self) -> None:
        while not self._stop.is_set():
            began = time.monotonic()
            try:
                self._tick(began - self._started)
                if self.first_applied_at is None:
                    self.first_applied_at = time.time()
                    self._first_applied.set()
            except ApiException as error:
                self.errors.append(f"{error.status} {error.reason}")
            except (urllib3.exceptions.HTTPError, OSError) as error:
                # The API server is away (restarting, say): try again next tick.
                self.errors.append(f"{type(error).__name__}: {error}")
            self._stop.wait(max(0.0, self.period - (time.monotonic() - began)))

    def _tick(self, seconds: float) -> None:
        load = self.curve(seconds)
        pods = running_pods(self.core, self.namespace, self.deployment)
        share = load / max(1, len(pods))
        for pod in pods:
            assert pod.metadata is not None
            try:
                set_pod_usage(
                    self.core, self.namespace, str(pod.metadata.name), cpu=f"{round(share * 1000)}m"
                )
            except ApiException as error:
                # Scale-in deleted it between the list and the patch: the next tick
                # spreads the load over the pods that are left.
                if error.status != 404:
                    raise
        scale = self.apps.read_namespaced_deployment_scale(self.deployment, self.namespace)
        replicas = int(scale.spec.replicas) if scale.spec and scale.spec.replicas else 0
        self.ticks.append(Tick(seconds, load, replicas, len(pods)))
