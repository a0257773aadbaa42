# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""After converge.yml (fail, then exclude, then gpu3 alone) on SIMULATED fabrics from real captures.

Expected values are read from the capture files by this test's own parsing.
"""
import json
import os
import re

FIXTURES = os.path.join(os.environ.get("MOLECULE_PROJECT_DIRECTORY", os.getcwd()), "tests", "fixtures")
IB_CAPTURE = "ibstat/ibstat_H100_8xCX7-NDR400-IB_plus_4xCX6Dx-Ethernet_mooncake2039.txt"


def _natural(name):
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


def _active_ib_ports():
    ports, device, current = [], None, {}
    with open(os.path.join(FIXTURES, IB_CAPTURE)) as handle:
        text = handle.read()
    for block in re.split(r"^CA '", text, flags=re.M)[1:]:
        device = block.split("'", 1)[0]
        current = dict(re.findall(r"^\s+([A-Za-z ]+):\s*(.*?)\s*$", block, flags=re.M))
        if current["State"] == "Active" and current["Link layer"] == "InfiniBand":
            ports.append(("%s:1" % device, int(current["Rate"]), int(current["Base lid"]), int(current["SM lid"])))
    return sorted(ports, key=lambda p: _natural(p[0]))


def _me(host):
    return host.check_output("hostname")


def _fact(host):
    return json.loads(host.file("/etc/ansible/facts.d/gpucluster_rdma.fact").content_string)


def _assignments(text):
    return dict(line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))


def test_excluded_node_has_no_nccl_settings_and_says_why(host):
    if _me(host) != "rdma-mismatch-gpu2":
        return
    assert not host.file("/etc/nccl.conf").exists
    assert not host.file("/etc/gpucluster/nccl.env").exists
    fact = _fact(host)
    assert fact["excluded"] is True and fact["nccl_env"] == {}
    differences = fact["fabric"]["differences"]
    assert differences[0] == "selected port count 1 (mlx5_0:1) differs from 2 on rdma-mismatch-gpu1", differences
    assert differences[1].startswith("NCCL_IB_GID_INDEX 5 (mlx5_0:1) differs from 3 on rdma-mismatch-gpu1"), differences


def test_agreeing_roce_node_is_configured(host):
    if _me(host) != "rdma-mismatch-gpu1":
        return
    conf = _assignments(host.file("/etc/nccl.conf").content_string)
    assert conf["NCCL_IB_HCA"] == "=mlx5_0:1,mlx5_1:1"
    assert conf["NCCL_IB_GID_INDEX"] == "3"
    assert "NCCL_NET_GDR_LEVEL" not in conf  # no peer-memory stand-in on this node
    assert "unset: no peer-memory module and no DMA-BUF GPU driver found" in host.file("/etc/nccl.conf").content_string
    assert _fact(host)["excluded"] is False


def test_infiniband_node_alone_gets_the_values_of_its_capture(host):
    if _me(host) != "rdma-mismatch-gpu3":
        return
    ports = _active_ib_ports()
    text = host.file("/etc/nccl.conf").content_string
    conf = _assignments(text)
    assert conf == {
        "NCCL_IB_HCA": "=" + ",".join(p[0] for p in ports),
        "NCCL_IB_DISABLE": "0",
        "NCCL_SOCKET_IFNAME": "=" + host.check_output("ip -4 route show default").split(" dev ")[1].split()[0],
    }
    assert len(ports) == 8 and set(p[1] for p in ports) == {400}
    for name, rate, lid, sm_lid in ports:
        assert "#   %s ACTIVE/LinkUp InfiniBand %d Gb/s, netdev -, NUMA node -, LID %d, SM LID %d\n" % (name, rate, lid, sm_lid) in text
    assert "# NCCL_IB_GID_INDEX: unset: InfiniBand ports address by LID" in text
    assert "left out 2 Ethernet" in text
    assert _fact(host)["excluded"] is False


def test_memlock_drop_in_value_reaches_a_service_process(host):
    # rdma_memlock_limit: 4096 (KiB) here; the control unit has no drop-in and keeps the default.
    if _me(host) == "rdma-mismatch-gpu2":  # excluded: the role stopped before the limits
        assert not host.file("/etc/systemd/system/gpucluster-memlock-probe.service.d/50-gpucluster-memlock.conf").exists
        return
    for unit in ("gpucluster-memlock-probe", "gpucluster-memlock-control"):
        host.run_expect([0], "systemctl start %s.service" % unit)
    assert host.file("/run/gpucluster-memlock-probe.out").content_string.strip() == "4096"
    assert host.file("/run/gpucluster-memlock-control.out").content_string.strip() != "4096"


def test_memlock_limits_d_value_reaches_a_login_session(host):
    if _me(host) == "rdma-mismatch-gpu2":
        return
    assert host.check_output("runuser -u nobody -- sh -c 'ulimit -l'") == "4096"
