# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of the Slurm settings merge (documentation: slurm_conf_lines.yml)."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._slurm_conf import (
    SlurmConfError,
    config_lines,
)
from ansible_collections.gpucluster.training.plugins.plugin_utils._filter import filter_module, jinja_filter


@jinja_filter("slurm_conf_lines", SlurmConfError)
def slurm_conf_lines(defaults, overrides=None, version=None, conf="slurm.conf"):
    """Defaults updated by overrides (omit removes) -> Key=Value lines, checked against the version."""
    return config_lines(defaults, overrides, version=version, conf=conf)


FilterModule = filter_module(slurm_conf_lines=slurm_conf_lines)
