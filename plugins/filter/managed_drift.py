# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of state_drifted (documentation: managed_drift.yml)."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._managed_state import ManagedStateError, state_drifted
from ansible_collections.gpucluster.training.plugins.plugin_utils._filter import filter_module, jinja_filter


@jinja_filter("managed_drift", ManagedStateError)
def managed_drift(state, kinds, names=None):
    """A managed_state result, the kinds (and names) of items a change step writes -> whether to run it."""
    return state_drifted(state, kinds, names)


FilterModule = filter_module(managed_drift=managed_drift)
