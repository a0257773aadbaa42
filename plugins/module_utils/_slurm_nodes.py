# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Has each compute node registered with slurmctld: the pure part of slurm_compute's health check.

Text in (``sinfo --noheader --nodes <nodes> --format %n|%t|%E``, asked once on the controller for
every node of the play), one verdict per node out. And the record of the compute nodes' facts the
controller keeps (node_record): the files' text in, the record out.
"""

from __future__ import annotations

import json

# sinfo %t states of a node whose slurmd the controller hears from. sinfo prints Slurm's compact
# state in lower case, with at most one flag character after the word (Slurm's
# node_state_string_compact in src/common/slurm_protocol_defs.c, 22.05 to 25.x; sinfo(1), NODE STATE
# CODES): "*" not responding, "~" powered off, "#" powering up, "%" powering down, "!" pending power
# down, "$" in a maintenance reservation, "@" reboot pending, "^" reboot issued, "-" planned by the
# backfill scheduler, "+" completing (ALLOC+). The state is judged by its word without the flag:
# "mix-", "alloc$", "drng@" are registered nodes. Not heard from: "*", "~", "#", and "%" and "^"
# (slurmctld powers the node down or has it rebooting: its slurmd is going away, and the controller
# waits for it to register again). Slurm prints the first flag that applies, in the order
# $ ^ @ # % ~ ! * then - or +: a node flagged "$", "@" or "!" may also not respond, which sinfo %t
# cannot tell (it counts as registered). "boot" is an idle node with a reboot pending (Slurm prints
# BOOT where IDLE@ would be), "maint" an idle node in a maintenance reservation (MAINT for IDLE$).
# Drained, draining and maintenance states count: the node is registered, someone took it out of
# service. Out of service (of a node heard from, as before): reported, left as it is; a "$" flag is
# the same maintenance as "maint".
REGISTERED_STATES = ("idle", "mix", "alloc", "comp", "resv", "plnd", "drain", "drng", "maint", "boot")
OUT_OF_SERVICE_STATES = ("drain", "drng", "down", "maint")
STATE_FLAGS = "*~#%!$@^-+"
NOT_HEARD_FLAGS = "*~#%^"
_NO_REASON = ("", "none")


class SlurmNodesError(ValueError):
    """sinfo's output is not what was asked for."""


def node_registration(text, names):
    """``{name: {"state", "reason", "registered", "out_of_service"}}`` for each of ``names``.

    ``registered``: slurmctld hears from the node's slurmd (a state of REGISTERED_STATES once its
    flag is stripped, the flag not one of NOT_HEARD_FLAGS), or the node is down with a reason
    someone gave (an operator's, or the validate role's), which is not Slurm's own "Not
    responding". ``out_of_service``: heard from, and a state of OUT_OF_SERVICE_STATES or the "$"
    flag. ``state`` is sinfo's, flag included. A node sinfo did not list is ``unknown``, not
    registered.
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
        word = state.rstrip(STATE_FLAGS)
        flags = state[len(word):]
        heard = not any(flag in NOT_HEARD_FLAGS for flag in flags)
        operator_down = word == "down" and heard and reason.lower() not in _NO_REASON \
            and not reason.startswith("Not responding")
        out[name] = {"state": state, "reason": reason,
                     "registered": (word in REGISTERED_STATES and heard) or operator_down,
                     "out_of_service": heard and (word in OUT_OF_SERVICE_STATES or "$" in flags)}
    return out


class SlurmRecordError(ValueError):
    """A file where the controller keeps the compute nodes' facts is not such a record."""


def node_record(files):
    """The compute nodes' facts the controller recorded at its last run, from the files read there:
    a list of (path, text) in the order they are looked for (the local fact, then the place releases
    before kept it), the files that exist only. The first one is the record; none gives an empty
    record. A file that is not a record fails, naming it: the record is what keeps an unreachable
    node in slurm.conf, so a damaged one is not silently taken for none."""
    for path, text in files:
        try:
            record = json.loads(text)
        except ValueError as exc:
            raise SlurmRecordError("%s is not JSON (%s): %s" % (path, exc, _RECORD_FIX)) from None
        if not isinstance(record, dict) or not isinstance(record.get("facts"), dict) \
                or not isinstance(record.get("gpus", {}), dict):
            raise SlurmRecordError("%s is not a record of the compute nodes' facts (a JSON object with the objects "
                                   "'facts' and 'gpus'): %s" % (path, _RECORD_FIX))
        return dict(record, gpus=record.get("gpus", {}))
    return {"facts": {}, "gpus": {}}


_RECORD_FIX = ("restore it, or remove it: this run then writes it again, and a compute node unreachable in this "
               "run is left out of slurm.conf until a run reaches it")
