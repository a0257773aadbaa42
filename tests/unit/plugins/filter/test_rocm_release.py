# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The rocm_release filter: rocm_version and rocm-core's recorded version reduced to one release."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.training.plugins.filter.rocm_release import FilterModule

RELEASE = FilterModule().filters()["rocm_release"]


@pytest.mark.parametrize("version, release", [
    # rocm_version as the inventory writes it
    ("6.4", "6.4"), ("6.4.2", "6.4"), ("6.10.1", "6.10"),
    # rocm-core's <rocm_path>/.info/version
    ("6.4.0-47", "6.4"), ("6.3.1-48", "6.3"), ("6.4.1-12", "6.4"),
    # nothing recorded, or fewer fields: what there is
    ("", ""), ("6", "6"), ("6-1", "6"),
])
def test_release_is_major_minor(version, release):
    assert RELEASE(version) == release


def test_a_version_that_is_not_a_string_is_refused():
    with pytest.raises(AnsibleFilterError, match="rocm_release: a version string is needed, not float 6.4"):
        RELEASE(6.4)
