# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of module_utils/_ibstat.py over the real ibstat captures in tests/fixtures/ibstat."""

from __future__ import annotations


import pytest

from ansible_collections.gpucluster.training.plugins.module_utils._ibstat import IbstatError, parse_ibstat
from ansible_collections.gpucluster.training.tests.unit.fixture_files import fixture_text
from ansible_collections.gpucluster.training.tests.unit.fuzz_inputs import parser_tests

IB = "ibstat_H100_8xCX7-NDR400-IB_plus_4xCX6Dx-Ethernet_mooncake2039.txt"
ROCE = "ibstat_2xCX6Dx-RoCE-100G_l2fwd-nv6.txt"
MIXED = "ibstat_CX4-RoCE-active_plus_IB-down_hurray0.txt"


@pytest.mark.parametrize("name,devices,active,ib_active,roce_active", [(IB, 12, 10, 8, 2), (ROCE, 2, 2, 0, 2), (MIXED, 2, 1, 0, 1)])
def test_fixture(name, devices, active, ib_active, roce_active):
    fact = parse_ibstat(fixture_text("ibstat", name))
    assert fact["source"] == "ibstat"
    assert len(fact["devices"]) == devices
    ports = [p for d in fact["devices"] for p in d["ports"] if p["state"] == "ACTIVE"]
    assert len(ports) == active
    assert len([p for p in ports if p["link_layer"] == "InfiniBand"]) == ib_active
    assert len([p for p in ports if p["link_layer"] == "Ethernet"]) == roce_active
    assert all(p["gids"] is None for d in fact["devices"] for p in d["ports"])


def test_ib_values():
    dev = parse_ibstat(fixture_text("ibstat", IB))["devices"][0]
    assert dev["name"] == "mlx5_0" and dev["fw_ver"] == "28.41.1000" and dev["ca_type"] == "MT4129"
    assert dev["ports"][0] == {"port": 1, "state": "ACTIVE", "phys_state": "LinkUp", "rate_gbps": 400, "link_layer": "InfiniBand",
                               "lid": 287, "sm_lid": 1024, "port_guid": "0x58a2e103001b2576", "gids": None}


def test_down_port():
    port = parse_ibstat(fixture_text("ibstat", MIXED))["devices"][1]["ports"][0]
    assert (port["state"], port["phys_state"], port["rate_gbps"], port["sm_lid"]) == ("DOWN", "Disabled", 10, 1)


def test_fractional_rate_and_warnings():
    # synthetic: a real ibstat block (Hurray0 mlx5_0) with rate 2.5 (seen on a CX6-Dx, MrBr-github/lshca#79) and an ibwarn line
    text = fixture_text("ibstat", MIXED).split("CA 'mlx5_1'")[0].replace("Rate: 100", "Rate: 2.5") + "ibwarn: [1] umad_init: umad_init\n"
    fact = parse_ibstat(text)
    assert fact["devices"][0]["ports"][0]["rate_gbps"] == 2.5
    assert fact["warnings"] == ["ibwarn: [1] umad_init: umad_init"]


@pytest.mark.parametrize("lid", ["0xZZ", "1" * 21, "\u0661"])
def test_lid_that_is_no_number_names_the_port(lid):
    # synthetic: a real ibstat block (Hurray0 mlx5_0) with its Base lid replaced
    text = fixture_text("ibstat", MIXED).split("CA 'mlx5_1'")[0].replace("Base lid: 0", "Base lid: " + lid, 1)
    with pytest.raises(IbstatError, match=r"^ibstat: CA 'mlx5_0' port 1 Base lid: .* is not a number$"):
        parse_ibstat(text)


@pytest.mark.parametrize("value", [None, "", "hello", "Port 1:\n", "CA 'x'\n", "CA 'x'\n\tNumber of ports: 1\n"])
def test_not_ibstat(value):
    with pytest.raises(IbstatError):
        parse_ibstat(value)


TEXTS = [fixture_text("ibstat", IB), fixture_text("ibstat", ROCE), fixture_text("ibstat", MIXED)]


def _shape(result):
    assert isinstance(result["devices"], list)


test_property_garbled_fixture, test_property_arbitrary_text, test_property_reordered_lines, test_not_text = parser_tests(
    parse_ibstat, IbstatError, TEXTS, _shape)
