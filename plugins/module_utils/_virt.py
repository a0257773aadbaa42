# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Which of Ansible's ``virtualization_type`` facts name a container.

PRIVATE to the collection: not a public API, may change without notice.

This is the ONE list of them: base refuses to let chrony steer a container's clock (a container
shares its host's clock), and slurm_common leaves cgroup job accounting out of slurm.conf when
compute nodes are containers. The values are those ansible-core's Linux virtual facts report for
a container guest (ansible/module_utils/facts/virtual/linux.py): the ``container=`` variable of
PID 1 gives ``container``, ``podman``, ``docker``, ``lxc`` or ``systemd-nspawn``; cgroup names give
``docker``, ``lxc`` and ``containerd``; /proc/vz gives ``openvz``.
"""

from __future__ import annotations

CONTAINER_TYPES = ("container", "containerd", "docker", "lxc", "openvz", "podman", "systemd-nspawn")


def is_container(virtualization_type, virtualization_role=None):
    """True when the facts describe a container guest.

    ``virtualization_role`` 'host' means the machine runs containers (or is an OpenVZ host node)
    rather than being one; None (not known) counts as guest.
    """
    if not isinstance(virtualization_type, str) or virtualization_type not in CONTAINER_TYPES:
        return False
    return virtualization_role != "host"
