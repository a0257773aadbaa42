# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of items_by_checksum (documentation: managed_checksums.yml)."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._managed_state import ManagedStateError, items_by_checksum
from ansible_collections.gpucluster.training.plugins.plugin_utils._filter import filter_module, jinja_filter


@jinja_filter("managed_checksums", ManagedStateError)
def managed_checksums(items):
    """A role's items for managed_state -> the same items, each file's content replaced by its SHA-1."""
    return items_by_checksum(items)


FilterModule = filter_module(managed_checksums=managed_checksums)
