# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Role gpucluster.training.rdma on two containers with SIMULATED RDMA hardware.

Each container's sysfs tree was built from a different real capture (molecule.yml says which).
The expected NCCL values are computed here from the capture files themselves, with a parser of
this test's own, not from the role or the collection's parsers.
"""
import json
import os
import re

import pytest

FIXTURES = os.path.join(os.environ.get("MOLECULE_PROJECT_DIRECTORY", os.getcwd()), "tests", "fixtures")
CAPTURES = {
    "rdma-gpu1": {"show_gids": "gids/show_gids_2xCX_RoCE_ens3np0_ens2np0_rows_for_mlx5_0-1_nccl1131.txt",
                  "ibstat": "ibstat/ibstat_2xCX6Dx-RoCE-100G_l2fwd-nv6.txt", "vendor": "nvidia"},
    "rdma-gpu2": {"show_gids": "gids/show_gids_CX6_ens1f0_RoCE_v1v2_ipv4_at_index4-5_ibm_ssnr_pr4.txt",
                  "ibstat": "ibstat/ibstat_2xCX6Dx-RoCE-100G_l2fwd-nv6.txt", "vendor": "amd"},
}


def _natural(name):
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


def _ibstat_rates(path):
    rates, device = {}, None
    with open(path) as handle:
        for line in handle:
            match = re.match(r"^CA '(.+)'", line.strip())
            if match:
                device = match.group(1)
            elif line.strip().startswith("Rate:"):
                rates[device] = int(line.split(":")[1])
    return rates


def expected_from_captures(name, default_iface):
    """What the capture says NCCL needs: RoCE v2 rows with an IPv4 address, per device."""
    capture = CAPTURES[name]
    v2_ipv4 = {}
    with open(os.path.join(FIXTURES, capture["show_gids"])) as handle:
        for line in handle:
            fields = line.split()
            if len(fields) >= 7 and fields[2].isdigit() and re.match(r"^\d+\.\d+\.\d+\.\d+$", fields[4]) and fields[5] == "v2":
                v2_ipv4["%s:%s" % (fields[0], fields[1])] = (int(fields[2]), fields[4], fields[6])
    hcas = sorted(v2_ipv4, key=_natural)
    (index,) = set(v[0] for v in v2_ipv4.values())
    conf = {
        "NCCL_IB_HCA": "=" + ",".join(hcas),
        "NCCL_IB_GID_INDEX": str(index),
        "NCCL_SOCKET_IFNAME": "=" + default_iface,
        "NCCL_IB_DISABLE": "0",
        # NCCL_NET_GDR_LEVEL: both nodes carry a peer-memory stand-in (molecule.yml), but NCCL picks the
        # level from the topology unless rdma_gdr_level is set: not written
        "NCCL_DEBUG": "WARN",  # rdma_nccl_extra_env
    }
    env = dict(conf)
    if capture["vendor"] == "amd":  # rdma_rccl_env, AMD nodes only
        conf["RCCL_MSCCL_ENABLE"] = "0"
        env.update({"RCCL_MSCCL_ENABLE": "0", "HSA_FORCE_FINE_GRAIN_PCIE": "1"})
    rates = _ibstat_rates(os.path.join(FIXTURES, capture["ibstat"]))
    return {"conf": conf, "env": env, "hcas": hcas, "gids": v2_ipv4, "rates": rates}


def _me(host):
    return host.check_output("hostname")


def _default_iface(host):
    return host.check_output("ip -4 route show default").split(" dev ")[1].split()[0]


def _assignments(text):
    return dict(line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))


def test_node_is_labelled_simulated(host):
    readme = host.file("/var/lib/gpucluster-test/README").content_string
    assert readme.startswith("SIMULATED")
    assert CAPTURES[_me(host)]["show_gids"] in readme


def test_nccl_conf_holds_exactly_the_values_of_this_nodes_capture(host):
    expected = expected_from_captures(_me(host), _default_iface(host))
    conf = host.file("/etc/nccl.conf")
    assert conf.mode == 0o644
    assert _assignments(conf.content_string) == expected["conf"]


def test_every_nccl_conf_value_says_where_it_came_from(host):
    me = _me(host)
    expected = expected_from_captures(me, _default_iface(host))
    lines = host.file("/etc/nccl.conf").content_string.splitlines()
    for number, line in enumerate(lines):
        if line and not line.startswith("#"):
            assert lines[number - 1].startswith("#"), line
    text = "\n".join(lines)
    for hca in expected["hcas"]:
        index, ipv4, netdev = expected["gids"][hca]
        rate = expected["rates"][hca.split(":")[0]]
        assert re.search(r"#   %s ACTIVE/LinkUp Ethernet %d Gb/s, netdev %s, NUMA node -, GID %d RoCEv2 %s\n"
                         % (re.escape(hca), rate, re.escape(netdev), index, re.escape(ipv4)), text), text
    assert "index %s is the RoCE v2 GID with an IPv4-mapped address" % expected["conf"]["NCCL_IB_GID_INDEX"] in text
    assert "highest rate 100 Gb/s" in text
    assert "default-route interface" in text
    assert "# rdma_nccl_extra_env (site setting)\nNCCL_DEBUG=WARN" in text
    marker = ("peer-memory module(s) loaded: nvidia_peermem" if me == "rdma-gpu1"
              else "peer-memory client registered (kernel/mm/memory_peers/amdkfd/version")
    # reasons are word-wrapped into "#   " continuation lines: compare the unwrapped text
    assert marker in text.replace("\n#   ", " "), text


def test_rccl_settings_only_on_the_amd_node(host):
    conf = host.file("/etc/nccl.conf").content_string
    env = host.file("/etc/gpucluster/nccl.env").content_string
    if CAPTURES[_me(host)]["vendor"] == "amd":
        assert "RCCL_MSCCL_ENABLE=0" in conf
        # read by ROCm before RCCL loads nccl.conf: environment files only
        assert "HSA_FORCE_FINE_GRAIN_PCIE=" not in conf
        assert "HSA_FORCE_FINE_GRAIN_PCIE=1" in env
    else:
        assert "RCCL_" not in conf and "HSA_" not in env


@pytest.mark.parametrize("how", [
    "set -a; . /etc/gpucluster/nccl.env; set +a; env",
    ". /etc/profile.d/gpucluster-nccl.sh; env",
])
def test_env_file_and_profile_export_the_same_values(host, how):
    expected = expected_from_captures(_me(host), _default_iface(host))
    out = host.check_output("env -i /bin/sh -c %s", how)
    got = dict(line.split("=", 1) for line in out.splitlines() if re.match(r"^(NCCL|RCCL|HSA)_", line))
    assert got == expected["env"]


def test_login_shell_sees_the_settings(host):
    expected = expected_from_captures(_me(host), _default_iface(host))
    assert host.check_output("bash -lc 'echo $NCCL_IB_HCA'") == expected["conf"]["NCCL_IB_HCA"]


def test_local_facts_carry_the_settings_for_job_templates(host):
    expected = expected_from_captures(_me(host), _default_iface(host))
    fact = json.loads(host.file("/etc/ansible/facts.d/gpucluster_rdma.fact").content_string)
    assert fact["excluded"] is False
    assert fact["fabric"]["ok"] is True
    assert fact["nccl_env"] == expected["env"]
    assert fact["gpu_vendor"] == CAPTURES[_me(host)]["vendor"]


def _ceiling_kib(host):
    """The hard memlock limit of PID 1: this sandbox cannot raise rlimits (tools/containers.conf),
    so no process here can get more, whatever it asks for. "unlimited" on a machine that can."""
    line = [ln for ln in host.file("/proc/1/limits").content_string.splitlines() if ln.startswith("Max locked memory")][0]
    hard = line.split()[4]
    return "unlimited" if hard == "unlimited" else str(int(hard) // 1024)


def test_a_service_process_gets_the_highest_locked_memory_limit(host):
    # systemd applies the drop-in (LimitMEMLOCK=infinity) to the unit; the process gets as much
    # as the machine allows: unlimited, or here the sandbox's ceiling. That the drop-in's value
    # reaches the process is shown with a finite limit in molecule/rdma_mismatch.
    props = host.check_output("systemctl show gpucluster-memlock-probe.service -p LimitMEMLOCK -p DropInPaths")
    assert "LimitMEMLOCK=infinity" in props.splitlines()
    assert "/etc/systemd/system/gpucluster-memlock-probe.service.d/50-gpucluster-memlock.conf" in props
    host.run_expect([0], "systemctl start gpucluster-memlock-probe.service")
    assert host.file("/run/gpucluster-memlock-probe.out").content_string.strip() == _ceiling_kib(host)


def test_slurmd_gets_the_drop_in_before_it_is_installed(host):
    dropin = host.file("/etc/systemd/system/slurmd.service.d/50-gpucluster-memlock.conf")
    assert "LimitMEMLOCK=infinity" in dropin.content_string.splitlines()


def test_login_sessions_get_the_highest_locked_memory_limit(host):
    limits = host.file("/etc/security/limits.d/90-gpucluster-rdma.conf").content_string.split("\n")
    assert "*       hard    memlock    unlimited" in limits
    assert "*       soft    memlock    unlimited" in limits
    assert host.check_output("runuser -u nobody -- sh -c 'ulimit -l'") == _ceiling_kib(host)


@pytest.mark.parametrize("pkg", ["rdma-core", "ibverbs-utils", "infiniband-diags", "perftest"])
def test_rdma_packages_installed(host, pkg):
    assert host.package(pkg).is_installed
