# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpucluster.training.plugins.module_utils import _hardware as hw
from ansible_collections.gpucluster.training.plugins.module_utils._gpu_models import known_slugs

REQUIRED = ("vendor", "name", "unit", "memory_gib", "memory_bandwidth_tbs", "bf16_tflops",
            "fp8_tflops", "fp8", "interconnect", "interconnect_gbs", "slurm_types", "sources")


@pytest.mark.parametrize("name", sorted(hw.GPUS))
def test_every_preset_is_complete_and_sourced(name):
    entry = hw.GPUS[name]
    for key in REQUIRED:
        assert key in entry, key
    assert entry["sources"], "every figure needs a source"
    assert entry["fp8"] == (entry["fp8_tflops"] is not None)
    assert entry["interconnect"] in ("xgmi", "nvlink")
    assert entry["interconnect_gbs"] == entry["interconnect_links"] * entry["interconnect_link_gbs"]
    # A preset names the models it applies to by their slug in the one model table.
    assert set(entry["slurm_types"]) <= set(known_slugs(entry["vendor"])), entry["slurm_types"]


@pytest.mark.parametrize("name", ["mi300x", "mi325x", "mi250x", "a100-40gb", "a100-80gb", "h100",
                                  "h200"])
def test_issue_presets_exist(name):
    assert hw.gpu_preset(name)["preset"] == name


@pytest.mark.parametrize("name, memory, bf16, fp8", [
    # planner-reference.md section 5 (vendor data sheets, dense figures).
    ("mi300x", 192, 1307.4, 2614.9),
    ("mi325x", 256, 1307.4, 2614.9),
    ("mi250x-card", 128, 383.0, None),
    ("a100-40gb", 40, 312.0, None),
    ("a100-80gb", 80, 312.0, None),
    ("h100", 80, 989.4, 1978.9),
    ("h200", 141, 989.4, 1978.9),
])
def test_reference_figures(name, memory, bf16, fp8):
    entry = hw.gpu_preset(name)
    assert entry["memory_gib"] == memory
    assert entry["bf16_tflops"] == bf16
    assert entry["fp8_tflops"] == fp8


def test_mi250x_preset_is_per_gcd_half_of_the_card():
    gcd, card = hw.GPUS["mi250x"], hw.GPUS["mi250x-card"]
    assert gcd["memory_gib"] * 2 == card["memory_gib"]
    assert gcd["bf16_tflops"] * 2 == card["bf16_tflops"]
    assert gcd["memory_bandwidth_tbs"] * 2 == card["memory_bandwidth_tbs"]
    assert "GCD" in gcd["unit"]


def test_interconnect_figures_from_reference():
    # MI300X: 7 links x 128 GB/s = 896 GB/s; NVLink 600 (A100) and 900 GB/s (H100/H200).
    assert hw.GPUS["mi300x"]["interconnect_gbs"] == 896
    assert hw.GPUS["a100-80gb"]["interconnect_gbs"] == 600
    assert hw.GPUS["h100"]["interconnect_gbs"] == 900
    assert hw.GPUS["h200"]["interconnect_gbs"] == 900


@pytest.mark.parametrize("name, gbps", [
    ("edr", 100), ("hdr", 200), ("ndr", 400), ("hdr100", 100), ("ib-ndr", 400),
    ("roce-100g", 100), ("roce-200g", 200), ("roce-400g", 400), ("400g", 400), ("NDR", 400),
])
def test_link_rates(name, gbps):
    assert hw.link_rate_gbps(name) == gbps
    assert hw.link_bytes_per_s(name) == gbps * 1e9 / 8


def test_every_link_rate_is_sourced():
    for entry in hw.LINK_RATES.values():
        assert entry["sources"]
    for target in hw.LINK_ALIASES.values():
        assert target in hw.LINK_RATES


@pytest.mark.parametrize("bad", ["", "xdr9", "ethernet", None, 400])
def test_unknown_link_raises_value_error(bad):
    with pytest.raises(hw.HardwareError):
        hw.link_rate_gbps(bad)
    assert issubclass(hw.HardwareError, ValueError)


def test_unknown_preset_names_the_known_ones():
    with pytest.raises(hw.HardwareError, match="mi300x"):
        hw.gpu_preset("mi999")


# gpu_info facts as the probe module reports them (keys from issue 2).
@pytest.mark.parametrize("facts, preset, memory_gib", [
    ({"vendor": "amd", "count": 8, "model": "AMD Instinct MI300X", "arch": "gfx942",
      "memory_mib": 196592, "slurm_type": "mi300x"}, "mi300x", 196592 / 1024.0),
    ({"vendor": "amd", "count": 8, "model": "AMD Instinct MI250X", "arch": "gfx90a",
      "memory_mib": 65520, "slurm_type": "mi250x"}, "mi250x", 65520 / 1024.0),
    ({"vendor": "amd", "count": 4, "model": "AMD Instinct MI210", "arch": "gfx90a",
      "memory_mib": 65520, "slurm_type": "mi210"}, "mi210", 65520 / 1024.0),
    ({"vendor": "amd", "count": 4, "model": "AMD Instinct MI100", "arch": "gfx908",
      "memory_mib": 32752, "slurm_type": "mi100"}, "mi100", 32752 / 1024.0),
    ({"vendor": "nvidia", "count": 8, "model": "NVIDIA A100-SXM4-80GB", "arch": "sm_80",
      "memory_mib": 81920, "slurm_type": "a100"}, "a100-80gb", 80.0),
    ({"vendor": "nvidia", "count": 8, "model": "NVIDIA A100-SXM4-40GB", "arch": "sm_80",
      "memory_mib": 40960, "slurm_type": "a100"}, "a100-40gb", 40.0),
    ({"vendor": "nvidia", "count": 8, "model": "NVIDIA H100 80GB HBM3", "arch": "sm_90",
      "memory_mib": 81559, "slurm_type": "h100"}, "h100", 81559 / 1024.0),
    # No slurm_type: the model string decides.
    ({"vendor": "nvidia", "count": 8, "model": "NVIDIA H200", "memory_mib": 143771},
     "h200", 143771 / 1024.0),
])
def test_gpu_info_facts_map_to_preset_with_probed_memory(facts, preset, memory_gib):
    gpu = hw.resolve_gpu(facts)
    assert gpu["preset"] == preset
    assert gpu["source"] == "gpu_info"
    assert gpu["memory_gib"] == pytest.approx(memory_gib)
    assert gpu["bf16_tflops"] == hw.GPUS[preset]["bf16_tflops"]


@pytest.mark.parametrize("facts", [
    {"vendor": "nvidia", "count": 4, "model": "NVIDIA GH200 480GB", "memory_mib": 97871},
    {"vendor": "nvidia", "count": 8, "model": "NVIDIA H800", "memory_mib": 81559},
    {"vendor": "amd", "count": 4, "model": "AMD Instinct MI300A", "memory_mib": 131072},
    {"vendor": "amd", "count": 8, "model": "AMD Instinct MI250", "memory_mib": 65520, "slurm_type": "mi250"},
])
def test_model_without_a_preset_maps_to_none(facts):
    # The model is found in the _gpu_models table (no substring guess: "GH200" is not an H200).
    assert hw.preset_for_gpu_info(facts) is None


def test_gpu_info_without_preset_falls_back_to_probed_memory():
    gpu = hw.resolve_gpu({"vendor": "amd", "count": 1, "model": "AMD Radeon PRO W7900",
                          "arch": "gfx1100", "memory_mib": 49136, "slurm_type": "w7900"})
    assert gpu["preset"] is None
    assert gpu["memory_gib"] == pytest.approx(49136 / 1024.0)
    assert gpu["bf16_tflops"] is None and gpu["fp8"] is False
    assert any("no preset" in w for w in gpu["warnings"])


def test_gpu_info_partitioned_mi300x_warns():
    gpu = hw.resolve_gpu({"vendor": "amd", "count": 64, "model": "AMD Instinct MI300X",
                          "memory_mib": 24576, "slurm_type": "mi300x"})
    assert gpu["preset"] == "mi300x" and gpu["memory_gib"] == 24.0
    assert any("partitioned" in w for w in gpu["warnings"])


def test_gpu_info_without_anything_usable_raises():
    with pytest.raises(hw.HardwareError):
        hw.resolve_gpu({"vendor": "amd", "count": 1, "slurm_type": "unknown"})


def test_explicit_figures_and_preset_override():
    gpu = hw.resolve_gpu({"memory_gib": 96, "bf16_tflops": 500, "fp8_tflops": 1000})
    assert gpu["memory_gib"] == 96 and gpu["fp8"] is True and gpu["source"] == "explicit"
    gpu = hw.resolve_gpu({"preset": "h100", "memory_mib": 95830})
    assert gpu["bf16_tflops"] == 989.4 and gpu["memory_gib"] == pytest.approx(95830 / 1024.0)
    with pytest.raises(hw.HardwareError):
        hw.resolve_gpu({"bf16_tflops": 500})
    with pytest.raises(hw.HardwareError):
        hw.resolve_gpu({"memory_gib": -1})
    with pytest.raises(hw.HardwareError):
        hw.resolve_gpu(["mi300x"])


_text = st.one_of(st.none(), st.text(max_size=12), st.integers(-5, 300000), st.booleans(),
                  st.floats(allow_nan=True))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["vendor", "count", "model", "arch", "memory_mib",
                                        "slurm_type", "preset", "memory_gib", "bf16_tflops",
                                        "fp8_tflops", "fp8", "name"]), _text, max_size=7))
def test_resolve_gpu_raises_only_hardware_error(facts):
    try:
        gpu = hw.resolve_gpu(facts)
    except hw.HardwareError:
        return
    assert gpu["memory_gib"] > 0
