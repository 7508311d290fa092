"""The API server under the operator: restarted, a target that comes and goes, the CRD deleted.

After each, the operator is alive and picks up where it was, by itself.
"""

from __future__ import annotations

from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

import predictive_scaler_dev.localcluster as local
from predictive_scaler.operator.resource import GROUP, PLURAL, VERSION
from predictive_scaler_dev.demo.load import LoadDriver
from predictive_scaler_dev.demo.process import OperatorProcess
from predictive_scaler_dev.localcluster.kube import wait_crd_established
from tests.fixtures.cluster import create_deployment, wait_for
from tests.fixtures.operator import (
    CRDS,
    kubectl,
    read_status,
    replicas,
    scaler,
    wait_condition,
)

CPU = {"resource": "cpu", "targetPerReplica": "500m"}


def evaluated_after(
    custom_objects: client.CustomObjectsApi, namespace: str, name: str, since: str
) -> bool:
    return str(read_status(custom_objects, namespace, name).get("lastEvaluationTime", "")) > since


def test_an_api_server_restart_mid_run_is_survived_and_new_specs_are_seen(
    operator: OperatorProcess,
    local_cluster: local.LocalCluster,
    custom_objects: client.CustomObjectsApi,
    apps_v1: client.AppsV1Api,
    steady_load: LoadDriver,
    namespace: str,
) -> None:
    custom_objects.create_namespaced_custom_object(
        GROUP, VERSION, namespace, PLURAL, scaler("web", "web", metric=CPU, min_replicas=2)
    )
    wait_condition(custom_objects, namespace, "web", "Ready", "True", timeout=90)
    before = str(read_status(custom_objects, namespace, "web")["lastEvaluationTime"])

    local.restart_component(local_cluster.run_dir, "kube-apiserver")

    wait_for(
        lambda: evaluated_after(custom_objects, namespace, "web", before),
        timeout=90,
        what="an evaluation after the API server came back",
    )
    # The watch is re-established: a spec change made after the restart is used.
    custom_objects.patch_namespaced_custom_object(
        GROUP, VERSION, namespace, PLURAL, "web", {"spec": {"minReplicas": 5, "maxReplicas": 7}}
    )
    wait_for(lambda: replicas(apps_v1, namespace, "web") >= 5, timeout=60, what="minReplicas 5")
    assert replicas(apps_v1, namespace, "web") <= 7
    assert operator.alive()


def test_a_target_deleted_and_recreated_is_reported_then_scaled_again(
    operator: OperatorProcess,
    custom_objects: client.CustomObjectsApi,
    apps_v1: client.AppsV1Api,
    steady_load: LoadDriver,
    namespace: str,
) -> None:
    body = scaler("web", "web", metric=CPU, min_replicas=3, max_replicas=8)
    custom_objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)
    wait_for(lambda: replicas(apps_v1, namespace, "web") >= 3, timeout=60, what="minReplicas 3")

    apps_v1.delete_namespaced_deployment("web", namespace)
    gone = wait_condition(custom_objects, namespace, "web", "Ready", "False", "TargetNotFound")
    assert "Deployment/web not found" in gone["message"]

    # Recreated at 1 replica, below minReplicas: brought back into range.
    create_deployment(apps_v1, namespace, "web", 1, cpu_request="1")
    wait_for(lambda: replicas(apps_v1, namespace, "web") >= 3, timeout=60, what="back to 3")
    wait_condition(custom_objects, namespace, "web", "Ready", "True", timeout=90)
    assert operator.alive()


def test_deleting_the_crd_finalises_its_objects_and_a_new_crd_is_served_again(
    operator: OperatorProcess,
    local_cluster: local.LocalCluster,
    crd: str,
    custom_objects: client.CustomObjectsApi,
    apps_v1: client.AppsV1Api,
    steady_load: LoadDriver,
    namespace: str,
) -> None:
    custom_objects.create_namespaced_custom_object(
        GROUP, VERSION, namespace, PLURAL, scaler("web", "web", metric=CPU, min_replicas=2)
    )
    wait_condition(custom_objects, namespace, "web", "Ready", "True", timeout=90)
    extensions = client.ApiextensionsV1Api(custom_objects.api_client)
    try:
        extensions.delete_custom_resource_definition(crd)

        def crd_gone() -> bool:
            try:
                extensions.read_custom_resource_definition(crd)
            except ApiException as error:
                return bool(error.status == 404)
            return False

        # The operator releases its finalizer, so the deletion completes.
        wait_for(crd_gone, timeout=90, what=f"CRD {crd} deleted with its objects")
        assert operator.alive()
        held = replicas(apps_v1, namespace, "web")
        assert held >= 2  # deleting the scaler leaves the workload as it was
    finally:
        kubectl(local_cluster, "apply", "-f", str(CRDS))
        wait_crd_established(local_cluster.kubeconfig, crd)

    again: Any = scaler("again", "web", metric=CPU, min_replicas=4, max_replicas=6)
    wait_for(lambda: _created(custom_objects, namespace, again), timeout=60, what="the CRD served")
    wait_for(lambda: replicas(apps_v1, namespace, "web") >= 4, timeout=90, what="evaluated anew")
    assert operator.alive()


def _created(custom_objects: client.CustomObjectsApi, namespace: str, body: Any) -> bool:
    try:
        custom_objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)
    except ApiException as error:
        if error.status in (404, 409):  # not served yet / created by an earlier try
            return bool(error.status == 409)
        raise
    return True
