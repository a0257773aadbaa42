#!/usr/bin/python
# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: managed_state
short_description: Compare a host with everything a role manages, in one call, without changing it
version_added: 0.1.0
description:
  - The check-first path of the roles (issue 16) - a role declares once, as data, the files, lines, blocks,
    kernel settings, users, groups, packages and services it manages; its change tasks consume that data, and
    this module compares the host with it in one round trip. The role runs its change tasks only when
    RV(in_sync) is false.
  - Read-only - it never changes the host, reports C(changed=false) and runs the same in check mode.
  - Each rule follows what the role's change task would do, so that RV(in_sync) means that task would change
    nothing - M(ansible.builtin.copy)/M(ansible.builtin.template)/M(ansible.builtin.file) for O(files),
    M(ansible.builtin.lineinfile) for O(lines), M(ansible.builtin.blockinfile) for O(blocks),
    M(ansible.posix.sysctl) for O(sysctls), M(ansible.builtin.user)/M(ansible.builtin.group) on existing
    accounts, M(ansible.builtin.package) with C(state=present) for O(packages) and
    M(ansible.builtin.service) for O(services).
  - All packages are read with one C(dpkg-query -W) (Debian family) or one C(rpm -q) call, all services with one
    C(systemctl show) call, both with C(LANG=C).
  - What nothing on disk shows is compared too - databases and their users (M(community.mysql.mysql_db),
    M(community.mysql.mysql_user)) and read-only commands that prove a daemon answers (O(commands)) - so that a
    role whose health checks need a round trip each makes one.
  - Besides the drift as text (RV(drift)), each item that drifted is returned as a record (RV(drift_items)), so
    that a caller selects by kind, name or whether the item is missing instead of matching the text.
  - File contents are compared by SHA-1 and never returned; pass O(files[].checksum) instead of
    O(files[].content) for a secret (a key, a file with a password), so that the secret is not in the module's
    arguments either.
options:
  files:
    description: Files and directories, as the role writes them.
    type: list
    elements: dict
    default: []
    suboptions:
      path:
        description: Absolute path.
        type: path
        required: true
      state:
        description:
          - V(file) (a regular file), V(directory), V(present) (exists, of any type, such as a device file) or V(absent).
        type: str
        choices: [file, directory, present, absent]
        default: file
      content:
        description: Expected content (rendered on the controller, as the role's template or copy task writes it).
        type: str
      checksum:
        description: SHA-1 (hex) of the expected content, for secrets. Takes precedence over O(files[].content).
        type: str
      owner:
        description:
          - Owner name or numeric id (V("0") or V(0)) - an id is compared with the file's uid, a name with the uid it
            has on the host (a name the host does not have is drift). Read as M(gpucluster.training.managed_files)
            reads it.
        type: str
      group:
        description:
          - Group name or numeric id - an id is compared with the file's gid, a name with the gid it has on the host
            (a name the host does not have is drift).
        type: str
      mode:
        description:
          - The mode, read as M(gpucluster.training.managed_files) and ansible's file modules read it - octal text
            (V("0644"), V("644"), V("0o644")), an integer taken as the mode itself (an unquoted YAML V(0644) arrives as
            V(420), which is V("0644")), or a symbolic mode (V("u=rw,g=r,o=r"), V("u+x")) applied to the path's
            present mode.
          - A value that is none of these, or more than the permission bits (V("07777")), fails the call before
            anything is compared.
        type: raw
  lines:
    description: Lines a role manages with M(ansible.builtin.lineinfile) (state present).
    type: list
    elements: dict
    default: []
    suboptions:
      path:
        description: The file.
        type: path
        required: true
      regexp:
        description: The regular expression of the lineinfile task.
        type: str
      line:
        description: The line.
        type: str
        required: true
  blocks:
    description: Blocks a role manages with M(ansible.builtin.blockinfile).
    type: list
    elements: dict
    default: []
    suboptions:
      path:
        description: The file.
        type: path
        required: true
      marker:
        description: The marker template, C({mark}) replaced by V(BEGIN) and V(END).
        type: str
        default: "# {mark} ANSIBLE MANAGED BLOCK"
      block:
        description: The block's text.
        type: str
        required: true
  sysctls:
    description: Kernel settings a role manages with M(ansible.posix.sysctl) (state present).
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: The key, such as V(kernel.numa_balancing).
        type: str
        required: true
      value:
        description: The value.
        type: raw
        required: true
      path:
        description: The sysctl.d file the value is written to.
        type: path
        required: true
      apply:
        description: The live value (C(/proc/sys)) must be the value too (the task's C(sysctl_set)).
        type: bool
        default: false
  users:
    description: Local users (existing ones compared as M(ansible.builtin.user) would).
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: User name.
        type: str
        required: true
      uid:
        description: User id.
        type: int
      group:
        description: Primary group name.
        type: str
      home:
        description: Home directory.
        type: str
      shell:
        description: Login shell.
        type: str
  groups:
    description:
      - Groups (read through NSS, as C(getent group) reads them). The gid of every group asked that the host has is
        returned in RV(found.groups).
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: Group name.
        type: str
        required: true
      gid:
        description: Group id (V(present) only).
        type: int
      state:
        description:
          - V(present) - the group must exist (and have O(groups[].gid) when given), as M(ansible.builtin.group) makes it.
          - V(query) - only read its gid (in RV(found.groups)); a group the host does not have is no drift.
        type: str
        choices: [present, query]
        default: present
  packages:
    description: Packages that must be installed.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: Package name (a real package, not a virtual one - a virtual name always reports drift).
        type: str
        required: true
      version:
        description: Installed version (apt - the whole Debian version; dnf - the upstream version or version-release).
        type: str
      hold:
        description: The package is on hold (Debian family, C(dpkg --set-selections)).
        type: bool
        default: false
  services:
    description: Services (systemd units).
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: Unit name (without C(.service) is fine).
        type: str
        required: true
      started:
        description: V(true) - active; V(false) - not active; omitted - not compared.
        type: bool
      enabled:
        description: V(true) - enabled at boot; V(false) - not enabled; omitted - not compared.
        type: bool
      restart_after:
        description:
          - Files the service reads when it starts. A running service that became active before one of them was
            last written (more than 2 s after, by the files' modification times and the start time systemd
            keeps) runs with what the file held before - a restart that did not happen, after a run stopped between
            writing the file and the restart, or a file written by hand - and is drift ending in C(expected
            restarted). A missing file is not compared.
        type: list
        elements: path
        default: []
  mysql_databases:
    description:
      - MariaDB or MySQL databases that must exist (M(community.mysql.mysql_db) with C(state=present)), read with one
        C(SHOW DATABASES) per socket by the C(mariadb) or C(mysql) client, as root over the Unix socket.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: Database name.
        type: str
        required: true
      login_unix_socket:
        description: The server's Unix socket.
        type: path
        default: /run/mysqld/mysqld.sock
  mysql_users:
    description:
      - Database users as M(community.mysql.mysql_user) with C(state=present) leaves them - the user exists at its
        host, its C(mysql_native_password) hash is the one of O(mysql_users[].password), and its privileges are exactly
        O(mysql_users[].priv), read with C(SHOW GRANTS FOR) (one call per user). A user authenticated by another plugin
        is drift.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: User name.
        type: str
        required: true
      host:
        description: The user's host part.
        type: str
        default: localhost
      password:
        description: The password (never returned, never named in RV(drift)); omitted - not compared.
        type: str
      priv:
        description: Privileges in M(community.mysql.mysql_user)'s form, C(db.*:ALL/other.*:SELECT,INSERT).
        type: str
        default: ""
      login_unix_socket:
        description: The server's Unix socket.
        type: path
        default: /run/mysqld/mysqld.sock
  commands:
    description:
      - Read-only commands that prove what no file or service state shows (a daemon answering, a cluster registered in
        its database) - the exit status, and a line of the output matching O(commands[].stdout_regex). Run with
        C(LANG=C) under C(timeout). The caller passes only commands that change nothing.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: What the command proves, as RV(drift) names it.
        type: str
        required: true
      argv:
        description: The command and its arguments (no shell).
        type: list
        elements: str
        required: true
      rc:
        description: Expected exit status.
        type: int
        default: 0
      stdout_regex:
        description: A Python regular expression a line of the output must match (multi-line mode); omitted - not compared.
        type: str
      timeout:
        description: Seconds before the command counts as not answering (drift).
        type: int
        default: 10
attributes:
  check_mode:
    description: Read-only; runs the same in check mode.
    support: full
  diff_mode:
    description: Returns no diff (the change tasks that follow do).
    support: none
  platform:
    description: Linux hosts with systemd, dpkg or rpm.
    support: full
    platforms: posix
notes:
  - O(mysql_databases) and O(mysql_users) need the C(mariadb) or C(mysql) client on the host and a server that lets root
    in over its Unix socket (Debian's and Ubuntu's packages do).
author:
  - gpucluster.training maintainers (@gpucluster)
"""

EXAMPLES = r"""
- name: Everything this role manages, in one call
  gpucluster.training.managed_state:
    files:
      - path: /etc/chrony/chrony.conf
        content: "{{ lookup('ansible.builtin.template', 'chrony.conf.j2') }}"
        owner: root
        group: root
        mode: "0644"
      - path: /etc/munge/munge.key
        checksum: "{{ munge_key_sha1 }}"
        owner: munge
        group: munge
        mode: "0400"
    packages: [{name: chrony}, {name: numactl}]
    services: [{name: chrony, started: true, enabled: true}]
  register: managed
  check_mode: false

- name: An accounting database, its user, and slurmdbd answering with the cluster registered
  gpucluster.training.managed_state:
    mysql_databases: [{name: slurm_acct_db}]
    mysql_users: [{name: slurm, password: "{{ db_password }}", priv: "slurm_acct_db.*:ALL"}]
    commands:
      - name: slurmdbd lists the cluster
        argv: [sacctmgr, --noheader, --parsable2, list, cluster, format=cluster]
        stdout_regex: "^mycluster$"
  register: accounting
  check_mode: false

- name: The change tasks, only when something drifted
  ansible.builtin.import_tasks: chrony.yml
  when: not managed.in_sync

- name: Which device files exist, and the gids of the device owner groups (read-only, no drift for a missing group)
  gpucluster.training.managed_state:
    files: [{path: /dev/kfd, state: present}, {path: /dev/infiniband, state: present}]
    groups: [{name: video, state: query}, {name: render, state: query}]
  register: devices
  check_mode: false

- name: Use them
  ansible.builtin.debug:
    msg: >-
      missing: {{ devices.drift_items | selectattr('kind', 'eq', 'files') | selectattr('missing') | map(attribute='name') | list }},
      gids: {{ devices.found.groups.values() | list }}
"""

RETURN = r"""
in_sync:
  description: Nothing drifted - the role's change tasks would change nothing.
  returned: always
  type: bool
  sample: false
drift:
  description: What differs, one line each (never a file's content).
  returned: always
  type: list
  elements: str
  sample:
    - "/etc/slurm/slurm.conf: content differs"
    - "service slurmd: inactive, expected started"
    - "package numactl: not installed"
    - "mysql user slurm@localhost: password differs"
    - "command slurmctld answers: exit status 1, expected 0"
drift_items:
  description:
    - The same drift by item, in the same order - one record per item that drifted. Select on its fields, not on the
      text of RV(drift).
  returned: always
  type: list
  elements: dict
  contains:
    kind:
      description: The option the item came from.
      type: str
      choices: [files, lines, blocks, sysctls, groups, users, packages, services, mysql_databases, mysql_users, commands]
    name:
      description: The item's O(files[].path) (files, lines, blocks) or name (the other kinds, a user without its host), as given.
      type: str
    missing:
      description:
        - The item itself is not on the host - a file (not for V(absent)), the file a line, block or kernel setting is
          written to, a user or group, a package that is not installed, a unit systemd does not know. V(false) - it is
          there but differs.
      type: bool
    drift:
      description: Its lines of RV(drift).
      type: list
      elements: str
  sample:
    - {kind: files, name: /dev/kfd, missing: true, drift: ["/dev/kfd: missing"]}
    - {kind: services, name: docker, missing: false, drift: ["service docker: inactive, expected started"]}
found:
  description: What was read for the caller (not compared).
  returned: always
  type: dict
  contains:
    groups:
      description: "O(groups) the host has, name: gid (any state; a group the host does not have is not in it)."
      type: dict
      sample: {video: 44, render: 992}
    commands:
      description:
        - "O(commands) by name: C(rc) (null - the command was not found) and C(stdout), for a caller that reads more
          from the output than O(commands[].stdout_regex) says (the versions a command prints, say)."
      type: dict
      sample: {"slurmctld answers": {rc: 0, stdout: "Slurmctld(primary) at ctl1 is UP\n"}}
checked:
  description: How many items of each kind were compared.
  returned: always
  type: dict
  sample: {files: 4, lines: 0, blocks: 1, sysctls: 1, users: 0, groups: 0, packages: 4, services: 1, mysql_databases: 0,
           mysql_users: 0, commands: 0}
msg:
  description: One line saying whether the host is in sync.
  returned: always
  type: str
  sample: "3 difference(s) in 12 item(s) checked"
"""

import grp
import os
import pwd
import stat
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpucluster.training.plugins.module_utils._file_attributes import FileAttributeError, file_attributes
from ansible_collections.gpucluster.training.plugins.module_utils._file_write import process_umask
from ansible_collections.gpucluster.training.plugins.module_utils._managed_state import (
    DPKG_FORMAT, ITEM_KEY, RPM_FORMAT, SYSTEMCTL_PROPERTIES, ManagedStateError, block_drift, command_drift, content_sha1, drift_record,
    file_drift, file_item_options, found_groups, group_drift, line_drift, mysql_database_drift, mysql_user_drift, package_drift,
    parse_dpkg_query, parse_rpm_query, parse_systemctl_show, service_drift, state_msg, sysctl_drift, sysctl_proc_path, user_drift)
from ansible_collections.gpucluster.training.plugins.module_utils._sysfs_read import LANG_C, read_text


def name_of(lookup, ident):
    try:
        return lookup(ident)[0]
    except KeyError:
        return str(ident)


def id_of(key, name):
    """The uid of user name (key 'owner') or the gid of group name (key 'group'), or None when
    the host has none (NSS, as ansible's file modules look names up)."""
    try:
        return pwd.getpwnam(name).pw_uid if key == "owner" else grp.getgrnam(name).gr_gid
    except KeyError:
        return None


def stat_file(module, item):
    """{type, owner, group, uid, gid, mode, sha1} of a path (following links, as copy and file do), or None."""
    try:
        info = os.stat(item["path"])
    except OSError:
        return None
    kind = "directory" if stat.S_ISDIR(info.st_mode) else "file" if stat.S_ISREG(info.st_mode) else "other"
    seen = {"type": kind, "owner": name_of(pwd.getpwuid, info.st_uid), "group": name_of(grp.getgrgid, info.st_gid),
            "uid": info.st_uid, "gid": info.st_gid, "mode": stat.S_IMODE(info.st_mode), "sha1": None}
    if kind == "file" and item.get("checksum") is not None:
        seen["sha1"] = module.digest_from_file(item["path"], "sha1")
    return seen


def record(kind, item, drift, missing):
    return [r for r in [drift_record(kind, item, drift, missing)] if r is not None]


def check_files(module, items):
    records = []
    umask = process_umask()
    for item in items:
        item = dict(item)
        if item.get("checksum") is None and item.get("content") is not None:
            item["checksum"] = content_sha1(item["content"])
        seen = stat_file(module, item)
        records.extend(record("files", item, file_drift(item, seen, id_of, umask), seen is None and item.get("state") != "absent"))
    return records


def check_users(items):
    records = []
    for item in items:
        try:
            entry = pwd.getpwnam(item["name"])
            seen = {"uid": entry.pw_uid, "group": name_of(grp.getgrgid, entry.pw_gid), "home": entry.pw_dir, "shell": entry.pw_shell}
        except KeyError:
            seen = None
        records.extend(record("users", item, user_drift(item, seen), seen is None))
    return records


def read_gids(items):
    """{name: gid or None} of the groups asked (NSS, as getent group reads them)."""
    gids = {}
    for item in items:
        try:
            gids[item["name"]] = grp.getgrnam(item["name"]).gr_gid
        except KeyError:
            gids[item["name"]] = None
    return gids


def check_groups(items, gids):
    records = []
    for item in items:
        gid = gids[item["name"]]
        seen = None if gid is None else {"gid": gid}
        records.extend(record("groups", item, group_drift(item, seen), seen is None))
    return records


def query_packages(module, names):
    """One query for every package: dpkg-query where dpkg is, else rpm."""
    dpkg = module.get_bin_path("dpkg-query")
    if dpkg:
        # rc 1 when a name is unknown to dpkg (said on stderr): those are simply not in the output
        rc, out, err = module.run_command([dpkg, "-W", "-f=" + DPKG_FORMAT.replace("\\t", "\t").replace("\\n", "\n"), "--"] + names,
                                          environ_update=LANG_C)
        if rc not in (0, 1):
            raise ManagedStateError("dpkg-query failed (rc %d): %s" % (rc, err.strip()))
        return parse_dpkg_query(out)
    rpm = module.get_bin_path("rpm")
    if not rpm:
        raise ManagedStateError("neither dpkg-query nor rpm found: cannot read the installed packages")
    rc, out, err = module.run_command([rpm, "-q", "--qf", RPM_FORMAT.replace("\\t", "\t").replace("\\n", "\n")] + names,
                                      environ_update=LANG_C)
    if err.strip() and rc == 0:
        raise ManagedStateError("rpm -q: %s" % err.strip())
    return parse_rpm_query(out)


def check_packages(module, items):
    if not items:
        return []
    names = sorted(set(item["name"] for item in items))
    seen = query_packages(module, names)
    records = []
    for item in items:
        entry = seen.get(item["name"])
        records.extend(record("packages", item, package_drift(item, entry), entry is None or entry["status"] != "i"))
    return records


def check_services(module, items):
    if not items:
        return []
    systemctl = module.get_bin_path("systemctl")
    if not systemctl:
        raise ManagedStateError("systemctl not found: services can only be compared on systemd hosts")
    units = [item["name"] for item in items]
    rc, out, err = module.run_command([systemctl, "show", "-p", SYSTEMCTL_PROPERTIES, "--"] + units, environ_update=LANG_C)
    if rc != 0:
        raise ManagedStateError("systemctl show failed (rc %d): %s" % (rc, err.strip()))
    clocks = (time.time(), time.monotonic())
    shown = parse_systemctl_show(out, units)
    records = []
    for item in items:
        block = shown[item["name"]]
        mtimes = {path: mtime_of(path) for path in item.get("restart_after") or []}
        records.extend(record("services", item, service_drift(item, block, mtimes, clocks), block.get("LoadState") == "not-found"))
    return records


def mtime_of(path):
    """A file's modification time, None when it does not exist."""
    try:
        return os.stat(path).st_mtime
    except FileNotFoundError:
        return None


NO_CLIENT = "no mariadb or mysql client"


def mysql_client(module):
    return module.get_bin_path("mariadb") or module.get_bin_path("mysql")


def mysql_query(module, client, socket, sql):
    """(rc, out, err) of one statement, as root over the Unix socket, no headers, tab-separated."""
    return module.run_command([client, "--protocol=socket", "--socket=" + socket, "-N", "-B", "-e", sql], environ_update=LANG_C)


def sql_string(text):
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def check_mysql_databases(module, items):
    if not items:
        return []
    client = mysql_client(module)
    listed = {}
    records = []
    for item in items:
        if client is None:
            records.extend(record("mysql_databases", item, mysql_database_drift(item, None, error=NO_CLIENT), True))
            continue
        socket = item["login_unix_socket"]
        if socket not in listed:
            rc, out, dummy = mysql_query(module, client, socket, "SHOW DATABASES")
            listed[socket] = set(out.split()) if rc == 0 else None
        drift = mysql_database_drift(item, listed[socket])
        records.extend(record("mysql_databases", item, drift, listed[socket] is not None and bool(drift)))
    return records


def check_mysql_users(module, items):
    records = []
    client = mysql_client(module) if items else None
    for item in items:
        if client is None:
            records.extend(record("mysql_users", item, mysql_user_drift(item, None, error=NO_CLIENT), True))
            continue
        rc, out, err = mysql_query(module, client, item["login_unix_socket"],
                                   "SHOW GRANTS FOR %s@%s" % (sql_string(item["name"]), sql_string(item["host"])))
        if rc != 0 and "1141" in err:
            # ERROR 1141: There is no such grant defined for user ... (no such user)
            records.extend(record("mysql_users", item, mysql_user_drift(item, None), True))
        elif rc != 0:
            error = "cannot be read: %s" % (err.strip().splitlines() or ["rc %d" % rc])[0]
            records.extend(record("mysql_users", item, mysql_user_drift(item, None, error=error), False))
        else:
            records.extend(record("mysql_users", item, mysql_user_drift(item, out), False))
    return records


def check_commands(module, items, outputs):
    """Records of the commands' drift; outputs gets {name: {rc, stdout}} of each (rc None: not found)."""
    records = []
    wrapper = module.get_bin_path("timeout") if items else None
    for item in items:
        binary = module.get_bin_path(item["argv"][0])
        if binary is None:
            rc, out = None, ""
        else:
            argv = [binary] + item["argv"][1:]
            if wrapper:
                argv = [wrapper, "--kill-after=2", str(item["timeout"])] + argv
            rc, out, dummy = module.run_command(argv, environ_update=LANG_C)
        outputs[item["name"]] = {"rc": rc, "stdout": out}
        records.extend(record("commands", item, command_drift(item, rc, out), False))
    return records


def check_text_items(kind, items, compare):
    records = []
    for item in items:
        text = read_text(item["path"], escape=True)
        records.extend(record(kind, item, compare(item, text), text is None))
    return records


def check_sysctls(items):
    records = []
    for item in items:
        live = read_text(os.path.join("/proc/sys", sysctl_proc_path(item["name"]))) if item.get("apply") else None
        text = read_text(item["path"], escape=True)
        records.extend(record("sysctls", item, sysctl_drift(item, text, live), text is None))
    return records


def list_of(**options):
    """Argument spec of a list of dicts with these options, empty by default."""
    return dict(type="list", elements="dict", default=[], options=options)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            files=list_of(**file_item_options(["file", "directory", "present", "absent"])),
            lines=list_of(
                path=dict(type="path", required=True),
                regexp=dict(type="str"),
                line=dict(type="str", required=True),
            ),
            blocks=list_of(
                path=dict(type="path", required=True),
                marker=dict(type="str", default="# {mark} ANSIBLE MANAGED BLOCK"),
                block=dict(type="str", required=True),
            ),
            sysctls=list_of(
                name=dict(type="str", required=True),
                value=dict(type="raw", required=True),
                path=dict(type="path", required=True),
                apply=dict(type="bool", default=False),
            ),
            users=list_of(
                name=dict(type="str", required=True),
                uid=dict(type="int"),
                group=dict(type="str"),
                home=dict(type="str"),
                shell=dict(type="str"),
            ),
            groups=list_of(
                name=dict(type="str", required=True),
                gid=dict(type="int"),
                state=dict(type="str", choices=["present", "query"], default="present"),
            ),
            packages=list_of(
                name=dict(type="str", required=True),
                version=dict(type="str"),
                hold=dict(type="bool", default=False),
            ),
            services=list_of(
                name=dict(type="str", required=True),
                started=dict(type="bool"),
                enabled=dict(type="bool"),
                restart_after=dict(type="list", elements="path", default=[]),
            ),
            mysql_databases=list_of(
                name=dict(type="str", required=True),
                login_unix_socket=dict(type="path", default="/run/mysqld/mysqld.sock"),
            ),
            mysql_users=list_of(
                name=dict(type="str", required=True),
                host=dict(type="str", default="localhost"),
                password=dict(type="str", no_log=True),
                priv=dict(type="str", default=""),
                login_unix_socket=dict(type="path", default="/run/mysqld/mysqld.sock"),
            ),
            commands=list_of(
                name=dict(type="str", required=True),
                argv=dict(type="list", elements="str", required=True),
                rc=dict(type="int", default=0),
                stdout_regex=dict(type="str"),
                timeout=dict(type="int", default=10),
            ),
        ),
        supports_check_mode=True,
    )
    params = module.params
    for item in params["files"]:
        try:
            file_attributes(item)
        except FileAttributeError as exc:
            module.fail_json(msg="files: %s: %s" % (item["path"], exc))
    for item in params["groups"]:
        if item["state"] == "query" and item["gid"] is not None:
            module.fail_json(msg="groups: %s: state query only reads the gid, gid %s cannot be expected" % (item["name"], item["gid"]))
    for item in params["commands"]:
        if not item["argv"] or item["timeout"] < 1:
            module.fail_json(msg="commands: %s: argv must name a command and timeout be at least 1 s" % item["name"])
    gids = read_gids(params["groups"])
    outputs = {}
    try:
        records = (check_files(module, params["files"])
                   + check_text_items("lines", params["lines"], line_drift)
                   + check_text_items("blocks", params["blocks"], block_drift)
                   + check_sysctls(params["sysctls"])
                   + check_groups(params["groups"], gids)
                   + check_users(params["users"])
                   + check_packages(module, params["packages"])
                   + check_services(module, params["services"])
                   + check_mysql_databases(module, params["mysql_databases"])
                   + check_mysql_users(module, params["mysql_users"])
                   + check_commands(module, params["commands"], outputs))
    except ManagedStateError as exc:
        module.fail_json(msg=str(exc))
    drift = [line for entry in records for line in entry["drift"]]
    checked = dict((kind, len(params[kind])) for kind in ITEM_KEY)
    module.exit_json(changed=False, in_sync=not drift, drift=drift, drift_items=records, checked=checked,
                     found={"groups": found_groups(params["groups"], gids), "commands": outputs}, msg=state_msg(drift, checked))


if __name__ == "__main__":
    main()
