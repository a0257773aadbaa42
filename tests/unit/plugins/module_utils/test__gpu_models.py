# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of module_utils/_gpu_models.py: the model -> Slurm GRES type table."""

from __future__ import annotations

import pathlib

import pytest
import yaml

from ansible_collections.gpucluster.training.plugins.module_utils._gpu_models import (
    amd_model, gpu_facts, known_slugs, model_slug, nvidia_model, open_kernel_modules_only,
    proprietary_kernel_modules_only, partition_of, slugify)

ROOT = pathlib.Path(__file__).resolve().parents[4]


@pytest.mark.parametrize("name,chip,cus,slug", [
    ("AMD Instinct MI300X", 0x74A1, 304, "mi300x"),
    ("AMD Instinct MI300X VF", 0x74B5, 304, "mi300x"),
    ("AMD Instinct MI300A", 0x74A0, 228, "mi300a"),
    ("AMD Instinct MI308X", 0x74A2, 20, "mi308x"),
    ("AMD Instinct MI250X", 0x7408, 110, "mi250x"),
    ("AMD Instinct MI250X/MI250", 0x740C, 110, "mi250x"),
    ("AMD Instinct MI250X/MI250", 0x740C, 104, "mi250"),
    ("AMD Instinct MI210", 0x740F, 104, "mi210"),
    ("AMD Instinct MI100", 0x738C, 120, "mi100"),
    ("", 0x74A1, 304, "mi300x"),
    ("AMD Radeon RX 7900 XTX", 0x744C, 96, "rx7900xtx"),
])
def test_amd_slugs(name, chip, cus, slug):
    assert amd_model(name, chip, cus)["slug"] == slug


@pytest.mark.parametrize("name,slug", [
    ("NVIDIA H100 80GB HBM3", "h100"), ("NVIDIA H100 NVL", "h100"), ("NVIDIA A100-SXM4-80GB", "a100"),
    ("NVIDIA A100 80GB PCIe", "a100"), ("Tesla T4", "t4"), ("NVIDIA A10G", "a10g"), ("NVIDIA A10", "a10"),
    ("NVIDIA L40S", "l40s"), ("NVIDIA L4", "l4"), ("NVIDIA H200", "h200"), ("NVIDIA GH200 480GB", "gh200"),
    ("Tesla V100-SXM2-32GB", "v100"), ("NVIDIA GeForce RTX 3090", "rtx3090"),
])
def test_nvidia_slugs(name, slug):
    assert nvidia_model(name)["slug"] == slug


@pytest.mark.parametrize("cus,mode,parts", [(304, "SPX", 1), (152, "DPX", 2), (76, "QPX", 4), (38, "CPX", 8), (100, None, 1), (0, None, 1)])
def test_mi300x_partitions(cus, mode, parts):
    assert partition_of(amd_model("AMD Instinct MI300X"), cus) == {"mode": mode, "partitions_per_device": parts}


def test_slugify_is_clean():
    assert slugify(None) == "gpu"
    assert slugify("AMD Instinct ???") == "gpu"


def test_gpu_facts_empty():
    facts = gpu_facts("none", [], driver_loaded=None)
    assert facts["count"] == 0 and facts["memory_mib"] is None and facts["model"] is None


@pytest.mark.parametrize("name,vendor,slug", [
    ("AMD Instinct MI300X", None, "mi300x"), ("AMD Instinct MI300X", "amd", "mi300x"),
    ("AMD Instinct MI300X", "nvidia", None), ("NVIDIA H100 80GB HBM3", None, "h100"),
    ("NVIDIA A100-SXM4-40GB", "nvidia", "a100"), ("NVIDIA GH200 480GB", None, "gh200"),
    ("AMD Instinct MI250X/MI250", "amd", "mi250x"), ("AMD Radeon PRO W7900", None, None), ("", None, None),
])
def test_model_slug_only_names_table_models(name, vendor, slug):
    assert model_slug(name, vendor) == slug
    if slug:
        assert slug in known_slugs(vendor)


def test_cuda_role_open_only_models_are_the_table_s():
    # The cuda role keeps the list as a role variable (its preflight reads it); it must be the
    # table's open_only column, in any order.
    role_vars = yaml.safe_load((ROOT / "roles/cuda/vars/main.yml").read_text())
    assert sorted(role_vars["__cuda_open_only_models"]) == open_kernel_modules_only()
    assert open_kernel_modules_only() == ["b100", "b200", "gb200", "gh200"]
    assert set(open_kernel_modules_only()) <= set(known_slugs("nvidia"))
    assert sorted(role_vars["__cuda_proprietary_only_models"]) == proprietary_kernel_modules_only() == ["p100", "v100"]
