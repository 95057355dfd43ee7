"""The swarm's parts that need no engine: the queue's certificate, the work folders' keys and the
command a node mounts them with, a rediss:// broker without its CA, which task is a server."""

from __future__ import annotations

import shlex
import stat

import pytest

from classroom import environment, swarm
from classroom.hub import class_tls, homes, swarm_tasks
from classroom.queue.app import BrokerError, make_app


def test_the_queue_ca_signs_redis_and_keeps_no_key_to_sign_more(tmp_path):
    from cryptography import x509

    made = class_tls.issue(tmp_path / "queue-tls", "redis", "jaxcourse-x-redis")
    ca, cert = (x509.load_pem_x509_certificate(p.read_bytes()) for p in (made.ca, made.cert))
    cert.verify_directly_issued_by(ca)
    assert cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(
        x509.DNSName
    ) == ["jaxcourse-x-redis"]
    assert not cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert sorted(p.name for p in made.folder.iterdir()) == ["ca.pem", "redis-key.pem", "redis.pem"]
    assert stat.S_IMODE(made.key.stat().st_mode) == 0o600 and stat.S_IMODE(made.folder.stat().st_mode) == 0o700
    again = class_tls.issue(tmp_path / "queue-tls", "redis", "jaxcourse-x-redis")
    assert again.cert.read_bytes() == made.cert.read_bytes()  # made once: Redis keeps its certificate


def test_the_registry_s_certificate_names_the_manager_s_address_as_an_engine_checks_it(tmp_path):
    """An engine pulling from ``10.0.0.5:5000`` checks the certificate for that IP address."""
    from cryptography import x509

    made = class_tls.issue(tmp_path / "registry-tls", "registry", "10.0.0.5")
    cert = x509.load_pem_x509_certificate(made.cert.read_bytes())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert [str(ip) for ip in names.get_values_for_type(x509.IPAddress)] == ["10.0.0.5"]
    assert names.get_values_for_type(x509.DNSName) == []
    cert.verify_directly_issued_by(x509.load_pem_x509_certificate(made.ca.read_bytes()))


def test_the_registry_s_certificate_and_ca_follow_the_manager_s_address(tmp_path):
    """An engine checks the registry by the address it pulls from: a manager that moved gets a
    certificate for its new address, from a new CA (the old one's key is gone), and keeps it."""
    first = class_tls.issue(tmp_path, "registry", "10.0.0.5")
    old_ca = first.ca.read_bytes()
    moved = class_tls.issue(tmp_path, "registry", "10.0.0.9")
    assert class_tls.named(moved) == "10.0.0.9" and moved.ca.read_bytes() != old_ca
    kept = moved.cert.read_bytes()
    assert class_tls.issue(tmp_path, "registry", "10.0.0.9").cert.read_bytes() == kept


def test_a_worker_secret_s_name_changes_with_its_value():
    """A Swarm secret cannot change: a class directory made anew (a new password) must not find
    its workers reading the old one under the same name."""
    from classroom.hub import swarm_queue

    first = swarm_queue.secret_name("jaxcourse-c", "broker", "rediss://:one@jaxcourse-c-redis:6379/0")
    again = swarm_queue.secret_name("jaxcourse-c", "broker", "rediss://:one@jaxcourse-c-redis:6379/0")
    other = swarm_queue.secret_name("jaxcourse-c", "broker", "rediss://:two@jaxcourse-c-redis:6379/0")
    assert first == again and first != other and first.startswith("jaxcourse-c-broker-")
    assert "one" not in first  # the name shows no part of the value


def test_the_homes_keys_are_made_once_and_known_hosts_follows_the_address(tmp_path):
    first = homes.keys(tmp_path, "10.0.0.5")
    node_key = first.node_key.read_bytes()
    assert node_key.startswith(b"-----BEGIN OPENSSH PRIVATE KEY-----")
    assert stat.S_IMODE(first.node_key.stat().st_mode) == 0o600
    host_public = (first.folder / "host_key.pub").read_text().split()[:2]
    assert host_public[0] == "ssh-ed25519"
    assert first.known_hosts.read_text().split()[:3] == ["[10.0.0.5]:2222", *host_public]
    moved = homes.keys(tmp_path, "10.0.0.9")
    assert moved.node_key.read_bytes() == node_key
    assert moved.known_hosts.read_text().startswith("[10.0.0.9]:2222 ssh-ed25519 ")


def test_a_node_mounts_the_homes_checking_the_server_with_the_class_key(tmp_path):
    made = homes.keys(tmp_path / "secrets dir", "10.0.0.5")
    argv = homes.mount_command("jaxcourse-c", "10.0.0.5", made)
    assert argv[:2] == ["sh", "-c"]
    words = shlex.split(argv[2])
    assert words[:3] == ["mkdir", "-p", "/var/lib/jaxcourse-homes/jaxcourse-c"]
    sshfs = words[words.index("sshfs") :]
    options = dict(o.partition("=")[::2] for o in sshfs[2].split(","))
    assert options["IdentityFile"] == str(made.node_key)  # a path with a space survives the shell
    assert options["StrictHostKeyChecking"] == "yes" and options["UserKnownHostsFile"] == str(made.known_hosts)
    assert sshfs[3:] == ["jovyan@10.0.0.5:/home", "/var/lib/jaxcourse-homes/jaxcourse-c"]


def test_a_rediss_broker_without_the_class_ca_is_refused_in_one_line(monkeypatch, tmp_path):
    monkeypatch.delenv(environment.BROKER_CA, raising=False)
    with pytest.raises(BrokerError, match=r"^a rediss:// broker needs the class's queue CA: set \$JAXCOURSE_BROKER_CA"):
        make_app("rediss://:pw@redis:6379/0", 60.0)
    monkeypatch.setenv(environment.BROKER_CA, str(tmp_path / "missing.pem"))
    with pytest.raises(BrokerError, match=r"secrets/queue-tls/ca\.pem"):
        make_app("rediss://:pw@redis:6379/0", 60.0)
    made = class_tls.issue(tmp_path / "queue-tls", "redis", "r")
    monkeypatch.setenv(environment.BROKER_CA, str(made.ca))
    app = make_app("rediss://:pw@redis:6379/0", 60.0)
    assert app.conf.broker_use_ssl["ssl_ca_certs"] == str(made.ca)
    assert app.conf.broker_use_ssl["ssl_cert_reqs"] == 2  # ssl.CERT_REQUIRED
    assert not make_app("redis://:pw@redis:6379/0", 60.0).conf.broker_use_ssl  # one host: as before


@pytest.mark.parametrize(
    ("config", "expected"),
    [("CONFIG_INET_ESP=y\n", True), ("CONFIG_INET_ESP=m\n", True), ("# CONFIG_INET_ESP is not set\n", False)],
)
def test_an_encrypted_overlay_is_asked_for_only_where_the_kernel_has_esp(monkeypatch, tmp_path, config, expected):
    import builtins
    import gzip

    boot = tmp_path / "config"
    boot.write_text("CONFIG_VXLAN=y\n" + config)
    real_open = builtins.open

    def fake_open(path, *args, **kwargs):
        return real_open(boot if str(path).startswith("/boot/config-") else path, *args, **kwargs)

    def no_proc(path, *args, **kwargs):
        raise FileNotFoundError(path)

    monkeypatch.setattr(gzip, "open", no_proc)
    monkeypatch.setattr(builtins, "open", fake_open)
    assert swarm.esp_available() is expected


class _NotAManager:
    """An engine outside any swarm, as `docker info` describes it."""

    def info(self):
        return {"Swarm": {"LocalNodeState": "inactive", "ControlAvailable": False}}


def test_a_swarm_class_on_an_engine_outside_a_swarm_says_what_to_run():
    from classroom.hub import deploy, swarm_queue

    with pytest.raises(
        deploy.HubError, match=r"^--swarm needs this engine to be a swarm manager: run `docker swarm init"
    ):
        swarm_queue.start(_NotAManager(), None, deploy.ClassImages("jaxcourse:cpu", "jaxcourse:cpu"))
    with pytest.raises(deploy.HubError, match=r"^this engine is not a swarm manager: run `jaxcourse workers scale` on"):
        swarm_queue.rescale(_NotAManager(), None, 2)


def test_a_server_is_its_newest_task_whatever_its_stamp_s_digits():
    """Go's RFC 3339 stamps drop trailing zeros (a whole second has no fraction), so as text
    ``...:05Z`` would sort after ``...:05.1Z`` and ``.1Z`` after ``.12Z``."""
    stale = {"ID": "stale", "CreatedAt": "2026-11-27T08:00:05.12Z"}
    for newer in ("2026-11-27T08:00:05.2Z", "2026-11-27T08:00:06Z", "2026-11-27T08:00:05.120000001Z"):
        replacement = {"ID": "new", "CreatedAt": newer}
        assert swarm_tasks.current_task([stale, replacement]) is replacement
        assert swarm_tasks.current_task([replacement, stale]) is replacement
    assert swarm_tasks.current_task([{"ID": "a", "CreatedAt": "2026-11-27T08:00:05Z"}, stale])["ID"] == "stale"
    assert swarm_tasks.current_task([]) is None


@pytest.mark.parametrize("state", ["new", "assigned", "accepted", "preparing", "ready", "starting", "running"])
def test_a_server_on_its_way_is_alive(state):
    """A replacement is assigned, pulls, is ready, starts: the hub must not call that stopped."""
    assert swarm_tasks.exit_status({"Status": {"State": state, "Message": state}}) is None


@pytest.mark.parametrize("state", ["complete", "shutdown", "failed", "rejected", "orphaned", "remove"])
def test_a_server_that_ended_is_stopped_with_its_status(state):
    assert f"'State': '{state}'" in swarm_tasks.exit_status({"Status": {"State": state, "Err": "exit 1"}})
