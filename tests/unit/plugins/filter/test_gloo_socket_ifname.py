# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of the gloo_socket_ifname filter (module_utils/_nccl_env.gloo_socket_ifname)."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.training.plugins.filter.gloo_socket_ifname import FilterModule
from ansible_collections.gpucluster.training.plugins.module_utils._nccl_env import gloo_socket_ifname


@pytest.mark.parametrize("value, expected", [
    ("=eth0", "eth0"), ("eth0", "eth0"), ("=ens1f0,ens2f0", "ens1f0"), ("ib0, ib1", "ib0"),
    ("^docker0,lo", "bond0"), ("=", "bond0"), ("", "bond0"), (None, "bond0"), (" =enp1s0 ", "enp1s0"),
    # NCCL's exact exclusion: still no interface to use; and the old derivation's '=' before an exclusion list
    ("^=docker0", "bond0"), ("=^docker0,lo", "bond0"),
])
def test_one_interface_from_nccl_syntax(value, expected):
    assert gloo_socket_ifname(value, fallback="bond0") == expected


def test_no_fallback_gives_empty():
    assert gloo_socket_ifname("^lo") == "" and gloo_socket_ifname("^lo", fallback=None) == ""
    assert FilterModule().filters()["gloo_socket_ifname"] is gloo_socket_ifname
