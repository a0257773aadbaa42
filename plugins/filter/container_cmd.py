# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of module_utils/_container_cmd.py (documentation: container_cmd.yml)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.training.plugins.module_utils._coerce import kind
from ansible_collections.gpucluster.training.plugins.module_utils._container_cmd import ContainerCmdError, container_command


def container_cmd(spec, **overrides):
    """Derive the docker/podman command line of the training container."""
    if overrides:
        if not isinstance(spec, dict):
            raise AnsibleFilterError("container_cmd: input must be a dict, got %s" % kind(spec))
        spec = dict(spec, **overrides)
    try:
        return container_command(spec)
    except ContainerCmdError as exc:
        raise AnsibleFilterError("container_cmd: %s" % exc)


class FilterModule(object):
    """Training container command filter."""

    def filters(self):
        return {"container_cmd": container_cmd}
