# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Role gpucluster.training.base (site.yml's base stage) on three real containers."""
import pytest

NODES = ["cluster-ctl1", "cluster-gpu1", "cluster-gpu2"]


@pytest.mark.parametrize("peer", NODES)
def test_every_host_resolves_every_other_by_inventory_name(host, peer):
    address = host.run("getent ahostsv4 %s", peer)
    assert address.rc == 0, address.stderr
    # the answer comes from the managed block of /etc/hosts, not only from podman's DNS
    hosts = host.file("/etc/hosts").content_string
    block = hosts.split("# BEGIN gpucluster.training cluster members")[1].split("# END")[0]
    assert any(line.split()[-1] == peer for line in block.strip().splitlines())


def test_hosts_block_addresses_are_the_peers_real_addresses(host):
    block = host.file("/etc/hosts").content_string.split("# BEGIN gpucluster.training cluster members")[1].split("# END")[0]
    entries = dict((line.split()[-1], line.split()[0]) for line in block.strip().splitlines())
    assert sorted(entries) == NODES
    ping = host.run("ping -c1 -W2 %s", entries["cluster-ctl1"]) if host.exists("ping") else None
    own = host.check_output("hostname")
    assert entries[own] in host.check_output("ip -4 -o addr show")
    if ping is not None:
        assert ping.rc == 0


@pytest.mark.parametrize("pkg", ["numactl", "pciutils", "chrony"])
def test_base_packages_installed(host, pkg):
    assert host.package(pkg).is_installed


def test_numa_balancing_off_at_boot(host):
    conf = host.file("/etc/sysctl.d/60-gpucluster-base.conf")
    assert conf.exists
    assert "kernel.numa_balancing=0" in conf.content_string.splitlines()


def test_chrony_runs_without_clock_control(host):
    assert host.service("chrony").is_running
    cmdline = host.check_output("ps -o args= -C chronyd")
    assert " -x" in cmdline, cmdline


def test_compute_nodes_take_time_from_the_controller(host):
    if host.check_output("hostname") == "cluster-ctl1":
        assert "local stratum 10" in host.file("/etc/chrony/chrony.conf").content_string
        return
    sources = host.run("chronyc -n sources")
    assert sources.rc == 0
    conf = host.file("/etc/chrony/chrony.conf").content_string
    assert "server cluster-ctl1 iburst" in conf
    assert "pool" not in conf
