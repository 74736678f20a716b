"""How clients reach a simulated cluster's API: a certificate authority and a serving
certificate for 127.0.0.1 (kubectl sends bearer tokens only over TLS), a bearer token,
and a kubeconfig naming them, all kept in the cluster's home with mode 0600 and reused
by every later run."""

from __future__ import annotations

import base64
import datetime as dt
import ipaddress
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kupgrade.outputs import write_output
from kupgrade.views.live_server import LOOPBACK


@dataclass(frozen=True)
class Access:
    ca: Path
    cert: Path
    key: Path
    token: str


def _private(path: Path, data: bytes) -> None:
    write_output(path, data)
    os.chmod(path, 0o600)


def _name(text: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])


def ensure_access(home: Path) -> Access:
    """The API's CA, serving certificate, key and token under `home/api`, made once."""
    folder = home / "api"
    ca, cert, key, token = (folder / n for n in ("ca.crt", "tls.crt", "tls.key", "token"))
    if not all(p.exists() for p in (ca, cert, key, token)):
        folder.mkdir(parents=True, exist_ok=True)
        os.chmod(folder, 0o700)
        ca_pem, cert_pem, key_pem = _certificates()
        _private(ca, ca_pem)
        _private(cert, cert_pem)
        _private(key, key_pem)
        _private(token, secrets.token_urlsafe(32).encode())
    return Access(ca, cert, key, token.read_text().strip())


def _certificates() -> tuple[bytes, bytes, bytes]:
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("kupgrade simulated cluster CA"))
        .issuer_name(_name("kupgrade simulated cluster CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name("kube-apiserver"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=3650))
        .add_extension(
            x509.SubjectAlternativeName(
                [
                    x509.IPAddress(ipaddress.ip_address(LOOPBACK)),
                    x509.DNSName("localhost"),
                ]
            ),
            critical=False,
        )
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    key_pem = key.private_bytes(
        pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return ca.public_bytes(pem), cert.public_bytes(pem), key_pem


def write_kubeconfig(path: Path, name: str, port: int, access: Access) -> Path:
    """A kubeconfig for this cluster (mode 0600): its CA, the server and the token."""
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": name,
                "cluster": {
                    "server": f"https://{LOOPBACK}:{port}",
                    "certificate-authority-data": base64.b64encode(access.ca.read_bytes()).decode(),
                },
            }
        ],
        "users": [{"name": f"{name}-admin", "user": {"token": access.token}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": f"{name}-admin"}}],
        "current-context": name,
        "preferences": {},
    }
    _private(path, yaml.safe_dump(doc, sort_keys=False).encode())
    return path
