# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The container_guest filter is the Jinja face of module_utils _virt.is_container."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.training.plugins.filter.container_guest import FilterModule

CONTAINER_GUEST = FilterModule().filters()["container_guest"]


def test_registered_under_its_name():
    assert set(FilterModule().filters()) == {"container_guest"}


@pytest.mark.parametrize("virt_type, role, expected", [("podman", "guest", True), ("systemd-nspawn", None, True),
                                                       ("openvz", "guest", True), ("docker", "host", False),
                                                       ("kvm", "guest", False), ("NA", "NA", False), (None, None, False)])
def test_filter_answers_as_the_pure_function(virt_type, role, expected):
    assert CONTAINER_GUEST(virt_type, role) is expected
