# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of module_utils _slurm_conf.gpu_devices: a node's usable GPUs (documentation: gpu_devices.yml)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.training.plugins.module_utils._slurm_conf import SlurmConfError, gpu_devices as _gpu_devices
from ansible_collections.gpucluster.training.plugins.plugin_utils._filter import filter_module


def gpu_devices(gpus, host=None):
    """gpucluster_gpus fact (or null) -> its counted devices in index order; an error names ``host``."""
    try:
        return _gpu_devices(gpus)
    except SlurmConfError as exc:
        raise AnsibleFilterError("gpu_devices: %s%s" % ("%s: " % host if host else "", exc)) from exc


FilterModule = filter_module(gpu_devices=gpu_devices)
