# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of service_stale (documentation: managed_service_stale.yml)."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._managed_state import ManagedStateError, service_stale
from ansible_collections.gpucluster.training.plugins.plugin_utils._filter import filter_module, jinja_filter


@jinja_filter("managed_service_stale", ManagedStateError)
def managed_service_stale(state, name):
    """A managed_state result and a service name -> whether it runs since before a file it reads changed."""
    return service_stale(state, name)


FilterModule = filter_module(managed_service_stale=managed_service_stale)
