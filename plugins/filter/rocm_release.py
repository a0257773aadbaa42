# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ROCm release (major.minor) of a ROCm version (documentation: rocm_release.yml)."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.plugin_utils._filter import filter_module, jinja_filter


@jinja_filter("rocm_release", TypeError)
def rocm_release(version):
    """rocm_version (6.4, 6.4.2) or rocm-core's recorded version (6.4.0-47) -> its release, 6.4: the
    part before the first '-', its first two '.'-separated fields ('' gives '')."""
    if not isinstance(version, str):
        raise TypeError("a version string is needed, not %s %r" % (type(version).__name__, version))
    return ".".join(version.split("-")[0].split(".")[:2])


FilterModule = filter_module(rocm_release=rocm_release)
