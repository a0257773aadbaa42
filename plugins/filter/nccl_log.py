# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of the NCCL_DEBUG=INFO log parser (documentation: nccl_log.yml)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.training.plugins.module_utils._nccl_log import (
    NcclLogParseError,
    parse_nccl_log,
)


def nccl_log(text):
    """Text (or list of lines) of an NCCL/RCCL INFO log -> network, RDMA, GDRDMA facts."""
    if isinstance(text, (list, tuple)):
        text = "\n".join(str(line) for line in text)
    try:
        return parse_nccl_log(text)
    except NcclLogParseError as exc:
        raise AnsibleFilterError("nccl_log: %s" % exc) from exc


class FilterModule:
    """gpucluster.training.nccl_log"""

    def filters(self):
        return {"nccl_log": nccl_log}
