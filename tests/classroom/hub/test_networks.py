"""Each server's network takes a /28 that no Docker network uses, from the class's pool, and says
which setting to widen when none is left. (That a server on it reaches the hub and nothing else
is tests/classroom/hub's, from inside a real student's container.)"""

from __future__ import annotations

import types

import pytest

from classroom.hub import networks, settings


def _client(*subnets: str):
    listed = [types.SimpleNamespace(attrs={"IPAM": {"Config": [{"Subnet": s}]}}) for s in subnets]
    listed.append(types.SimpleNamespace(attrs={"IPAM": {"Config": None}}))  # the host and none networks
    return types.SimpleNamespace(networks=types.SimpleNamespace(list=lambda **_: listed))


def test_a_servers_network_takes_the_first_free_slot_of_the_pool():
    assert networks.free_subnet(_client(), "10.213.0.0/16") == "10.213.0.0/28"
    taken = _client("10.213.0.0/28", "10.213.0.16/28", "172.17.0.0/16", "fd00::/64")
    assert networks.free_subnet(taken, "10.213.0.0/16") == "10.213.0.32/28"
    # another network that overlaps the pool, however it was cut, is stepped around
    assert networks.free_subnet(_client("10.213.0.0/27"), "10.213.0.0/16") == "10.213.0.32/28"


def test_a_full_pool_says_which_setting_to_widen():
    with pytest.raises(networks.NetworkError, match=r"no /28 is left in 10.213.0.0/28 .* widen \[hub\] server_subnets"):
        networks.free_subnet(_client("10.213.0.0/28"), "10.213.0.0/28")


@pytest.mark.parametrize("value", ["10.213.0.0/29", "not a network", "fd00::/64", 10])
def test_a_pool_that_cannot_hold_a_network_is_refused(tmp_path, value):
    (tmp_path / "jaxcourse.toml").write_text(f"[hub]\nserver_subnets = {value!r}\n".replace("'", '"'))
    with pytest.raises(settings.SettingsError, match=r"server_subnets = .* must be an IPv4 network"):
        settings.load(tmp_path)


class _Network:
    """A network as the engine lists it: its endpoints by id, a load balancer's among them on an overlay."""

    def __init__(self, name, endpoints):
        self.name, self.attrs, self.joined = name, {"Containers": endpoints}, []

    def reload(self):
        pass

    def connect(self, container):
        self.joined.append(container)


def _engine(existing=None):
    made = {}

    def create(name, **options):
        made.update(options, name=name)
        return _Network(name, {})

    listed = [existing] if existing else []
    nets = types.SimpleNamespace(list=lambda **_: listed, create=create)
    return types.SimpleNamespace(networks=nets), made


@pytest.mark.parametrize("encrypted", [True, False])
def test_a_servers_overlay_is_internal_and_encrypted_where_the_kernel_can(encrypted):
    client, made = _engine()
    networks.attach(
        client,
        "c-lab-ann-net",
        "c-hub",
        {"jaxcourse.class": "c"},
        "10.213.0.0/16",
        "ann",
        overlay=True,
        encrypted=encrypted,
    )
    assert made["driver"] == "overlay" and made["internal"] and made["attachable"]
    assert made["options"] == ({"encrypted": ""} if encrypted else {})
    assert made["labels"] == {"jaxcourse.class": "c", networks.USER_LABEL: "ann"}


def test_the_hub_joins_a_servers_network_once_whatever_else_is_on_it():
    """An overlay used before lists a load balancer, which is no container: the hub is found or
    joined by name all the same."""
    balancer = {"lb-c-lab-ann-net": {"Name": "c-lab-ann-net-endpoint"}}
    without = _Network("c-lab-ann-net", dict(balancer))
    networks.attach(_engine(without)[0], "c-lab-ann-net", "c-hub", {}, "10.213.0.0/16", "ann", overlay=True)
    assert without.joined == ["c-hub"]
    joined = _Network("c-lab-ann-net", {**balancer, "3f2a": {"Name": "c-hub"}})
    networks.attach(_engine(joined)[0], "c-lab-ann-net", "c-hub", {}, "10.213.0.0/16", "ann", overlay=True)
    assert joined.joined == []
