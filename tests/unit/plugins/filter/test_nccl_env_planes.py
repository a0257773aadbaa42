# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Multi-plane InfiniBand in nccl_env.

The one-plane host is the real 8x ConnectX-7 NDR ibstat (tests/fixtures/ibstat, mooncake2039: all
eight IB ports on SM LID 1024).  The two-plane host is a SYNTHETIC VARIANT built from real
captures: the same ibstat with four of the eight ports given the SM LID of the InfiniBand port
in the Hurray0 capture (SM lid 1), as a fabric with one subnet manager per plane shows it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ansible_collections.gpucluster.training.plugins.module_utils._ibstat import parse_ibstat
from ansible_collections.gpucluster.training.plugins.module_utils._nccl_env import NcclEnvError, derive_nccl_env

IBSTAT = Path(__file__).resolve().parents[3] / "fixtures" / "ibstat"
NDR = (IBSTAT / "ibstat_H100_8xCX7-NDR400-IB_plus_4xCX6Dx-Ethernet_mooncake2039.txt").read_text()
HURRAY = (IBSTAT / "ibstat_CX4-RoCE-active_plus_IB-down_hurray0.txt").read_text()
ALL8 = "=mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_9:1,mlx5_10:1,mlx5_11:1"
PLANE_B = ("mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11")


def two_planes(plane_a=None, plane_b=None):
    """The two-plane variant; ``plane_a`` / ``plane_b``: SYNTHETIC SM LIDs for the two halves instead."""
    other = re.findall(r"SM lid: (\d+)", HURRAY)[-1]
    assert other == "1"
    blocks = re.split(r"(?m)^(?=CA ')", NDR)
    out = []
    for block in blocks:
        name = re.match(r"CA '([^']+)'", block)
        if name and name.group(1) in PLANE_B:
            block = block.replace("SM lid: 1024", "SM lid: %s" % (plane_b or other))
        elif name and plane_a:
            block = block.replace("SM lid: 1024", "SM lid: %s" % plane_a)
        out.append(block)
    return parse_ibstat("".join(out))


def test_one_plane_real_capture_keeps_eight_rails_without_warning():
    result = derive_nccl_env(parse_ibstat(NDR))
    assert result["env"]["NCCL_IB_HCA"] == ALL8
    assert result["warnings"] == []


def test_two_planes_keep_all_eight_rails_and_warn():
    fact = two_planes()
    assert sorted(set(p["sm_lid"] for d in fact["devices"] for p in d["ports"] if p["link_layer"] == "InfiniBand")) == [1, 1024]
    result = derive_nccl_env(fact)
    assert result["env"]["NCCL_IB_HCA"] == ALL8
    assert len(result["warnings"]) == 1
    assert "2 planes" in result["warnings"][0] and "SM LID 1: mlx5_6:1, mlx5_9:1, mlx5_10:1, mlx5_11:1" in result["warnings"][0]
    assert "2 planes kept" in result["reasons"]["NCCL_IB_HCA"]


def test_policy_restricts_the_planes():
    # 4 ports on each plane: the tie goes to the lower SM LID
    single = derive_nccl_env(two_planes(), policy={"single_plane": True})
    assert single["env"]["NCCL_IB_HCA"] == "=mlx5_6:1,mlx5_9:1,mlx5_10:1,mlx5_11:1"
    assert single["warnings"] == [] and "policy single_plane" in single["reasons"]["NCCL_IB_HCA"]
    allowed = derive_nccl_env(two_planes(), policy={"deny": list(PLANE_B)})
    assert allowed["env"]["NCCL_IB_HCA"] == "=mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1" and allowed["warnings"] == []
    with pytest.raises(NcclEnvError, match="single_plane"):
        derive_nccl_env(two_planes(), policy={"single_plane": "yes"})


def test_single_plane_tie_goes_to_the_lower_sm_lid_as_a_number():
    # SYNTHETIC SM LIDs 12 and 3 (4 ports each): as text "12" < "3", as numbers 3 < 12
    fact = two_planes(plane_a="12", plane_b="3")
    single = derive_nccl_env(fact, policy={"single_plane": True})
    assert single["env"]["NCCL_IB_HCA"] == "=mlx5_6:1,mlx5_9:1,mlx5_10:1,mlx5_11:1"
    assert "one subnet: SM LID 3 (policy single_plane)" in single["reasons"]["NCCL_IB_HCA"]
    swapped = derive_nccl_env(two_planes(plane_a="3", plane_b="12"), policy={"single_plane": True})
    assert swapped["env"]["NCCL_IB_HCA"] == "=mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1"
    # the warning without the policy names the planes in the same order
    assert derive_nccl_env(fact)["warnings"][0].index("SM LID 3:") < derive_nccl_env(fact)["warnings"][0].index("SM LID 12:")
