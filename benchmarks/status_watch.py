"""Every status the API server reports for a namespace's PredictiveScalers, as it changes.

A list every quarter period misses evaluations: a turn that a new model woke
a few seconds before the object's next due one is overwritten before the next
list, and the gap around it reads as a late one. On 1,000 `auto` objects every
late gap a quarter-period poll found had such a turn inside it (checked against
a per-turn log of the operator, whose own largest gap was the period + 1 %).
A watch is told of every change, so the gaps it gives are the operator's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import TracebackType
from typing import Any

import urllib3
from kubernetes import client, watch
from kubernetes.client.exceptions import ApiException

from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION

# The API server ends each watch after this long and it is resumed from where
# it stopped: also how long stopping may take.
WATCH_SECONDS = 5
RETRY_SECONDS = 1.0

StatusSink = Callable[[str, dict[str, Any]], None]


class StatusWatch:
    """``with StatusWatch(custom, namespace, sink):`` calls ``sink(name, status)`` on every change.

    It lists first (every object's current status), then watches from that
    list's version. When the version has expired (or the API server failed a
    request) it lists again, and ``relists`` counts it: changes in between
    are seen only as their last state, as a poll would.
    """

    def __init__(self, custom: client.CustomObjectsApi, namespace: str, sink: StatusSink) -> None:
        self._custom = custom
        self._namespace = namespace
        self._sink = sink
        self._stopped = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name=f"status-watch-{namespace}", daemon=True
        )
        self.relists = 0

    def __enter__(self) -> StatusWatch:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stopped.set()
        self._thread.join(timeout=WATCH_SECONDS + 30)

    def _list(self) -> str:
        listed: Any = self._custom.list_namespaced_custom_object(
            GROUP, VERSION, self._namespace, PLURAL
        )
        for item in listed["items"]:
            self._sink(item["metadata"]["name"], item.get("status") or {})
        return str(listed["metadata"]["resourceVersion"])

    def _run(self) -> None:
        version: str | None = None
        while not self._stopped.is_set():
            try:
                if version is None:
                    version = self._list()
                version = self._watch_from(version)
            except (ApiException, urllib3.exceptions.HTTPError):
                # An expired version (410) or a busy API server: list afresh.
                version = None
                self.relists += 1
                self._stopped.wait(RETRY_SECONDS)

    def _watch_from(self, version: str) -> str:
        """Watch for one server-side timeout; the version to go on from."""
        stream = watch.Watch()  # type: ignore[no-untyped-call]
        events: Any = stream.stream(  # type: ignore[no-untyped-call]
            self._custom.list_namespaced_custom_object,
            GROUP,
            VERSION,
            self._namespace,
            PLURAL,
            resource_version=version,
            timeout_seconds=WATCH_SECONDS,
            _request_timeout=WATCH_SECONDS + 30,
        )
        for event in events:
            body = event["object"]
            if event["type"] in {"ADDED", "MODIFIED"}:
                self._sink(body["metadata"]["name"], body.get("status") or {})
            if self._stopped.is_set():
                break
        return str(stream.resource_version or version)
