# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The variables an inventory may give this collection's roles and site.yml, and what is wrong with
the ones it gives.

PRIVATE to the collection: the interface may change without notice. Pure functions, no I/O.

Ansible ignores a variable nobody reads: ``slurm_common_cluster_nmae`` in group_vars leaves the
cluster named by the default, ``site_gpu_drvier: rocm`` installs no driver, and nothing says so.
And a role checks the values of its options (its ``meta/argument_specs.yml``) only when it starts,
after the stages before it changed the hosts. ``variable_errors`` reads every variable of every
host whose name is one of the collection's (a role's name and ``_``, or ``site_``) once, in the
preflight play: a name no role and no play of the collection reads is named with the nearest one
it knows, and a value the role's argument spec refuses is named with the spec's reason, before any
host changes.

``specs`` is ``{role: {entry_point: {option: spec}}}``: the roles' ``meta/argument_specs.yml``
(``argument_specs_options`` reads one).
"""

from __future__ import annotations

import difflib

import yaml

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

# site.yml's own variables (playbooks/site.yml; the README's "Stages" and "Rolling runs" say what each does).
SITE_VARIABLES = frozenset({
    "site_stages", "site_gpu_driver", "site_check_play", "site_expected_compute_nodes", "site_serial",
    "site_max_fail_percentage", "site_validate", "site_training_container"})

# Facts a role sets for the stages after it (set_fact, or the values a test inventory supplies in
# their place): variables of the collection that are no role's option. Every other variable named for a
# role that a role sets starts with "__".
ROLE_OUTPUTS = frozenset({
    "cuda_reboot_required", "megatron_container", "megatron_job_container",
    "megatron_job_spec", "rdma_fabric", "rdma_fabric_excluded", "rdma_gpu_vendor", "rdma_nccl_env",
    "rdma_nccl_hcas", "rdma_nccl_reasons", "rdma_peer_memory_found", "rocm_reboot_required",
    "training_jobs_megatron_plan", "training_jobs_smoke_result", "validate_report"})

# The day-2 playbooks' own variables start with these (their options: playbooks/meta/argument_specs.yml, one entry
# point per playbook). A playbook's prefix is the collection's only in that playbook's run: an inventory may keep
# maintenance_serial in its group_vars, which site.yml does not read.
PLAYBOOK_PREFIXES = {
    "munge_key_rotate": "munge_key_rotate_", "plan": "plan_", "rolling_maintenance": "maintenance_",
    "smoke_job": "smoke_job_", "torchrun_noslurm": "torchrun_noslurm_"}

# Facts a day-2 playbook sets for its own later plays.
PLAYBOOK_OUTPUTS = frozenset({"torchrun_noslurm_result"})


class RoleOptionsError(ValueError):
    """An argument spec file that is not one."""


def argument_specs_options(role, text):
    """``{entry_point: {option: spec}}`` of a role's ``meta/argument_specs.yml`` text."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise RoleOptionsError("%s: meta/argument_specs.yml is not YAML: %s" % (role, exc)) from exc
    points = data.get("argument_specs") if isinstance(data, dict) else None
    if not isinstance(points, dict):
        raise RoleOptionsError("%s: meta/argument_specs.yml has no argument_specs mapping" % role)
    out = {}
    for point, spec in points.items():
        options = (spec or {}).get("options") or {} if isinstance(spec, dict) else None
        if not isinstance(options, dict):
            raise RoleOptionsError("%s: entry point %s has no options mapping" % (role, point))
        out[str(point)] = options
    return out


def _prefixes(specs, playbook=None):
    return tuple(sorted(["%s_" % role for role in specs] + ["site_"] + ([PLAYBOOK_PREFIXES[playbook]] if playbook else [])))


def collection_variables(names, specs, playbook=None):
    """The names among ``names`` that are the collection's (a role's name and ``_``, or ``site_``; in a run of the
    day-2 playbook ``playbook``, its prefix too)."""
    if playbook is not None and playbook not in PLAYBOOK_PREFIXES:
        raise RoleOptionsError("%s is not a day-2 playbook of the collection (one of %s)" % (
            playbook, ", ".join(sorted(PLAYBOOK_PREFIXES))))
    prefixes = _prefixes(specs, playbook)
    return sorted(name for name in names if isinstance(name, str) and name.startswith(prefixes))


def _known(specs, playbook_options):
    known = set(SITE_VARIABLES) | set(ROLE_OUTPUTS) | set(PLAYBOOK_OUTPUTS) | set(playbook_options)
    for points in specs.values():
        for options in points.values():
            known.update(options)
    return known


def _value_spec(spec):
    """An option's spec for checking a value given for it: whether it must be given is not the question."""
    out = {key: value for key, value in spec.items() if key not in ("required", "description", "default", "version_added")}
    if isinstance(out.get("options"), dict):
        out["options"] = {name: _value_spec(sub) for name, sub in out["options"].items() if isinstance(sub, dict)}
    return out


def variable_errors(values_by_host, specs, playbook=None, playbook_options=None):
    """What is wrong with the collection's variables of each host: ``values_by_host`` is ``{host:
    {name: value}}`` (the collection's names, see ``collection_variables``), the names whose values could
    not be templated yet listed under the key ``__untemplated__`` (their names are checked, not their
    values). In a run of the day-2 playbook ``playbook``, ``playbook_options`` are its options (its entry point
    in playbooks/meta/argument_specs.yml).

    Returns a list of messages, one per misspelt name (with the hosts that have it) and one per refused
    value (host, name, the argument spec's reason)."""
    playbook_options = playbook_options or {}
    known = _known(specs, playbook_options)
    options = {name: ("playbook %s" % playbook, spec) for name, spec in playbook_options.items()}
    for role in sorted(specs):
        for point in sorted(specs[role], key=lambda p: p != "main"):
            for name, spec in specs[role][point].items():
                options.setdefault(name, ("role %s" % role, spec))
    unknown = {}
    refused = {}
    texts = {}
    for host in sorted(values_by_host):
        values = dict(values_by_host[host] or {})
        untemplated = values.pop("__untemplated__", None) or []
        for name in sorted(set(values) | set(untemplated)):
            if name not in known:
                unknown.setdefault(name, []).append(host)
        for name in sorted(values):
            if name not in options or not isinstance(options[name][1], dict):
                continue
            owner, spec = options[name]
            if spec.get("type") == "bool" and isinstance(values[name], str) and owner.startswith("role "):
                # The spec takes "false", but Ansible does not convert the variable: in the roles' expressions any
                # non-empty text is true (-e name=false on the command line gives text).
                texts.setdefault((name, owner, values[name]), []).append(host)
                continue
            result = ArgumentSpecValidator({name: _value_spec(spec)}).validate({name: values[name]})
            for message in result.error_messages:
                if spec.get("no_log"):
                    # the validator's reasons quote the value
                    message = "not a valid %s (the value is a secret: not shown)" % spec.get("type", "value")
                refused.setdefault((name, owner, message), []).append(host)
    out = []
    for name in sorted(unknown):
        near = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75)
        out.append("%s (set on %s) is not a variable of gpucluster.training: Ansible would ignore it.%s" % (
            name, ", ".join(unknown[name]), " Did you mean %s?" % near[0] if near else ""))
    for (name, owner, message), hosts in sorted(refused.items()):
        out.append("%s (set on %s) is refused by %s's argument spec: %s." % (name, ", ".join(hosts), owner, message))
    for (name, owner, text), hosts in sorted(texts.items()):
        out.append("%s (set on %s) is the text %r, not a boolean: Ansible does not convert it, and in %s's expressions "
                   "any non-empty text is true. Give it in YAML (%s: false) or as JSON (-e '{\"%s\": false}')." % (
                       name, ", ".join(hosts), text, owner, name, name))
    return out
