"""A student attacks the class: every attempt to cross into another student's work, the hub's
API, the grading side or the instructor's files fails, with a message that says why.

The attacker, mallory, is a student with a running server. Attacks over HTTP use her own token
(which her server holds, so any code she runs has it); attacks from inside her server run as code
in her container (`docker exec`, as her terminal would)."""

from __future__ import annotations

import json
import socket
import subprocess
import time

import pytest

from ...helpers import attacks
from ...helpers.classroom import wait_for
from ...helpers.course import ASSIGNMENT, NOTEBOOK, release_notebook
from ...helpers.hub import subdomain
from ...helpers.malformed import KINDS
from ...helpers.network import PROBES, Listener

pytestmark = [pytest.mark.docker, pytest.mark.slow]
EXCHANGE = "/services/exchange/api"  # the path a raw request names (_raw gives its host)


@pytest.fixture(scope="module")
def mallory(hub):
    user = hub["users"]["mallory"].ready()
    user.action("fetch", ASSIGNMENT)
    return user


@pytest.fixture(scope="module")
def her_container(hub, client, mallory):
    return client.containers.get(f"{hub['name']}-lab-mallory")


def _in_her_server(container, code: str) -> dict:
    """Run ``code`` in mallory's container as her (uid 1000); it prints one JSON line."""
    done = container.exec_run(["python", "-c", code], user="1000:100")
    assert done.exit_code == 0, done.output.decode()
    return json.loads(done.output.decode().strip().splitlines()[-1])


def _raw(hub) -> tuple[str, str]:
    """Where a raw request to the exchange goes: this machine's published port, with the Host
    header the proxy routes on (the service's own origin)."""
    return "127.0.0.1", subdomain(hub["users"]["mallory"].hub, "exchange", "service").split("://", 1)[1]


def test_her_container_holds_no_one_elses_files(hub, her_container):
    mounts = {m["Source"]: m["Destination"] for m in her_container.attrs["Mounts"]}
    assert mounts == {str(hub["classdir"] / "home" / "mallory"): "/home/jovyan/work"}
    found = _in_her_server(her_container, attacks.FILES_WALK)
    assert found["hits"] == []


def test_the_exchange_shows_her_only_her_own(hub, mallory):
    attacks.the_exchange_shows_her_only_her_own(mallory)


def test_without_a_token_or_with_a_forged_one_the_exchange_refuses(hub, mallory):
    attacks.without_a_real_token_the_exchange_refuses(mallory)


def test_a_submission_is_filed_under_her_name_whatever_it_claims(hub, mallory):
    attacks.a_submission_is_filed_under_her_name(hub["classdir"], mallory)


def test_released_files_and_others_feedback_cannot_be_written(hub, mallory):
    attacks.released_files_and_feedback_cannot_be_written(mallory)


def test_the_hub_api_gives_her_token_nothing_but_herself(hub, mallory, her_container):
    assert mallory.api("GET", "/hub/api/users").status_code == 403
    assert mallory.api("GET", "/hub/api/users/bob").status_code == 404  # not even whether bob exists
    assert mallory.api("POST", "/hub/api/users/bob/server").status_code in (403, 404)
    # The token her server holds (and so any code she runs) is narrower still: no token making.
    seen = _in_her_server(her_container, attacks.TOKEN_PROBE)
    assert seen == {"users": 403, "tokens": 403, "bob": 404}


def test_the_queue_workers_and_other_servers_are_out_of_her_reach(hub, mallory, her_container):
    name = hub["name"]
    hub["users"]["bob"].ready()  # bob's server must be there to be out of her reach
    probe = (
        PROBES
        + f"""
print(json.dumps({{"redis": connect("{name}-redis", 6379), "grading": connect("{name}-grading", 22),
                  "worker": connect("{name}-worker-1", 22),
                  "bob": http("http://{name}-lab-bob:8888/user/bob/api/contents")}}))
"""
    )
    seen = _in_her_server(her_container, probe)
    assert seen["redis"] == seen["grading"] == seen["worker"] == "gaierror"  # not even a name on her network
    assert seen["bob"] == "URLError", seen  # bob's server is on a network of its own: no name, no route


def test_her_server_reaches_the_hub_and_nothing_else(hub, client, mallory, her_container):
    """From inside her container: the hub's API, its proxy and the exchange answer. A listener on
    the host (tried at the host's side of her network's bridge, of the hub's, and of Docker's
    default bridge), a classmate's server and a decoy on a network of the test's own are out of
    reach, and her default route goes through an address that no interface of the host holds."""
    name = hub["name"]
    bob = client.containers.get(f"{name}-lab-bob")
    bob_ip = next(iter(bob.attrs["NetworkSettings"]["Networks"].values()))["IPAddress"]
    listener = Listener()
    gateways = sorted(
        {
            c["Gateway"]
            for n in client.networks.list(names=[f"{name}-lab-mallory-net", f"{name}-hub", "bridge"])
            for c in n.attrs["IPAM"]["Config"] or []
            if c.get("Gateway")
        }
    )
    decoy_net = client.networks.create(f"{name}-test-decoy", driver="bridge")
    decoy = client.containers.run(
        her_container.image.id,
        ["python3", "-m", "http.server", "8080"],
        detach=True,
        network=decoy_net.name,
        entrypoint=[],
        user="1000:100",
    )
    try:
        decoy.reload()
        decoy_ip = decoy.attrs["NetworkSettings"]["Networks"][decoy_net.name]["IPAddress"]
        targets = {
            **{f"host {g}": [g, listener.port] for g in gateways},
            "bob": [bob_ip, 8888],
            "decoy": [decoy_ip, 8080],
        }
        seen = _in_her_server(
            her_container,
            PROBES
            + f"""
route = [line.split() for line in open("/proc/net/route").read().splitlines()[1:]]
gateway = next((socket.inet_ntoa(int(r[2], 16).to_bytes(4, "little")) for r in route if r[1] == "00000000"), None)
print(json.dumps({{"reached": {{k: connect(*v) for k, v in {targets!r}.items()}}, "gateway": gateway,
                  "api": http("http://{name}-hub:8081/hub/api/"), "proxy": http("http://{name}-hub:8000/hub/api/"),
                  "exchange": http(os.environ["JAXCOURSE_EXCHANGE_URL"].rstrip("/") + "/api/assignments")}}))
""",
        )
    finally:
        decoy.remove(force=True)
        decoy_net.remove()
    assert (seen["api"], seen["proxy"], seen["exchange"]) == (200, 200, 200), seen
    assert all(result != "connected" for result in seen["reached"].values()), seen
    assert listener.connections == []
    host_addresses = subprocess.run(["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True).stdout
    assert seen["gateway"] is None or f" {seen['gateway']}/" not in host_addresses, (seen["gateway"], host_addresses)


@pytest.mark.parametrize(
    "kind", [k for k in KINDS if k.name in ("not_utf8", "truncated", "nbgrader_is_text")], ids=lambda k: k.name
)
def test_a_notebook_no_grader_can_read_is_refused_with_the_reason(hub, mallory, course, kind, tmp_path):
    """Refused at submit (400, the reason in the panel's words), and nothing of it kept."""
    kind.write(tmp_path / NOTEBOOK, release_notebook(course))
    inbound = hub["classdir"] / "exchange" / "inbound" / "mallory"
    before = sorted(inbound.rglob("*")) if inbound.is_dir() else []
    answer = attacks.submit(mallory, {NOTEBOOK: (tmp_path / NOTEBOOK).read_bytes()})
    assert answer.status_code == 400 and kind.reason in answer.json()["error"], answer.text
    assert (sorted(inbound.rglob("*")) if inbound.is_dir() else []) == before


def test_an_upload_the_exchange_refuses_leaves_nothing_and_makes_no_student(hub, mallory):
    """A file beside a folder of its name, a NUL in a name, a name part too long for the disk:
    each refused with 400 before anything is written. And a folder in the exchange that the
    exchange never makes (here the one a half-written upload used to leave, with a
    submission.json of hers) is no student's submission: it is never graded (the journal is read
    once her junk is, in test_her_junk_is_graded_as_what_it_is)."""
    exchange = hub["classdir"] / "exchange"
    for files in ({"a": b"1", "a/b": b"2"}, {"nb\x00.ipynb": b"{}"}, {"x" * 300 + ".ipynb": b"{}"}):
        got = attacks.submit(mallory, {NOTEBOOK: b"{}", **files})
        assert got.status_code == 400 and "is not allowed" in got.json()["error"], got.text
    staging = exchange / "staging"
    assert not (staging.is_dir() and list(staging.iterdir()))
    planted = exchange / "inbound" / ".incoming-t5rb4taw" / ASSIGNMENT / "20261123T184001.123456Z"
    planted.mkdir(parents=True)
    (planted / NOTEBOOK).write_text("{}")
    (planted / "submission.json").write_text(json.dumps({"student": "mallory", "files": {NOTEBOOK: 2}}))


def test_a_thousand_submissions_stop_at_the_limit_with_a_message(hub, mallory):
    codes, last = {}, None
    for _ in range(1000):
        last = attacks.submit(mallory, {"junk.txt": b"x"})
        codes[last.status_code] = codes.get(last.status_code, 0) + 1
    taken = len(list((hub["classdir"] / "exchange" / "inbound" / "mallory" / ASSIGNMENT).iterdir()))
    assert taken == 3 and codes.get(201, 0) <= 3 and codes[429] >= 997
    assert last.json()["error"] == f"you have submitted {ASSIGNMENT} 3 times, the most allowed"


def test_a_one_gigabyte_notebook_is_refused_before_it_is_read(hub, mallory):
    start = time.monotonic()
    address, host = _raw(hub)
    with socket.create_connection((address, hub["port"]), timeout=30) as sock:
        request = (
            f"POST {EXCHANGE}/assignments/{ASSIGNMENT}/submissions HTTP/1.1\r\n"
            f"Host: {host}\r\nAuthorization: token {mallory.token}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {1 << 30}\r\n\r\n"
        )
        sock.sendall(request.encode() + b'{"files": {"big.ipynb": "' + b"A" * (1 << 20))
        answer = sock.recv(65536).decode(errors="replace")
    assert time.monotonic() - start < 30
    assert " 413 " in answer.splitlines()[0], answer[:300]
    assert "a submission may hold 2 MB; this one is 1024 MB" in answer
    assert not list((hub["classdir"] / "exchange" / "inbound" / "mallory").rglob("big.ipynb"))


def test_a_body_of_no_declared_size_is_cut_off_past_the_limit(hub, mallory):
    """Sent in chunks, the size is known only as it grows: past the limit it is refused, and the
    student still gets the exchange's answer, not a reset connection."""
    address, host = _raw(hub)
    with socket.create_connection((address, hub["port"]), timeout=30) as sock:
        sock.sendall(
            (
                f"POST {EXCHANGE}/assignments/{ASSIGNMENT}/submissions HTTP/1.1\r\n"
                f"Host: {host}\r\nAuthorization: token {mallory.token}\r\n"
                f"Transfer-Encoding: chunked\r\n\r\n"
            ).encode()
        )
        for _ in range(4):  # 4 MB, twice the limit
            sock.sendall(b"100000\r\n" + b"A" * (1 << 20) + b"\r\n")
        answer = sock.recv(65536).decode(errors="replace")
    assert " 413 " in answer.splitlines()[0], answer[:300]
    assert "a submission may hold 2 MB; this one is larger" in answer


def test_her_trickling_uploads_hold_two_places_and_no_more(hub, client, mallory):
    """Half-sent uploads are held in memory: hers hold two places at once, a third is refused at
    once, and the hub's container has a memory limit whatever else gets through."""

    address, host = _raw(hub)

    def trickle() -> socket.socket:
        sock = socket.create_connection((address, hub["port"]), timeout=30)
        sock.sendall(
            (
                f"POST {EXCHANGE}/assignments/{ASSIGNMENT}/submissions HTTP/1.1\r\nHost: {host}\r\n"
                f"Authorization: token {mallory.token}\r\nContent-Type: application/json\r\n"
                f"Content-Length: 1000000\r\n\r\n"
            ).encode()
            + b'{"files": {"a.ipynb": "'
        )
        return sock

    held = [trickle(), trickle()]
    try:
        time.sleep(3)  # the exchange has read both heads, on a loaded machine too
        third = trickle()
        answer = third.recv(65536).decode(errors="replace")
        third.close()
        assert " 429 " in answer.splitlines()[0] and "too many uploads at once" in answer, answer[:300]
    finally:
        for sock in held:
            sock.close()
    limits = client.containers.get(f"{hub['name']}-hub").attrs["HostConfig"]
    assert limits["Memory"] > 0 and limits["MemorySwap"] == limits["Memory"]


def test_her_junk_is_graded_as_what_it_is(hub, mallory):
    """What she did submit was recorded, invalid, with the reason: nothing she sent stops the class."""
    journal = hub["classdir"] / "graded" / "recorded.jsonl"
    lines = wait_for(
        lambda: (
            [json.loads(x) for x in journal.read_text().splitlines() if '"mallory/' in x] if journal.is_file() else []
        ),
        300,
        "mallory's grades",
    )
    assert {line["status"] for line in lines} == {"invalid"}
    assert ".incoming" not in journal.read_text()  # the planted folder sorts first: it was passed over


def test_filling_her_work_folder_stops_her_server_until_she_clears_it(hub, mallory, her_container):
    attacks.over_quota_stops_her_server(hub["classdir"], mallory, lambda code: _in_her_server(her_container, code))
