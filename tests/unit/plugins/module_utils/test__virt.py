# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one list of container virtualization types (the filter face: tests/unit/plugins/filter/test_container_guest.py)."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.training.plugins.module_utils._virt import CONTAINER_TYPES, is_container

NOT_CONTAINER_GUESTS = [("kvm", "guest"), ("VMware", "guest"), ("NA", "NA"), ("", "guest"), (None, None), (["podman"], "guest"),
                        ("docker", "host"), ("openvz", "host")]


@pytest.mark.parametrize("virt_type", CONTAINER_TYPES)
def test_each_container_type_is_a_guest(virt_type):
    assert is_container(virt_type) is True
    assert is_container(virt_type, "guest") is True


@pytest.mark.parametrize("virt_type, role", NOT_CONTAINER_GUESTS)
def test_not_a_container_guest(virt_type, role):
    # a VM, bare metal (NA), a missing fact, and a machine that runs containers (role host)
    assert is_container(virt_type, role) is False
