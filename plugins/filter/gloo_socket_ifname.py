# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of module_utils/_nccl_env.gloo_socket_ifname (documentation: gloo_socket_ifname.yml)."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._nccl_env import gloo_socket_ifname


class FilterModule(object):
    """gloo interface filter."""

    def filters(self):
        return {"gloo_socket_ifname": gloo_socket_ifname}
