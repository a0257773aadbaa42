# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of module_utils/_natural.py: the one natural sort key for device names."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpucluster.training.plugins.module_utils._natural import natural_key


def test_numbers_in_names_sort_as_numbers():
    names = ["mlx5_10", "mlx5_2", "ens3np0", "mlx5_1", "ens10f0np0", "ens3f1np1", "bnxt_re0"]
    assert sorted(names, key=natural_key) == ["bnxt_re0", "ens3f1np1", "ens3np0", "ens10f0np0", "mlx5_1", "mlx5_2", "mlx5_10"]
    assert sorted(["10", "9", 8], key=natural_key) == [8, "9", "10"]


@settings(max_examples=100)
@given(st.lists(st.text(max_size=8), max_size=6))
def test_any_names_sort_without_error(names):
    # text with non-ASCII digits ("²", "٣") and mixed runs never raises
    assert sorted(sorted(names, key=natural_key), key=natural_key) == sorted(names, key=natural_key)
