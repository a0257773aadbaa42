# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ansible-core releases whose internals the collection's controller-side speed-ups were checked
against: the preload callback's compile cache (AnsibleEnvironment's compile) and module payload store
(the run's ansiballz_cache), and the linear strategy's in-process tasks (TaskExecutor and the result
queue). On any other release each of them leaves Ansible's own path alone."""

from __future__ import annotations

SUPPORTED_ANSIBLE = ("2.19.",)


def unsupported(version):
    """None where version is one of the checked releases, else why not (for a -vvv message)."""
    if version.startswith(SUPPORTED_ANSIBLE):
        return None
    return "ansible-core %s, not one of %s" % (version, ", ".join(v + "x" for v in SUPPORTED_ANSIBLE))
