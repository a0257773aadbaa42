# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of service_down (documentation: managed_service_down.yml)."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._managed_state import ManagedStateError, service_down
from ansible_collections.gpucluster.training.plugins.plugin_utils._filter import filter_module, jinja_filter


@jinja_filter("managed_service_down", ManagedStateError)
def managed_service_down(state, name):
    """A managed_state result and a service name -> whether that service was not running at the check."""
    return service_down(state, name)


FilterModule = filter_module(managed_service_down=managed_service_down)
