"""Each server's network takes a /28 that no Docker network uses, from the class's pool, and says
which setting to widen when none is left. (That a server on it reaches the hub and nothing else
is tests/hub's, from inside a real student's container.)"""

from __future__ import annotations

import types

import pytest

from autograder.hub import networks, settings


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
