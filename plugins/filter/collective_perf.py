# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of the nccl-tests / rccl-tests parser (documentation: collective_perf.yml).

``collective_perf``: Text (or list of lines) of an nccl-tests / rccl-tests run -> structured result.
"""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._collective_perf import CollectivePerfParseError, parse_collective_perf
from ansible_collections.gpucluster.training.plugins.plugin_utils._filter import filter_module, jinja_filter

collective_perf = jinja_filter("collective_perf", CollectivePerfParseError, lines=True)(parse_collective_perf)

FilterModule = filter_module(collective_perf=collective_perf)
