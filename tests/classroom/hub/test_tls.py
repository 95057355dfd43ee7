"""A class published with a certificate: the proxy speaks HTTPS with it (and nothing else on its
port), logins cross it encrypted, and the class network inside keeps working (a student's
server reaches the exchange). A second class beside the session's, on 127.0.0.1 only; that
publishing beyond this machine needs the certificate at all is tests/jaxcourse/test_cli.py's one line."""

from __future__ import annotations

import shutil
import ssl
import subprocess

import pytest
import requests

from autograder.core.course import Course
from classroom.hub.deploy import LOCAL_DOMAIN

from ...helpers.classroom import TEST_LIMITS, class_course
from ...helpers.course import ASSIGNMENT, REPO
from ...helpers.hub import User, jaxcourse, resolve_localhost_subdomains, save_logs
from ...helpers.net import free_port

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _certificate(folder):
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=jaxcourse.localhost",
            "-addext",
            "subjectAltName=DNS:jaxcourse.localhost,DNS:*.jaxcourse.localhost,IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


def test_a_class_published_with_a_certificate_speaks_https_only(tmp_path, course, client, cpu_image, monkeypatch):
    checkout = Course(tmp_path / "course")
    shutil.copytree(course.root, checkout.root, ignore=shutil.ignore_patterns(".jaxcourse", "class", "graded"))
    class_course(checkout, TEST_LIMITS)
    cert, key = _certificate(tmp_path)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(cert))  # this test's requests trust the class's certificate
    classdir, roster, port = tmp_path / "tlsclass", tmp_path / "roster.csv", free_port()
    roster.write_text("username,role,password\nteach,instructor,teach-pw-1\nada,student,ada-pw-123\n")
    try:
        jaxcourse(
            checkout.root,
            "hub",
            "up",
            "--class",
            str(classdir),
            "--roster",
            str(roster),
            "--port",
            str(port),
            "--tls-cert",
            str(cert),
            "--tls-key",
            str(key),
        )
        jaxcourse(checkout.root, "release", ASSIGNMENT, "--class", str(classdir))
        served = ssl.get_server_certificate(("127.0.0.1", port))
        assert ssl.PEM_cert_to_DER_cert(served) == ssl.PEM_cert_to_DER_cert(cert.read_text())
        with pytest.raises(requests.exceptions.ConnectionError):
            requests.get(f"http://127.0.0.1:{port}/hub/login", timeout=10)
        resolve_localhost_subdomains()
        ada = User(f"https://{LOCAL_DOMAIN}:{port}", "ada", "ada-pw-123").ready()
        assert ada.api("GET", "/hub/api/users/ada").json()["name"] == "ada"
        released = [a for a in ada.assignments() if a["assignment_id"] == ASSIGNMENT]
        assert released and released[0]["status"] == "released"  # her server reached the exchange inside
    finally:
        save_logs(client, f"jaxcourse-{classdir.name}", REPO / "build" / "test-artifacts" / "tls-hub-logs")
        jaxcourse(checkout.root, "hub", "down", "--class", str(classdir))
