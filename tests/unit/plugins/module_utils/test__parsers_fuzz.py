# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parsers never break (issue 15.3): every pure parser against the same adversarial inputs.

SYNTHETIC inputs from tests/unit/fuzz_inputs.py (built from the real fixtures). For every parser
and input the outcome must be a result or the parser's OWN error class (never Python's
ValueError/OverflowError/RecursionError, never a hang), and a result must hold no impossible
figure (nan, inf, a negative or absurd bandwidth, a negative device number, 0 MiB of GPU memory).
Linearity comes from the parsers' construction (split-based parsing, bounded quantifiers, size
limits checked first); a watchdog turns a hang into a failure instead of blocking the suite.
Run with ``-s`` to see the counts line.
"""

from __future__ import annotations

import math
import signal

import pytest

from ansible_collections.gpucluster.training.plugins.module_utils import _planner as planner
from ansible_collections.gpucluster.training.plugins.module_utils._collective_perf import (
    CollectivePerfParseError, parse_collective_perf)
from ansible_collections.gpucluster.training.plugins.module_utils._gpu_sysfs import (
    GpuSysfsError, parse_kfd_properties, pci_gpus)
from ansible_collections.gpucluster.training.plugins.module_utils._ibstat import IbstatError, parse_ibstat
from ansible_collections.gpucluster.training.plugins.module_utils._nccl_env import NcclEnvError, derive_nccl_env
from ansible_collections.gpucluster.training.plugins.module_utils._nccl_log import NcclLogParseError, parse_nccl_log
from ansible_collections.gpucluster.training.plugins.module_utils._nvidia_smi import NvidiaSmiError, parse_nvidia_smi_xml
from ansible_collections.gpucluster.training.plugins.module_utils._perftest import PerftestParseError, parse_perftest_bw
from ansible_collections.gpucluster.training.plugins.module_utils._rocminfo import RocminfoError, parse_rocminfo
from ansible_collections.gpucluster.training.plugins.module_utils._sysfs_rdma import (
    SysfsRdmaError, parse_show_gids, parse_sysfs_rdma)
from ansible_collections.gpucluster.training.plugins.module_utils._validate_judge import (
    ValidateJudgeError, judge_collective, node_hardware)
from ansible_collections.gpucluster.training.tests.unit.fixture_files import fixture_text
from ansible_collections.gpucluster.training.tests.unit.fuzz_inputs import adversarial


def _port_files(text):
    base = "class/infiniband/mlx5_0/ports/1/"
    return {base + "state": "4: ACTIVE\n", base + "phys_state": "5: LinkUp\n", base + "rate": text,
            base + "link_layer": "Ethernet\n", base + "gids/0": text, base + "gid_attrs/types/0": text,
            base + "gid_attrs/ndevs/0": text, base + "lid": text,
            "class/infiniband/mlx5_0/device/numa_node": text}


def _rdma_fact_from(text):
    # The text as the rate, GID and netdev of an otherwise valid gpucluster_rdma fact.
    return {"source": "sysfs", "peer_memory": [], "devices": [{"name": "mlx5_0", "netdev": text[:64] or None, "ports": [
        {"port": 1, "state": "ACTIVE", "phys_state": "LinkUp", "rate_gbps": text[:64], "link_layer": "Ethernet",
         "gids": [{"index": 3, "gid": text[:64], "type": "RoCEv2", "netdev": text[:64], "ipv4": text[:64]}]}]}]}


def _planner_coercion(text):
    return (planner._int(text, "nodes"), planner._float(text, "mfu"))


def _judge(text):
    parsed = parse_collective_perf(text)
    hw = node_hardware(override={"gpu": "mi300x", "gpu_count": 8, "ports": 8, "rate_gbps": 400})
    return judge_collective(parsed, "all_reduce_multi", hw, node=["a", "b"])


# name: (call, own error classes, sample text)
PARSERS = {
    "rocminfo": (parse_rocminfo, (RocminfoError,), fixture_text("rocminfo/rocminfo_4xMI300X_gfx942_EPYC9474F_thamada.txt")),
    "nvidia_smi": (parse_nvidia_smi_xml, (NvidiaSmiError,),
                   fixture_text("nvidia-smi/nvidia_smi_q_x_Tesla-T4_passthrough_drv515_telegraf.xml")),
    "ibstat": (parse_ibstat, (IbstatError,),
               fixture_text("ibstat/ibstat_H100_8xCX7-NDR400-IB_plus_4xCX6Dx-Ethernet_mooncake2039.txt")),
    "show_gids": (parse_show_gids, (SysfsRdmaError,),
                  fixture_text("gids/show_gids_CX6_ens1f0_RoCE_v1v2_ipv4_at_index4-5_ibm_ssnr_pr4.txt")),
    "sysfs_rdma": (lambda t: parse_sysfs_rdma(_port_files(t)), (SysfsRdmaError,), "4: ACTIVE\n"),
    "nccl_log": (parse_nccl_log, (NcclLogParseError,),
                 fixture_text("nccl-log/nccl_alltoall_2node_H20_RoCE_bond_NCCL_RDMA_Plugin_v6_GDRDMA_nccl2.26.5_nccltests321.log")),
    "collective_perf": (parse_collective_perf, (CollectivePerfParseError,),
                        fixture_text("nccl-tests/rccl_all_reduce_perf_2node_16xMI300X_RoCE_hisohara.txt")),
    "perftest": (parse_perftest_bw, (PerftestParseError,),
                 fixture_text("perftest/ib_write_bw_bidir_report_gbits_a_RoCE_use_rocm_rocmdocs.txt")),
    "gpu_sysfs kfd": (parse_kfd_properties, (GpuSysfsError,), "cpu_cores_count 0\nsimd_count 1216\nlocation_id 3072\ndomain 0\n"),
    "gpu_sysfs pci": (lambda t: pci_gpus({"bus/pci/devices/0000:0c:00.0/vendor": t, "bus/pci/devices/0000:0c:00.0/class": t,
                                          "bus/pci/devices/0000:0c:00.0/numa_node": t}), (GpuSysfsError,), "0x1002\n"),
    "nccl_env": (lambda t: derive_nccl_env(_rdma_fact_from(t), policy={"gid_index": 3}), (NcclEnvError,), "100"),
    "planner coercion": (_planner_coercion, (planner.PlannerError,), "+-4"),
    "validate judge": (_judge, (CollectivePerfParseError, ValidateJudgeError),
                       fixture_text("nccl-tests/rccl_all_reduce_perf_2node_16xMI300X_RoCE_hisohara.txt")),
}

_FIGURE_WORDS = ("gbps", "gbs", "bw", "bandwidth", "mib", "memory", "rate", "minor", "count", "bytes", "size")


def _impossible(value, key="", path="result"):
    """Paths of impossible figures in a parser's result."""
    found = []
    if isinstance(value, dict):
        for k, v in value.items():
            found += _impossible(v, str(k), "%s.%s" % (path, k))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            found += _impossible(v, key, "%s[%d]" % (path, i))
    elif isinstance(value, float) and not math.isfinite(value):
        found.append("%s=%r" % (path, value))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        lowered = key.lower()
        if any(w in lowered for w in _FIGURE_WORDS) and value < 0:
            found.append("%s=%r (negative)" % (path, value))
        if ("gbps" in lowered or "gbs" in lowered) and value > 1e6:
            found.append("%s=%r (absurd bandwidth)" % (path, value))
        if "mib" in lowered and value == 0:
            found.append("%s=0 MiB" % path)
    return found


class _Hang(Exception):
    pass


def _watchdog(_signum, _frame):
    raise _Hang()


CASES = [(name, kind) for name in PARSERS for kind, _text in adversarial(PARSERS[name][2])]
TOTALS = {"cases": 0, "results": 0, "own errors": 0, "unexpected": 0, "hangs": 0, "impossible": 0}


@pytest.mark.parametrize("name", list(PARSERS))
def test_parser_never_breaks(name):
    call, own, sample = PARSERS[name]
    problems = []
    for kind, text in adversarial(sample):
        TOTALS["cases"] += 1
        previous = signal.signal(signal.SIGALRM, _watchdog)
        signal.alarm(20)
        try:
            result = call(text)
        except own:
            TOTALS["own errors"] += 1
            continue
        except _Hang:
            TOTALS["hangs"] += 1
            problems.append("%s: HANG on %s" % (name, kind))
            continue
        except Exception as exc:  # pylint: disable=broad-except
            TOTALS["unexpected"] += 1
            problems.append("%s: %s on %s: %s" % (name, type(exc).__name__, kind, str(exc)[:120]))
            continue
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
        TOTALS["results"] += 1
        bad = _impossible(result)
        if bad:
            TOTALS["impossible"] += 1
            problems.append("%s: accepted impossible figures on %s: %s" % (name, kind, ", ".join(bad[:3])))
    print("\nfuzz %s: %s" % (name, TOTALS))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("text", ["<nvidia_smi_log><attached_gpus>1</attached_gpus><gpu id=\"00000000:00:1E.0\">"
                                  "<product_name>Tesla T4</product_name><minor_number>-1</minor_number>"
                                  "<fb_memory_usage><total>15360 MiB</total></fb_memory_usage></gpu></nvidia_smi_log>",
                                  "<nvidia_smi_log><attached_gpus>1</attached_gpus><gpu id=\"00000000:00:1E.0\">"
                                  "<product_name>Tesla T4</product_name><minor_number>0</minor_number>"
                                  "<fb_memory_usage><total>0 MiB</total></fb_memory_usage></gpu></nvidia_smi_log>"])
def test_nvidia_smi_refuses_impossible_devices(text):
    # SYNTHETIC: minor number -1 would become /dev/nvidia-1 in gres.conf; 0 MiB is no GPU memory.
    with pytest.raises(NvidiaSmiError):
        parse_nvidia_smi_xml(text)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-5", "1e999", "9" * 5000])
def test_bandwidth_rows_refuse_impossible_figures(value):
    # SYNTHETIC: one all_reduce_perf row of the MI300X fixture with its busbw replaced.
    sample = fixture_text("nccl-tests/rccl_all_reduce_perf_2node_16xMI300X_RoCE_hisohara.txt")
    row = [line for line in sample.splitlines() if line.strip().startswith("1073741824")][0]
    fields = row.split()
    fields[7] = value
    try:
        parsed = parse_collective_perf(sample.replace(row, "  " + "  ".join(fields)))
    except CollectivePerfParseError:
        return
    assert not _impossible(parsed)
