# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of the container-guest test on Ansible's facts (documentation: container_guest.yml)."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._virt import is_container
from ansible_collections.gpucluster.training.plugins.plugin_utils._filter import filter_module, jinja_filter


@jinja_filter("container_guest", TypeError)
def container_guest(virtualization_type, virtualization_role=None):
    """virtualization_type (and role) facts -> True when the host is a container."""
    return is_container(virtualization_type, virtualization_role)


FilterModule = filter_module(container_guest=container_guest)
