"""Tries to reach the grader's machine and the internet. With no network every attempt fails, the
cell carries on and the notebook earns full marks; had one succeeded, the cell would raise and
the report would name what it reached. {port} is a port the test listens on, on every address."""

EXPECTED = {}
EXTRA_CELL = """import socket
reached = []
for host in ("127.0.0.1", "172.17.0.1", "host.docker.internal", "{host_ip}", "1.1.1.1", "pypi.org"):
    try:
        with socket.create_connection((host, {port}), timeout=1) as s:
            s.sendall(b"leaked")
        reached.append(host)
    except OSError:
        pass
if reached:
    raise RuntimeError(f"reached {reached}")"""
