# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of the Slurm version feature table (documentation: slurm_version_features.yml)."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._slurm_conf import (
    SlurmConfError,
    version_features,
)
from ansible_collections.gpucluster.training.plugins.plugin_utils._filter import filter_module, jinja_filter


@jinja_filter("slurm_version_features", SlurmConfError)
def slurm_version_features(version):
    """Slurm or package version string -> dict of what that version accepts and needs."""
    return version_features(version)


FilterModule = filter_module(slurm_version_features=slurm_version_features)
