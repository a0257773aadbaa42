# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of the NCCL_DEBUG=INFO log parser (documentation: nccl_log.yml).

``nccl_log``: Text (or list of lines) of an NCCL/RCCL INFO log -> network, RDMA, GDRDMA facts.
"""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._nccl_log import NcclLogParseError, parse_nccl_log
from ansible_collections.gpucluster.training.plugins.plugin_utils._filter import filter_module, jinja_filter

nccl_log = jinja_filter("nccl_log", NcclLogParseError, lines=True)(parse_nccl_log)

FilterModule = filter_module(nccl_log=nccl_log)
