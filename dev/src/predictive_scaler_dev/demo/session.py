"""One demo run: cluster up, objects applied, operator started, trace replayed, all cleaned up.

Clean-up is registered step by step as things are created and runs in
reverse, also on Ctrl-C or SIGTERM (which the command turns into the same
interrupt); a second Ctrl-C during clean-up is ignored so it can finish.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from kubernetes import client
from kubernetes.client.exceptions import ApiException

import predictive_scaler_dev.localcluster as local
from predictive_scaler.operator.conditions import Condition, merge
from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION
from predictive_scaler_dev.demo.history import loaded_query, past_cpu, samples_until
from predictive_scaler_dev.demo.interrupts import cleanup_that_finishes, stop_if_interrupted
from predictive_scaler_dev.demo.load import LoadDriver
from predictive_scaler_dev.demo.outcome import DemoResult, Drivers, say, write_outcome
from predictive_scaler_dev.demo.peers import apply_hpa, apply_scaled_object
from predictive_scaler_dev.demo.plot import ForecastSample
from predictive_scaler_dev.demo.process import OperatorProcess
from predictive_scaler_dev.demo.scenario import (
    HPA_WORKLOAD,
    KEDA_WORKLOAD,
    NAMESPACE,
    TRACE_LABEL,
    WORKLOAD,
    Scenario,
)
from predictive_scaler_dev.demo.summary import measured
from predictive_scaler_dev.demo.view import Frame, LiveView
from predictive_scaler_dev.localcluster.kube import (
    create_namespace,
    running_pods,
    wait_crd_established,
)
from predictive_scaler_dev.localcluster.prometheus import backfill, query_until
from predictive_scaler_dev.localcluster.waiting import wait_until

SCRAPE_TARGET = "predictive-scaler-demo"
PEER_WORKLOADS = (HPA_WORKLOAD, KEDA_WORKLOAD)
REFRESH_SECONDS = 1.0
FINALIZE_SECONDS = 30.0
# Of the warm-up, what the scaler needs at least once it exists: a sync period
# and a first model selection, on a busy machine.
FIRST_DECISIONS_SECONDS = 10.0
PROGRESS_SECONDS = 15.0  # between two "still waiting" lines
POLL_SLICE_SECONDS = 2.0  # between two looks for an interrupt Python dropped


class DemoError(RuntimeError):
    pass


@dataclass(frozen=True)
class DemoOptions:
    scenario: Scenario
    output: Path  # made by the command, which refuses one it cannot write before any work
    keep_cluster: bool = False
    run_dir: Path | None = None


def mark_evaluated(custom_objects: client.CustomObjectsApi, namespace: str, name: str) -> None:
    """Give a PredictiveScaler the Ready condition an evaluation writes, where no operator
    runs (tests, benchmarks): the rebalancer opts in no workload of an object not yet
    evaluated."""
    ready = Condition("Ready", "True", "Evaluated", "marked evaluated without an operator")
    conditions, _ = merge([], [ready], now="2026-01-01T00:00:00Z", generation=1)
    custom_objects.patch_namespaced_custom_object_status(
        GROUP, VERSION, namespace, PLURAL, name, {"status": {"conditions": conditions}}
    )


def apply_crds(cluster: local.LocalCluster) -> None:
    """Apply the CRDs shipped in the package (an installed wheel has no repository) and wait."""
    crds = Path(str(resources.files("predictive_scaler") / "data" / "crds"))
    kubectl = [str(cluster.binaries.kubectl), f"--kubeconfig={cluster.kubeconfig}"]
    command = ["apply", "-f", str(crds)]
    done = subprocess.run([*kubectl, *command], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise DemoError(f"kubectl {' '.join(command)}: {done.stderr.strip()}")
    try:
        wait_crd_established(cluster.kubeconfig, f"{PLURAL}.{GROUP}", timeout=60.0)
    except TimeoutError as error:
        raise DemoError(str(error)) from None


class Demo:
    def __init__(self, options: DemoOptions, out: TextIO) -> None:
        self.options = options
        self.scenario = options.scenario
        self.out = out
        self.load = self.scenario.load()

    def say(self, text: str) -> None:
        say(self.out, text)

    def run(self) -> DemoResult:
        with cleanup_that_finishes() as cleanup:
            cluster = self._cluster(cleanup)
            api = cluster.api()
            core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
            custom = client.CustomObjectsApi(api)
            self._apply_crds(cluster)
            self._fresh_namespace(core)
            cleanup.callback(self._delete_namespace, core)
            operator = self._start_operator(cluster, cleanup)
            for name in (WORKLOAD, *PEER_WORKLOADS):
                self._apply_deployment(core, apps, name)
            self.say(f"applied {apply_hpa(api, self.scenario)}")
            self.say(
                "applied "
                + apply_scaled_object(
                    api, self.scenario, cluster.prometheus_url, cluster.scrape_interval_seconds
                )
            )
            driver, *peer_drivers = (
                LoadDriver(
                    core, apps, NAMESPACE, name, lambda s: self.scenario.load_at(self.load, s)
                )
                for name in (WORKLOAD, *PEER_WORKLOADS)
            )
            self._start_replay(driver, cleanup)
            # Started after: the scored window begins at the first driver's start.
            for peer_driver in peer_drivers:
                peer_driver.start()
                cleanup.callback(peer_driver.stop)
            self._backfill(cluster, driver)
            # Only now: the operator reads its long history once, then only new samples,
            # so a scaler created before the blocks were loaded would never see them.
            self.say(f"applying PredictiveScaler/{WORKLOAD}")
            custom.create_namespaced_custom_object(
                GROUP, VERSION, NAMESPACE, PLURAL, self.scenario.scaler()
            )
            cleanup.callback(self._delete_scaler, custom, operator)
            forecasts, status = self._replay(driver, custom, operator)
            for peer_driver in peer_drivers:
                peer_driver.stop()
            hpa_driver, keda_driver = peer_drivers
            return write_outcome(
                self.out,
                self.scenario,
                self.load,
                self.options.output,
                drivers=Drivers(driver, hpa_driver, keda_driver),
                forecasts=forecasts,
                status=status,
            )

    def _apply_deployment(self, core: client.CoreV1Api, apps: client.AppsV1Api, name: str) -> None:
        self.say(f"applying Deployment/{name}")
        deployment = self.scenario.deployment(self.load, name)
        apps.create_namespaced_deployment(NAMESPACE, deployment)  # type: ignore[arg-type]
        replicas = int(deployment["spec"]["replicas"])
        wait_until(
            lambda: len(running_pods(core, NAMESPACE, name)) == replicas,
            timeout=60,
            what=f"{replicas} pods of Deployment/{name} Running",
        )

    def _cluster(self, cleanup: contextlib.ExitStack) -> local.LocalCluster:
        self.say("local control plane: building what is missing and starting it")
        config = local.ClusterConfig(run_dir=self.options.run_dir or local.default_run_dir())
        started = local.up(config)
        if started.build is not None and started.build.built:
            self.say(f"built {', '.join(started.build.built)} in {started.build.seconds:.0f} s")
        if started.reused:
            self.say("reusing the local cluster that is already running (left running)")
        elif self.options.keep_cluster:
            self.say(f"up in {started.seconds:.1f} s; it stays up (--keep-cluster)")
        else:
            self.say(f"up in {started.seconds:.1f} s; stopped again at the end")
            cleanup.callback(self._stop_cluster, config.run_dir)
        self.say(f"to look around meanwhile: source {started.cluster.layout.env_file}")
        return started.cluster

    def _stop_cluster(self, run_dir: Path) -> None:
        self.say("stopping the local control plane")
        local.down(run_dir)

    def _apply_crds(self, cluster: local.LocalCluster) -> None:
        apply_crds(cluster)
        self.say(f"CRD {PLURAL}.{GROUP} applied")

    def _fresh_namespace(self, core: client.CoreV1Api) -> None:
        """A namespace left by an interrupted run is deleted first: every run starts alike."""

        def gone() -> bool:
            try:
                core.read_namespace(NAMESPACE)
            except ApiException as error:
                if error.status == 404:
                    return True
                raise
            return False

        if not gone():
            self.say(f"deleting namespace {NAMESPACE} left by an earlier run")
            self._remove_finalizers(client.CustomObjectsApi(core.api_client))
            with contextlib.suppress(ApiException):
                core.delete_namespace(NAMESPACE)
            wait_until(gone, timeout=120, what=f"namespace {NAMESPACE} to be deleted")
        create_namespace(core, NAMESPACE)

    def _delete_namespace(self, core: client.CoreV1Api) -> None:
        self.say(f"deleting namespace {NAMESPACE}")
        with contextlib.suppress(ApiException):
            core.delete_namespace(NAMESPACE)

    def _start_operator(
        self, cluster: local.LocalCluster, cleanup: contextlib.ExitStack
    ) -> OperatorProcess:
        log = self.options.output / "operator.log"
        log.unlink(missing_ok=True)
        operator = OperatorProcess(
            cluster, NAMESPACE, log, extra_env={"PREDICTIVE_SCALER_REBALANCE_MODE": "Off"}
        )
        cleanup.callback(self._stop_operator, cluster, operator)
        operator.start()
        cluster.add_scrape_target(SCRAPE_TARGET, f"127.0.0.1:{operator.metrics_port}")
        self.say(
            f"operator started (pid {operator.pid}, metrics on :{operator.metrics_port}, log {log})"
        )
        return operator

    def _stop_operator(self, cluster: local.LocalCluster, operator: OperatorProcess) -> None:
        self.say("stopping the operator")
        operator.stop()
        cluster.remove_scrape_target(SCRAPE_TARGET)

    def _delete_scaler(self, custom: client.CustomObjectsApi, operator: OperatorProcess) -> None:
        """Deleted while the operator runs, so it releases its finalizer itself."""
        self.say(f"deleting PredictiveScaler/{WORKLOAD}")
        with contextlib.suppress(ApiException):
            custom.delete_namespaced_custom_object(GROUP, VERSION, NAMESPACE, PLURAL, WORKLOAD)

        def gone() -> bool:
            listed: Any = custom.list_namespaced_custom_object(GROUP, VERSION, NAMESPACE, PLURAL)
            return not listed["items"]

        try:
            if not operator.running():
                raise TimeoutError("the operator is not running")
            wait_until(gone, timeout=FINALIZE_SECONDS, what="the operator to release it")
        except TimeoutError:
            self._remove_finalizers(custom)

    @staticmethod
    def _remove_finalizers(custom: client.CustomObjectsApi) -> None:
        """Without an operator nothing releases kopf's finalizer; the demo owns these objects."""
        listed: Any = custom.list_namespaced_custom_object(GROUP, VERSION, NAMESPACE, PLURAL)
        for item in listed["items"]:
            custom.patch_namespaced_custom_object(
                GROUP,
                VERSION,
                NAMESPACE,
                PLURAL,
                item["metadata"]["name"],
                {"metadata": {"finalizers": None}},
            )

    def _start_replay(self, driver: LoadDriver, cleanup: contextlib.ExitStack) -> None:
        scenario = self.scenario
        self.say(
            f"replaying {TRACE_LABEL}, {scenario.hours} h from {scenario.start_hour:02d}:00 "
            f"after a {scenario.warmup_seconds:.0f} s warm-up of the hours before, "
            f"{scenario.duration_seconds:.0f} s in all ({scenario.step_minutes} trace minutes "
            f"every {scenario.seconds_per_step:g} s); Ctrl-C stops and cleans up"
        )
        driver.start()
        cleanup.callback(driver.stop)

    def _backfill(self, cluster: local.LocalCluster, driver: LoadDriver) -> None:
        """The trace before the live replay, into Prometheus, ending as the live load began.

        Written once the driver's first tick has put the load on the pods, so
        that its end is that instant however long the tick took (seconds on a
        busy machine, during which the live pods count nothing); waited for
        before the scaler exists, within the warm-up.
        """
        scenario = self.scenario
        ends_at = driver.wait_first_applied(timeout=scenario.warmup_seconds / 2)
        series = past_cpu(scenario, ends_at=ends_at, sample_seconds=cluster.scrape_interval_seconds)
        days = scenario.past_load().size / scenario.steps_per_day
        self.say(
            f"backfilling {days:.1f} days of history (the trace up to the warm-up, "
            f"{ends_at - series.samples[0][0]:.0f} s compressed) into Prometheus as "
            f"pod {series.labels['pod']}"
        )
        backfill(cluster, [series])
        expected = samples_until(series, ends_at)
        query = loaded_query(series, ends_at)
        # The scaler needs the rest of the warm-up for its first decisions.
        wait_until_seconds = scenario.warmup_seconds - FIRST_DECISIONS_SECONDS
        said = driver.elapsed()
        while True:
            stop_if_interrupted()
            left = wait_until_seconds - driver.elapsed()
            try:
                query_until(
                    cluster.prometheus_url,
                    query,
                    lambda found: bool(found) and found[0].value >= expected,
                    timeout=max(0.0, min(POLL_SLICE_SECONDS, left)),
                )
                break
            except TimeoutError as error:
                if left <= POLL_SLICE_SECONDS:
                    raise DemoError(
                        "Prometheus did not load the backfilled history within the warm-up "
                        f"({scenario.warmup_seconds:.0f} s): {error}"
                    ) from None
            if driver.elapsed() - said >= PROGRESS_SECONDS:
                said = driver.elapsed()
                self.say(
                    f"waiting for Prometheus to load the blocks (it does once a minute): "
                    f"{said:.0f} s"
                )
        self.say(f"Prometheus answers the backfilled range after {driver.elapsed():.0f} s")

    def _replay(
        self, driver: LoadDriver, custom: client.CustomObjectsApi, operator: OperatorProcess
    ) -> tuple[list[ForecastSample], dict[str, Any]]:
        scenario = self.scenario
        view = LiveView(self.out)
        forecasts: list[ForecastSample] = []
        status: dict[str, Any] = {}
        while (elapsed := driver.elapsed()) < scenario.duration_seconds:
            stop_if_interrupted()
            if not operator.running():
                raise DemoError(f"the operator exited:\n{operator.log_tail()}")
            status = self._status(custom) or status
            forecast = status.get("forecast")
            if forecast:
                forecasts.append((elapsed, float(forecast["lower"]), float(forecast["upper"])))
            ticks = list(driver.ticks)
            if ticks:
                view.show(self._frame(elapsed, ticks, status))
            time.sleep(min(REFRESH_SECONDS, max(0.0, scenario.duration_seconds - elapsed)))
        driver.stop()
        if driver.errors:
            self.say(f"the load driver saw API errors: {'; '.join(driver.errors[:3])}")
        return forecasts, status

    def _frame(self, elapsed: float, ticks: list[Any], status: dict[str, Any]) -> Frame:
        last = ticks[-1]
        return Frame(
            seconds=elapsed,
            duration=self.scenario.duration_seconds,
            clock=self.scenario.clock(elapsed),
            warming_up=elapsed < self.scenario.warmup_seconds,
            load=last.load,
            replicas=last.replicas,
            running=last.running,
            capacity=self.scenario.capacity_cores,
            status=status,
            overload_minutes=measured(ticks, self.scenario).overload_minutes,
            load_history=[t.load for t in ticks[:: max(1, len(ticks) // 120)]],
            replica_history=[t.replicas for t in ticks[:: max(1, len(ticks) // 120)]],
        )

    @staticmethod
    def _status(custom: client.CustomObjectsApi) -> dict[str, Any]:
        try:
            found: Any = custom.get_namespaced_custom_object(
                GROUP, VERSION, NAMESPACE, PLURAL, WORKLOAD
            )
        except ApiException:
            return {}
        status: dict[str, Any] = found.get("status") or {}
        return status


def run_demo(options: DemoOptions, out: TextIO) -> DemoResult:
    return Demo(options, out).run()
