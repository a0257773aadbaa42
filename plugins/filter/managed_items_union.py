# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of items_union (documentation: managed_items_union.yml)."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._managed_state import ManagedStateError, items_union
from ansible_collections.gpucluster.training.plugins.plugin_utils._filter import filter_module, jinja_filter


@jinja_filter("managed_items_union", ManagedStateError)
def managed_items_union(parts):
    """{part: items} -> the items of one managed_state call comparing every part."""
    return items_union(parts)


FilterModule = filter_module(managed_items_union=managed_items_union)
