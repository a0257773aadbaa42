# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of module_utils/_validate_hardware.hca_labels (documentation: validate_ports.yml)."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._validate_judge import ValidateJudgeError, hca_labels
from ansible_collections.gpucluster.training.plugins.plugin_utils._filter import filter_module, jinja_filter

# Selected RDMA ports (the rdma role's recorded dicts or 'dev:port' strings) -> ['dev:port'].
validate_ports = jinja_filter("validate_ports", ValidateJudgeError)(hca_labels)

FilterModule = filter_module(validate_ports=validate_ports)
