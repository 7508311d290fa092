"""Certificates and kubeconfigs for a loopback cluster, made fresh on every `up`.

One CA signs the API server's and metrics-server's serving certificates and a
client certificate per identity. The control plane's identities are the ones the
API server's RBAC bootstrap policy already knows (`system:kube-controller-manager`,
`system:kube-scheduler`, and `system:masters` for the admin); metrics-server's
gets the RBAC its upstream manifest grants (`localcluster.metrics_server`), and
the front proxy's is what the aggregator presents when it forwards a request to
metrics-server, which trusts it through `--requestheader-allowed-names`.

KEDA's operator and metrics adapter share one identity, as upstream's share one
ServiceAccount, and one key pair in the layout KEDA reads (`ca.crt`, `tls.crt`,
`tls.key` in one folder): it serves the adapter's APIService and both ends of
their mutual-TLS gRPC link, so it is a server and a client certificate at once.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALIDITY = datetime.timedelta(days=30)
# The first address of the service range; kube-apiserver's in-cluster Service uses it.
KUBERNETES_SERVICE_IP = "10.0.0.1"
SERVICE_CLUSTER_IP_RANGE = "10.0.0.0/24"


@dataclass(frozen=True)
class Identity:
    name: str
    user: str
    groups: tuple[str, ...] = ()


ADMIN = Identity("admin", "kubernetes-admin", ("system:masters",))
CONTROLLER_MANAGER = Identity("kube-controller-manager", "system:kube-controller-manager")
SCHEDULER = Identity("kube-scheduler", "system:kube-scheduler")
METRICS_SERVER = Identity("metrics-server", "system:metrics-server")
FRONT_PROXY = Identity("front-proxy-client", "front-proxy-client")
KEDA = Identity("keda", "system:keda")
IDENTITIES = (ADMIN, CONTROLLER_MANAGER, SCHEDULER, METRICS_SERVER, FRONT_PROXY, KEDA)
# The name the aggregator checks metrics-server's certificate against: it always
# dials an APIService's Service as <name>.<namespace>.svc.
METRICS_SERVER_SERVICE = ("metrics-server", "kube-system")
KEDA_NAMESPACE = "keda"
# Upstream's Service names: the aggregator dials the adapter's, and the adapter
# checks the operator's gRPC certificate against the operator's.
KEDA_ADAPTER_SERVICE = ("keda-metrics-apiserver", KEDA_NAMESPACE)
KEDA_OPERATOR_SERVICE = ("keda-operator", KEDA_NAMESPACE)


@dataclass(frozen=True)
class Pki:
    """Paths of everything `write_pki` made."""

    directory: Path

    @property
    def ca_cert(self) -> Path:
        return self.directory / "ca.crt"

    @property
    def ca_key(self) -> Path:
        return self.directory / "ca.key"

    @property
    def serving_cert(self) -> Path:
        return self.directory / "apiserver.crt"

    @property
    def serving_key(self) -> Path:
        return self.directory / "apiserver.key"

    @property
    def metrics_server_cert(self) -> Path:
        return self.directory / "metrics-server-serving.crt"

    @property
    def metrics_server_key(self) -> Path:
        return self.directory / "metrics-server-serving.key"

    @property
    def keda_certs(self) -> Path:
        """KEDA's `--cert-dir`: ca.crt, tls.crt and tls.key."""
        return self.directory / "keda"

    @property
    def keda_cert(self) -> Path:
        return self.keda_certs / "tls.crt"

    @property
    def keda_key(self) -> Path:
        return self.keda_certs / "tls.key"

    @property
    def service_account_key(self) -> Path:
        return self.directory / "service-account.key"

    @property
    def service_account_public_key(self) -> Path:
        return self.directory / "service-account.pub"

    def client_cert(self, identity: Identity) -> Path:
        return self.directory / f"{identity.name}.crt"

    def client_key(self, identity: Identity) -> Path:
        return self.directory / f"{identity.name}.key"


def _new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> None:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    path.chmod(0o600)


def _write_cert(path: Path, cert: x509.Certificate) -> None:
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))


def _builder(
    subject: x509.Name, issuer: x509.Name, public_key: ec.EllipticCurvePublicKey
) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + VALIDITY)
    )


def write_pki(directory: Path) -> Pki:
    directory.mkdir(parents=True, exist_ok=True)
    pki = Pki(directory)

    ca_key = _new_key()
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "predictive-scaler-local-ca")])
    ca_cert = (
        _builder(ca_name, ca_name, ca_key.public_key())
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    _write_key(pki.ca_key, ca_key)
    _write_cert(pki.ca_cert, ca_cert)

    def leaf(
        subject: x509.Name,
        usages: list[x509.ObjectIdentifier],
        sans: list[x509.GeneralName],
    ) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
        key = _new_key()
        builder = (
            _builder(subject, ca_name, key.public_key())
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
        )
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        return key, builder.sign(ca_key, hashes.SHA256())

    serving_key, serving_cert = leaf(
        x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]),
        [ExtendedKeyUsageOID.SERVER_AUTH],
        [
            x509.DNSName("localhost"),
            x509.DNSName("kubernetes"),
            x509.DNSName("kubernetes.default.svc"),
            x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
            x509.IPAddress(ipaddress.ip_address(KUBERNETES_SERVICE_IP)),
        ],
    )
    _write_key(pki.serving_key, serving_key)
    _write_cert(pki.serving_cert, serving_cert)

    service, namespace = METRICS_SERVER_SERVICE
    metrics_key, metrics_cert = leaf(
        x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "metrics-server")]),
        [ExtendedKeyUsageOID.SERVER_AUTH],
        [
            x509.DNSName(f"{service}.{namespace}.svc"),
            x509.DNSName("localhost"),
            x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
        ],
    )
    _write_key(pki.metrics_server_key, metrics_key)
    _write_cert(pki.metrics_server_cert, metrics_cert)

    keda_key, keda_cert = leaf(
        x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "keda")]),
        [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH],
        [
            *(
                x509.DNSName(f"{name}.{ns}.svc")
                for name, ns in (KEDA_ADAPTER_SERVICE, KEDA_OPERATOR_SERVICE)
            ),
            x509.DNSName("localhost"),
            x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
        ],
    )
    pki.keda_certs.mkdir(exist_ok=True)
    _write_cert(pki.keda_certs / "ca.crt", ca_cert)
    _write_key(pki.keda_key, keda_key)
    _write_cert(pki.keda_cert, keda_cert)

    for identity in IDENTITIES:
        attributes = [x509.NameAttribute(NameOID.COMMON_NAME, identity.user)]
        attributes += [x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in identity.groups]
        key, cert = leaf(x509.Name(attributes), [ExtendedKeyUsageOID.CLIENT_AUTH], [])
        _write_key(pki.client_key(identity), key)
        _write_cert(pki.client_cert(identity), cert)

    # Service-account tokens are signed with RSA: the API server's issuer
    # discovery and every client library accept RS256.
    sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    _write_key(pki.service_account_key, sa_key)
    pki.service_account_public_key.write_bytes(
        sa_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return pki


def kubeconfig(server: str, pki: Pki, identity: Identity) -> str:
    """A kubeconfig that points at `server` with the identity's certificate files."""
    return f"""apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: {server}
    certificate-authority: {pki.ca_cert}
users:
- name: {identity.name}
  user:
    client-certificate: {pki.client_cert(identity)}
    client-key: {pki.client_key(identity)}
contexts:
- name: {identity.name}@local
  context:
    cluster: local
    user: {identity.name}
current-context: {identity.name}@local
"""
