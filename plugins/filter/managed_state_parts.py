# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of state_parts (documentation: managed_state_parts.yml)."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._managed_state import ManagedStateError, state_parts
from ansible_collections.gpucluster.training.plugins.plugin_utils._filter import filter_module, jinja_filter


@jinja_filter("managed_state_parts", ManagedStateError)
def managed_state_parts(state, parts):
    """A managed_state result of several parts' items -> {part: that part's result}."""
    return state_parts(state, parts)


FilterModule = filter_module(managed_state_parts=managed_state_parts)
