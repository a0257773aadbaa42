# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The gpu_devices filter is the Jinja face of module_utils _slurm_conf.gpu_devices."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.training.plugins.filter.gpu_devices import FilterModule

GPU_DEVICES = FilterModule().filters()["gpu_devices"]


def test_registered_under_its_name():
    assert set(FilterModule().filters()) == {"gpu_devices"}


def test_hand_written_devices_without_counted_count():
    gpus = {"vendor": "nvidia", "devices": [{"index": 1, "device_file": "/dev/nvidia1"},
                                            {"index": 0, "device_file": "/dev/nvidia0", "counted": True},
                                            {"index": 2, "counted": False}]}
    assert [d["device_file"] for d in GPU_DEVICES(gpus, "gpu1")] == ["/dev/nvidia0", "/dev/nvidia1"]
    assert GPU_DEVICES(None) == []


def test_error_names_the_host_and_the_key():
    with pytest.raises(AnsibleFilterError, match=r"^gpu_devices: gpu2: gpucluster_gpus.devices must be a list of devices, got a string$"):
        GPU_DEVICES({"devices": "0,1"}, "gpu2")
    with pytest.raises(AnsibleFilterError, match=r"^gpu_devices: gpucluster_gpus must be a dict"):
        GPU_DEVICES([0, 1])
