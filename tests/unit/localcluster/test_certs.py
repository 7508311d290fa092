from __future__ import annotations

import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.x509.oid import NameOID

from predictive_scaler_dev.localcluster.certs import (
    ADMIN,
    CONTROLLER_MANAGER,
    FRONT_PROXY,
    KEDA,
    METRICS_SERVER,
    SCHEDULER,
    kubeconfig,
    write_pki,
)


def _load(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def test_serving_certificate_names_loopback_and_is_signed_by_the_ca(tmp_path: Path) -> None:
    pki = write_pki(tmp_path)
    ca, serving = _load(pki.ca_cert), _load(pki.serving_cert)
    serving.verify_directly_issued_by(ca)
    names = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert ipaddress.ip_address("127.0.0.1") in names.get_values_for_type(x509.IPAddress)
    assert "localhost" in names.get_values_for_type(x509.DNSName)


def test_metrics_server_serves_as_the_service_name_the_aggregator_checks(tmp_path: Path) -> None:
    pki = write_pki(tmp_path)
    serving = _load(pki.metrics_server_cert)
    serving.verify_directly_issued_by(_load(pki.ca_cert))
    names = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "metrics-server.kube-system.svc" in names.get_values_for_type(x509.DNSName)
    usage = serving.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert x509.oid.ExtendedKeyUsageOID.SERVER_AUTH in usage
    assert pki.metrics_server_key.stat().st_mode & 0o077 == 0


def test_keda_has_one_pair_that_serves_its_apiservice_and_both_ends_of_its_grpc(
    tmp_path: Path,
) -> None:
    pki = write_pki(tmp_path)
    # KEDA reads its --cert-dir as upstream's Secret mounts it.
    assert {p.name for p in pki.keda_certs.iterdir()} == {"ca.crt", "tls.crt", "tls.key"}
    assert (pki.keda_certs / "ca.crt").read_bytes() == pki.ca_cert.read_bytes()
    cert = _load(pki.keda_cert)
    cert.verify_directly_issued_by(_load(pki.ca_cert))
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert {
        "keda-metrics-apiserver.keda.svc",
        "keda-operator.keda.svc",
    } <= set(names.get_values_for_type(x509.DNSName))
    assert ipaddress.ip_address("127.0.0.1") in names.get_values_for_type(x509.IPAddress)
    usage = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert {
        x509.oid.ExtendedKeyUsageOID.SERVER_AUTH,
        x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH,
    } <= set(usage)
    assert pki.keda_key.stat().st_mode & 0o077 == 0
    client = _load(pki.client_cert(KEDA))
    assert client.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "system:keda"


def test_front_proxy_and_metrics_server_have_client_certificates(tmp_path: Path) -> None:
    pki = write_pki(tmp_path)
    for identity, common in (
        (FRONT_PROXY, "front-proxy-client"),
        (METRICS_SERVER, "system:metrics-server"),
    ):
        cert = _load(pki.client_cert(identity))
        cert.verify_directly_issued_by(_load(pki.ca_cert))
        assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == common


def test_client_identities_are_the_ones_rbac_bootstrap_knows(tmp_path: Path) -> None:
    pki = write_pki(tmp_path)
    ca = _load(pki.ca_cert)
    subjects = {}
    for identity in (ADMIN, CONTROLLER_MANAGER, SCHEDULER):
        cert = _load(pki.client_cert(identity))
        cert.verify_directly_issued_by(ca)
        common = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value
        groups = [a.value for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]
        subjects[common] = groups
    assert subjects == {
        "kubernetes-admin": ["system:masters"],
        "system:kube-controller-manager": [],
        "system:kube-scheduler": [],
    }
    assert pki.ca_key.stat().st_mode & 0o077 == 0


def test_kubeconfig_points_at_the_server_with_the_identity_files(tmp_path: Path) -> None:
    pki = write_pki(tmp_path)
    text = kubeconfig("https://127.0.0.1:6443", pki, ADMIN)
    assert "server: https://127.0.0.1:6443" in text
    assert str(pki.client_key(ADMIN)) in text
    assert str(pki.ca_cert) in text
