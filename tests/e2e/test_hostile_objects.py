"""Objects the schema cannot judge: each gets a condition naming its problem, none does harm.

The API server's share of the hostile corpus (tests/fixtures/hostile.py,
refused with the field named) is tested in tests/integration/test_crd.py;
these are accepted by the schema and must be caught by the operator, with
the valid object beside them still evaluated on schedule.
"""

from __future__ import annotations

from typing import Any

from kubernetes import client

from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION
from predictive_scaler_dev.demo.load import LoadDriver
from predictive_scaler_dev.demo.process import OperatorProcess
from tests.fixtures.cluster import create_deployment, wait_for
from tests.fixtures.hostile import REFUSED
from tests.fixtures.operator import events_for, hold_for, read_status, scaler, wait_condition

CORPUS_MINIMUM = 30


def handled(namespace: str) -> dict[str, tuple[dict[str, Any], str, str]]:
    """name -> (body, condition type, reason) for objects only the operator can judge."""

    def on_query(name: str, query: str) -> dict[str, Any]:
        # DryRun: several of them watch the same Deployment, which only DryRun objects may.
        metric = {"query": query, "targetPerReplica": "100m"}
        return scaler(name, "web", metric=metric, mode="DryRun")

    def on_target(name: str, kind: str, target: str) -> dict[str, Any]:
        body = scaler(name, target, metric={"resource": "cpu", "targetPerReplica": "100m"})
        body["spec"]["scaleTargetRef"]["kind"] = kind
        return body

    own = f'namespace="{namespace}"'
    return {
        "malformed-promql": (on_query("malformed-promql", "sum(rate("), "Ready", "InvalidQuery"),
        "other-namespace": (
            on_query("other-namespace", 'sum(up{namespace="kube-system"})'),
            "Ready",
            "QueryOutsideNamespace",
        ),
        "every-namespace": (
            on_query(
                "every-namespace",
                'sum(rate(container_cpu_usage_seconds_total{namespace=~".+"}[10s]))',
            ),
            "Ready",
            "QueryOutsideNamespace",
        ),
        "no-namespace": (on_query("no-namespace", "sum(up)"), "Ready", "QueryOutsideNamespace"),
        "refused-by-prometheus": (
            on_query(
                "refused-by-prometheus",
                f'label_replace(sum(up{{{own}}}), "bad-label!", "x", "", "")',
            ),
            "MetricsAvailable",
            "QueryFailed",
        ),
        "several-series": (
            on_query("several-series", f"rate(container_cpu_usage_seconds_total{{{own}}}[10s])"),
            "MetricsAvailable",
            "MultipleSeries",
        ),
        "missing-deployment": (
            on_target("missing-deployment", "Deployment", "nowhere"),
            "Ready",
            "TargetNotFound",
        ),
        "missing-statefulset": (
            on_target("missing-statefulset", "StatefulSet", "web"),
            "Ready",
            "TargetNotFound",
        ),
        # Any kind may be named; apps/v1 serves no Pod kind.
        "kind-nobody-serves": (
            on_target("kind-nobody-serves", "Pod", "web"),
            "Ready",
            "TargetNotFound",
        ),
    }


def test_the_corpus_is_at_least_thirty_objects() -> None:
    assert len(REFUSED) + len(handled("x")) >= CORPUS_MINIMUM


def test_objects_only_the_operator_can_judge_get_conditions_and_harm_nothing(
    operator: OperatorProcess,
    custom_objects: client.CustomObjectsApi,
    core_v1: client.CoreV1Api,
    apps_v1: client.AppsV1Api,
    namespace: str,
) -> None:
    create_deployment(apps_v1, namespace, "web", 2, cpu_request="1")
    with LoadDriver(core_v1, apps_v1, namespace, "web", lambda _: 0.3):
        cases = handled(namespace)
        for body, _, _ in cases.values():
            custom_objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)
        # A valid object among them, created last: evaluated on schedule all the same.
        valid = scaler("valid", "web", metric={"resource": "cpu", "targetPerReplica": "500m"})
        valid["spec"]["scaling"]["mode"] = "DryRun"  # it shares the target with the hostile ones
        custom_objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, valid)

        for name, (_, kind, reason) in cases.items():
            found = wait_condition(custom_objects, namespace, name, kind, "False", reason)
            if reason == "QueryOutsideNamespace":
                assert f'every selector needs namespace="{namespace}"' in found["message"]
                # Nothing of another namespace reaches the status.
                assert "load" not in read_status(custom_objects, namespace, name)

            # The Event is posted once the status is written, so it may trail it.
            def warned(name: str = name) -> bool:
                return "Warning" in {e.type for e in events_for(core_v1, namespace, name)}

            wait_for(warned, timeout=30, what=f"a Warning Event for {name}")

        def valid_evaluated_twice() -> bool:
            first = read_status(custom_objects, namespace, "valid").get("lastEvaluationTime")
            if not first:
                return False
            wait_for(
                lambda: (
                    read_status(custom_objects, namespace, "valid").get("lastEvaluationTime")
                    != first
                ),
                timeout=20,
                what="the valid object's next evaluation",
            )
            return True

        wait_for(valid_evaluated_twice, timeout=60, what="the valid object to be evaluated")
        scale = apps_v1.read_namespaced_deployment_scale("web", namespace)
        assert scale.spec is not None
        assert scale.spec.replicas == 2  # no hostile object moved the shared target
        assert operator.alive()
        assert "Traceback" not in operator.log.read_text()


def pod_names(core_v1: client.CoreV1Api, namespace: str) -> set[str]:
    return {
        str(p.metadata.name) for p in core_v1.list_namespaced_pod(namespace).items if p.metadata
    }


def test_a_replicaset_its_deployment_controls_is_refused_not_fought_over(
    operator: OperatorProcess,
    custom_objects: client.CustomObjectsApi,
    core_v1: client.CoreV1Api,
    apps_v1: client.AppsV1Api,
    namespace: str,
) -> None:
    create_deployment(apps_v1, namespace, "web", 2, cpu_request="1")

    def replica_sets() -> list[client.V1ReplicaSet]:
        return list(apps_v1.list_namespaced_replica_set(namespace).items)

    wait_for(lambda: len(replica_sets()) == 1, what="the Deployment's ReplicaSet")
    (owned,) = replica_sets()
    assert owned.metadata is not None
    name = str(owned.metadata.name)
    # Load that would need 4 replicas: an operator scaling the ReplicaSet and the
    # Deployment controller scaling it back would create and delete pods all along.
    with LoadDriver(core_v1, apps_v1, namespace, "web", lambda _: 2.0):
        body = scaler("on-rs", name, metric={"resource": "cpu", "targetPerReplica": "500m"})
        body["spec"]["scaleTargetRef"] = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": name,
        }
        custom_objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)
        refused = wait_condition(
            custom_objects, namespace, "on-rs", "Ready", "False", "TargetControlled"
        )
        assert f"ReplicaSet/{name} is controlled by Deployment/web" in refused["message"]
        pods_before = pod_names(core_v1, namespace)

        def nothing_fought() -> None:
            current = apps_v1.read_namespaced_replica_set(name, namespace)
            assert current.spec is not None
            assert current.spec.replicas == 2
            assert pod_names(core_v1, namespace) == pods_before

        hold_for(10.0, nothing_fought)
