# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The container_cmd filter is a thin face over module_utils._container_cmd."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.training.plugins.filter.container_cmd import FilterModule
from ansible_collections.gpucluster.training.plugins.module_utils._container_cmd import container_command

FILTER = FilterModule().filters()["container_cmd"]
SPEC = {"engine": "podman", "vendor": "amd", "name": "megatron-training", "image": "localhost/megatron:1"}


def test_registered_under_its_name():
    assert set(FilterModule().filters()) == {"container_cmd"}


def test_same_result_as_the_derivation_and_keywords_override():
    assert FILTER(SPEC) == container_command(SPEC)
    job = FILTER(SPEC, mode="job", command=["true"])
    assert job == container_command(dict(SPEC, mode="job", command=["true"]))
    assert job["argv"][2] == "--rm"


@pytest.mark.parametrize("value,kwargs", [(dict(SPEC, engine="lxc"), {}), ("podman run", {"mode": "job"}), (None, {})])
def test_bad_input_is_a_filter_error(value, kwargs):
    with pytest.raises(AnsibleFilterError, match="container_cmd"):
        FILTER(value, **kwargs)
