# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of the nccl-tests / rccl-tests parser (documentation: collective_perf.yml)."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._collective_perf import (
    CollectivePerfParseError,
    parse_collective_perf,
)
from ansible_collections.gpucluster.training.plugins.plugin_utils._filter import jinja_filter


@jinja_filter("collective_perf", CollectivePerfParseError, lines=True)
def collective_perf(text):
    """Text (or list of lines) of an nccl-tests / rccl-tests run -> structured result."""
    return parse_collective_perf(text)


class FilterModule:
    """gpucluster.training.collective_perf"""

    def filters(self):
        return {"collective_perf": collective_perf}
