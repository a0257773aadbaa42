# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Has each compute node registered with slurmctld: the pure part of slurm_compute's health check.

Text in (``sinfo --noheader --nodes <nodes> --format %n|%t|%E``, asked once on the controller for
every node of the play), one verdict per node out.
"""

from __future__ import annotations

# sinfo %t states of a node whose slurmd the controller hears from: a "*" suffix (not responding),
# "~" (powered off) or "#" (powering up) makes the state another word, so those never match.
# Drained, draining and maintenance states count: the node is registered, someone took it out of
# service. Out of service: reported, left as it is.
REGISTERED_STATES = ("idle", "mix", "alloc", "comp", "resv", "plnd", "drain", "drng", "maint")
OUT_OF_SERVICE_STATES = ("drain", "drng", "down", "maint")
_NO_REASON = ("", "none")


class SlurmNodesError(ValueError):
    """sinfo's output is not what was asked for."""


def node_registration(text, names):
    """``{name: {"state", "reason", "registered", "out_of_service"}}`` for each of ``names``.

    ``registered``: slurmctld hears from the node's slurmd (a state of REGISTERED_STATES), or the
    node is down with a reason someone gave (an operator's, or the validate role's), which is
    not Slurm's own "Not responding". A node sinfo did not list is ``unknown``, not registered.
    A node in several partitions is listed once per partition: the lines agree.
    """
    if isinstance(names, str) or not all(isinstance(n, str) and n for n in names):
        raise SlurmNodesError("names must be a list of node names, got %r" % (names,))
    seen = {}
    for raw in (text or "").splitlines():
        if not raw.strip():
            continue
        parts = raw.strip().split("|", 2)
        if len(parts) != 3 or not parts[0] or not parts[1]:
            raise SlurmNodesError("sinfo: line %r is not name|state|reason (--format %%n|%%t|%%E)" % raw)
        seen[parts[0]] = (parts[1], parts[2].strip())
    out = {}
    for name in names:
        state, reason = seen.get(name, ("unknown", ""))
        operator_down = state == "down" and reason.lower() not in _NO_REASON and not reason.startswith("Not responding")
        out[name] = {"state": state, "reason": reason, "registered": state in REGISTERED_STATES or operator_down,
                     "out_of_service": state in OUT_OF_SERVICE_STATES}
    return out
