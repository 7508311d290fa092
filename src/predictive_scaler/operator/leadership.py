"""Leader election over a coordination.k8s.io Lease, so that of several replicas one acts.

kopf's own peering pauses *every* operator of equal priority, and the replicas
of one Deployment all have equal priority, so it cannot pick one of them. A
Lease is what Kubernetes' own controllers use: the holder renews it every
retry period; when it stops (a crash, a partition), a standby takes it once it
has seen the same record for a whole lease duration. The election itself is
the kubernetes client's `LeaderElection`; this module adds what it lacks:
stopping renewals and handing the Lease over at a clean shutdown, so that the
standby takes over at once instead of after a lease duration.

Failover bound after a crash: lease duration + retry period (the standby's
polling), plus kopf's start of the handlers.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from kubernetes import client
from kubernetes.client.exceptions import ApiException
from kubernetes.leaderelection import electionconfig
from kubernetes.leaderelection.leaderelection import LeaderElection
from kubernetes.leaderelection.resourcelock.leaselock import LeaseLock

log = logging.getLogger(__name__)
# The client logs every renewal at INFO; ours say what changes.
logging.getLogger("leaderelection").setLevel(logging.WARNING)


@dataclass(frozen=True)
class LeaseTimings:
    """client-go's defaults: 15 s, 10 s, 2 s."""

    duration: int = 15
    renew_deadline: int = 10
    retry_period: int = 2

    @property
    def failover_bound(self) -> int:
        """Seconds from a crashed leader's last renewal until a standby holds the Lease."""
        return self.duration + self.retry_period


def own_identity() -> str:
    """The pod's name (the hostname in a pod) and a random suffix, unique per process."""
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


class _StoppableElection(LeaderElection):
    """The client's election, with renewals that can be stopped for a hand-over."""

    def __init__(self, config: electionconfig.Config, stopping: threading.Event) -> None:
        super().__init__(config)  # type: ignore[no-untyped-call]
        self.stopping = stopping
        self.lock = threading.Lock()

    def try_acquire_or_renew(self) -> bool:
        with self.lock:
            if self.stopping.is_set():
                return False
            return bool(super().try_acquire_or_renew())  # type: ignore[no-untyped-call]


class Leadership:
    """Campaign for the Lease in a thread; `leading` is set while this process holds it."""

    def __init__(
        self,
        lease: str,
        namespace: str,
        timings: LeaseTimings,
        on_lost: Callable[[], None],
        identity: str | None = None,
    ) -> None:
        self.lease, self.namespace, self.timings = lease, namespace, timings
        self.identity = identity or own_identity()
        self.leading = threading.Event()
        self._stopping = threading.Event()
        self._on_lost = on_lost
        config = electionconfig.Config(  # type: ignore[no-untyped-call]
            LeaseLock(lease, namespace, self.identity),  # type: ignore[no-untyped-call]
            lease_duration=timings.duration,
            renew_deadline=timings.renew_deadline,
            retry_period=timings.retry_period,
            onstarted_leading=self.leading.set,
            onstopped_leading=self._stopped,
        )
        self._election = _StoppableElection(config, self._stopping)
        self._thread = threading.Thread(
            target=self._election.run, name="leader-election", daemon=True
        )

    def start(self) -> None:
        log.info("campaigning for Lease %s/%s as %s", self.namespace, self.lease, self.identity)
        self._thread.start()

    def _stopped(self) -> None:
        was_leading = self.leading.is_set()
        self.leading.clear()
        if was_leading and not self._stopping.is_set():
            log.error("lost the Lease %s/%s: stopping", self.namespace, self.lease)
            self._on_lost()

    def release(self) -> None:
        """Stop renewing and, if this process holds the Lease, free it for a standby now."""
        self._stopping.set()
        with self._election.lock:  # no renewal is in flight past this point
            was_leading = self.leading.is_set()
            self.leading.clear()
            if not was_leading:
                return
            api = client.CoordinationV1Api()
            try:
                lease = api.read_namespaced_lease(self.lease, self.namespace)
                if lease.spec is None or lease.spec.holder_identity != self.identity:
                    return
                lease.spec.holder_identity = None
                # The read's resourceVersion makes this a compare-and-swap.
                api.replace_namespaced_lease(self.lease, self.namespace, lease)
            except ApiException as error:
                log.warning("could not release the Lease (it expires by itself): %s", error.reason)
                return
        log.info("released the Lease %s/%s", self.namespace, self.lease)
