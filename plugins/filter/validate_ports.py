# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of module_utils/_validate_hardware.hca_labels (documentation: validate_ports.yml)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.training.plugins.module_utils._validate_judge import (
    ValidateJudgeError,
    hca_labels,
)


def validate_ports(ports):
    """Selected RDMA ports (the rdma role's recorded dicts or 'dev:port' strings) -> ['dev:port']."""
    try:
        return hca_labels(ports)
    except ValidateJudgeError as exc:
        raise AnsibleFilterError("validate_ports: %s" % exc) from exc


class FilterModule:
    """gpucluster.training.validate_ports"""

    def filters(self):
        return {"validate_ports": validate_ports}
