# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a role manages compared with what a host has: the pure part of the managed_state module.

Text in (dpkg-query, rpm, systemctl show output, file contents), drift strings out. The module
reads the host (stat, file contents, one package query, one systemctl call) and hands the readings
here. Every rule follows what the change task of the role would do, so "no drift" means the
change task would change nothing:

- files: ansible.builtin.copy/template/file (existence, type, owner, group, mode, SHA-1 of the
  content); content is never returned, only "content differs". The item's argument spec
  (``file_item_options``) is managed_files' too, and so is the reading of its owner, group and
  mode (``_file_attributes``).
- lines: ansible.builtin.lineinfile with state=present and a regexp (the last matching line must be
  the line; with no match the exact line must exist).
- blocks: ansible.builtin.blockinfile (the last BEGIN and END marker lines, the block between them).
- sysctls: ansible.posix.sysctl (the file's last ``key = value`` line, and with ``apply`` the live
  value, compared word by word).
- users, groups: ansible.builtin.user/group on an existing account (uid, primary group, home, shell;
  gid).
- packages: installed (and at a version, and held) as one dpkg-query or rpm query says.
- services: active and enabled as one ``systemctl show`` says.
- mysql_databases, mysql_users: community.mysql.mysql_db (the database exists) and mysql_user
  (the user exists at its host, its mysql_native_password hash is the password's, and its
  privileges are exactly the ones asked, as ``SHOW GRANTS`` lists them; ``USAGE ON *.*`` is the
  grant every user has). A user authenticated by another plugin is drift: only the change task
  knows what it would do with it.
- commands: read-only commands that prove what no file or service state shows (a daemon
  answering, a cluster registered in a database): the exit status, and a line of the output
  matching a regular expression.

Each item's drift is also returned as a record (``drift_record``): its kind, its name or path,
whether the item itself is missing on the host, and its drift lines, so that a caller selects on
fields instead of matching the text. Groups asked with ``state: query`` are only read: their gid
is returned (``found_groups``) and a missing one is no drift.
"""

from __future__ import annotations

import hashlib
import re

from ansible_collections.gpucluster.training.plugins.module_utils._file_attributes import file_attributes

# ansible.builtin.systemd counts these as running (started: nothing to do)
RUNNING_STATES = ("active", "activating", "reloading")
# how a service's drift says it was not running (service_drift writes it, service_down reads it)
NOT_STARTED = ", expected started"
# how a service's drift says it runs with a file older than the one on disk (service_stale reads it)
NOT_RESTARTED = ", expected restarted"
# a file written less than this many seconds after the service started is not counted against it: the
# start time is the monotonic one systemd keeps, turned into wall-clock time with the clocks read now
STALE_SLACK = 2.0
# UnitFileState values for which `systemctl is-enabled` exits 0 (enabled: nothing to do)
ENABLED_STATES = ("enabled", "enabled-runtime", "static", "alias", "indirect", "generated", "linked", "linked-runtime")
BOOL_TRUE = ("y", "yes", "on", "1", "true", "t")
BOOL_FALSE = ("n", "no", "off", "0", "false", "f")

SYSTEMCTL_PROPERTIES = "Id,LoadState,ActiveState,UnitFileState,ActiveEnterTimestampMonotonic"
DPKG_FORMAT = "${db:Status-Abbrev}\\t${Package}\\t${Version}\\n"
RPM_FORMAT = "%{NAME}\\t%{VERSION}-%{RELEASE}\\n"


class ManagedStateError(ValueError):
    """A tool's output is not what the module asked for."""


# --- tool output ------------------------------------------------------------------------------

def parse_systemctl_show(text, units):
    """`systemctl show -p Id,LoadState,ActiveState,UnitFileState -- <units>`: one block per unit, in
    the order asked, blocks separated by an empty line -> {unit asked: {property: value}}."""
    blocks = []
    current = None
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line:
            current = None
            continue
        if "=" not in line:
            raise ManagedStateError("systemctl show: line %r is not Property=value" % line)
        if current is None:
            current = {}
            blocks.append(current)
        key, value = line.split("=", 1)
        current[key] = value
    if len(blocks) != len(units):
        raise ManagedStateError("systemctl show: %d block(s) for %d unit(s) asked (%s)" % (len(blocks), len(units), ", ".join(units)))
    for unit, block in zip(units, blocks):
        missing = [p for p in ("LoadState", "ActiveState", "UnitFileState") if p not in block]
        if missing:
            raise ManagedStateError("systemctl show: no %s for unit %s" % (", ".join(missing), unit))
    return dict(zip(units, blocks))


def parse_dpkg_query(text):
    """`dpkg-query -W -f='${db:Status-Abbrev}\\t${Package}\\t${Version}\\n'` -> {package: {status, want, version}}.

    Names dpkg has never heard of are not in the output (dpkg-query says so on stderr). A package
    known for several architectures counts as installed when one of them is."""
    packages = {}
    for raw in (text or "").splitlines():
        if not raw.strip():
            continue
        parts = raw.split("\t")
        if len(parts) != 3 or len(parts[0]) < 2:
            raise ManagedStateError("dpkg-query: line %r is not <status>\\t<package>\\t<version>" % raw)
        abbrev, name, version = parts
        want, status = abbrev[0], abbrev[1]
        entry = {"want": want, "status": status, "version": version}
        if name not in packages or status == "i":
            packages[name] = entry
    return packages


RPM_MISSING = re.compile(r"^package (\S+) is not installed$")


def parse_rpm_query(text):
    """`rpm -q --qf '%{NAME}\\t%{VERSION}-%{RELEASE}\\n' <names>` -> {package: {status, want, version}}."""
    packages = {}
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line or RPM_MISSING.match(line):
            continue
        parts = line.split("\t")
        if len(parts) != 2:
            raise ManagedStateError("rpm -q: line %r is not <name>\\t<version>-<release>" % line)
        packages[parts[0]] = {"want": "i", "status": "i", "version": parts[1]}
    return packages


# --- comparisons ------------------------------------------------------------------------------

def mode_text(mode):
    return "%04o" % mode


def file_drift(item, seen, ids=None, umask=0o022):
    """One file item against its stat: seen is None (absent) or {type, owner, group, uid, gid, mode, sha1}.

    type is 'file', 'directory' or 'other' (a device file...); state 'present' takes any type. sha1 is
    that of the content (files with an expected content or checksum only). Owner, group and mode are
    read as managed_files reads them (_file_attributes.file_attributes; a symbolic mode is applied to
    seen's mode, with umask): an id is compared with seen's uid or gid; a name with the id that
    ids(key, name) gives ('owner' or 'group'; None: the host has no such name, which is drift), or
    without ids with seen's owner or group name. FileAttributeError when the item's owner, group or
    mode cannot be read (the module refuses such an item before it compares)."""
    path = item["path"]
    state = item.get("state") or "file"
    if state == "absent":
        return [] if seen is None else ["%s: present, expected absent" % path]
    if seen is None:
        return ["%s: missing" % path]
    if state == "present":
        return []
    if seen["type"] != state:
        return ["%s: is a %s, expected a %s" % (path, seen["type"], state)]
    drift = []
    if state == "file":
        expected = item.get("checksum")
        if expected is not None and (seen.get("sha1") or "").lower() != expected.lower():
            drift.append("%s: content differs" % path)
    wanted = file_attributes(item, seen["mode"], seen["type"] == "directory", umask)
    for key, id_key in (("owner", "uid"), ("group", "gid")):
        want = wanted[key]
        if want is None:
            continue
        if isinstance(want, int):
            same = want == seen.get(id_key)
        elif ids is not None:
            same = seen.get(id_key) is not None and ids(key, want) == seen[id_key]
        else:
            same = want == seen[key]
        if not same:
            drift.append("%s: %s %s, expected %s" % (path, key, seen[key], item[key]))
    if wanted["mode"] is not None and seen["mode"] != wanted["mode"]:
        drift.append("%s: mode %s, expected %s" % (path, mode_text(seen["mode"]), mode_text(wanted["mode"])))
    return drift


def line_drift(item, text):
    """lineinfile (state=present, regexp): text is the file's content, or None when it is missing."""
    path = item["path"]
    if text is None:
        return ["%s: missing (line %r expected)" % (path, item["line"])]
    lines = [line.rstrip("\r\n") for line in text.splitlines(True)]
    matched = None
    if item.get("regexp"):
        pattern = re.compile(item["regexp"])
        for line in lines:
            if pattern.search(line):
                matched = line
    if matched is not None:
        return [] if matched == item["line"] else ["%s: line %r differs from %r" % (path, matched, item["line"])]
    return [] if item["line"] in lines else ["%s: line %r missing" % (path, item["line"])]


def block_drift(item, text):
    """blockinfile: the last BEGIN and END marker lines, and between them exactly the block."""
    path = item["path"]
    marker = item.get("marker") or "# {mark} ANSIBLE MANAGED BLOCK"
    begin = marker.replace("{mark}", item.get("marker_begin") or "BEGIN") + "\n"
    end = marker.replace("{mark}", item.get("marker_end") or "END") + "\n"
    if text is None:
        return ["%s: missing (managed block expected)" % path]
    lines = text.splitlines(True)
    n0 = n1 = None
    for index, line in enumerate(lines):
        if line == begin:
            n0 = index
        if line == end:
            n1 = index
    if n0 is None or n1 is None or n1 < n0:
        return ["%s: managed block missing" % path]
    block = item.get("block") or ""
    if block and not block.endswith("\n"):
        block += "\n"
    return [] if lines[n0 + 1:n1] == block.splitlines(True) else ["%s: managed block differs" % path]


def sysctl_value(value):
    """The value as ansible.posix.sysctl writes it (booleans as 1/0, stripped)."""
    if isinstance(value, bool):
        return "1" if value else "0"
    text = str(value).strip()
    if text.lower() in BOOL_TRUE:
        return "1"
    if text.lower() in BOOL_FALSE:
        return "0"
    return text


def sysctl_file_values(text):
    """key = value lines of a sysctl.d file (the last one of a key counts), as ansible.posix.sysctl reads them."""
    values = {}
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")) or "=" not in line:
            continue
        key, value = line.split("=", 1)
        values[key.strip()] = value.strip()
    return values


def sysctl_proc_path(name):
    """/proc/sys path of a key: dots separate the levels, unless the key uses slashes."""
    return name if "/" in name else name.replace(".", "/")


def sysctl_drift(item, file_text, live_text):
    """ansible.posix.sysctl (state=present): the file's value, and with apply the live value (None: unreadable)."""
    name, want = item["name"], sysctl_value(item["value"])
    drift = []
    have = sysctl_file_values(file_text).get(name)
    if have is None:
        drift.append("sysctl %s: not in %s" % (name, item["path"]))
    elif have != want:
        drift.append("sysctl %s: %s in %s, expected %s" % (name, have, item["path"], want))
    if item.get("apply"):
        if live_text is None:
            drift.append("sysctl %s: live value unreadable" % name)
        elif live_text.split() != want.split():
            drift.append("sysctl %s: live value %s, expected %s" % (name, " ".join(live_text.split()), want))
    return drift


def group_drift(item, seen):
    """A group against its entry: seen is None or {gid}. state 'query' only reads it: never drift."""
    if item.get("state") == "query":
        return []
    if seen is None:
        return ["group %s: missing" % item["name"]]
    if item.get("gid") is not None and int(item["gid"]) != int(seen["gid"]):
        return ["group %s: gid %s, expected %s" % (item["name"], seen["gid"], item["gid"])]
    return []


def user_drift(item, seen):
    """A user against its entry: seen is None or {uid, group (primary group name), home, shell}."""
    if seen is None:
        return ["user %s: missing" % item["name"]]
    drift = []
    for key in ("uid", "group", "home", "shell"):
        if item.get(key) not in (None, "") and str(item[key]) != str(seen[key]):
            drift.append("user %s: %s %s, expected %s" % (item["name"], key, seen[key], item[key]))
    return drift


def version_matches(installed, wanted):
    """apt pins the whole Debian version (23.11.10-1); dnf the upstream one (23.11.10 of 23.11.10-1.el9)."""
    return installed == wanted or installed.startswith(wanted + "-")


def package_drift(item, seen):
    """A package against the query: seen is None (unknown to the package manager) or {status, want, version}."""
    name = item["name"]
    if seen is None or seen["status"] != "i":
        return ["package %s: not installed" % name]
    drift = []
    if item.get("version") and not version_matches(seen["version"], item["version"]):
        drift.append("package %s: version %s, expected %s" % (name, seen["version"], item["version"]))
    if item.get("hold") and seen["want"] != "h":
        drift.append("package %s: not held" % name)
    return drift


def service_started_at(seen, now_wall, now_monotonic):
    """The wall-clock time (seconds since the epoch) at which a unit last became active, from its systemctl show
    block's ActiveEnterTimestampMonotonic (microseconds of CLOCK_MONOTONIC) and the two clocks read now; None when
    systemd has no such time (never active, or an older systemd that does not show it)."""
    try:
        micros = int(seen.get("ActiveEnterTimestampMonotonic") or 0)
    except ValueError:
        raise ManagedStateError("systemctl show: ActiveEnterTimestampMonotonic=%r is not a number"
                                % seen.get("ActiveEnterTimestampMonotonic")) from None
    if micros <= 0:
        return None
    return now_wall - (now_monotonic - micros / 1e6)


def service_drift(item, seen, mtimes=None, clocks=None):
    """A service against its systemctl show block: {LoadState, ActiveState, UnitFileState,
    ActiveEnterTimestampMonotonic}. For an item with ``restart_after`` (paths), ``mtimes`` is {path: mtime, or None
    for a missing file} and ``clocks`` (wall, monotonic) the two clocks read when systemctl was: a running service
    that became active before one of those files was last written runs with what the file held before."""
    name = item["name"]
    if seen.get("LoadState") == "not-found":
        return ["service %s: no such unit" % name]
    drift = []
    active = seen.get("ActiveState", "")
    if item.get("started") is True and active not in RUNNING_STATES:
        drift.append("service %s: %s%s" % (name, active, NOT_STARTED))
    if item.get("restart_after") and active in RUNNING_STATES and clocks is not None:
        started = service_started_at(seen, *clocks)
        newer = [path for path in item["restart_after"]
                 if started is not None and (mtimes or {}).get(path) is not None and mtimes[path] > started + STALE_SLACK]
        if newer:
            drift.append("service %s: running since before %s changed%s" % (name, ", ".join(newer), NOT_RESTARTED))
    if item.get("started") is False and active in RUNNING_STATES:
        drift.append("service %s: %s, expected stopped" % (name, active))
    enabled = seen.get("UnitFileState", "")
    if item.get("enabled") is True and enabled not in ENABLED_STATES:
        drift.append("service %s: %s, expected enabled" % (name, enabled or "no unit file state"))
    if item.get("enabled") is False and enabled in ENABLED_STATES:
        drift.append("service %s: %s, expected disabled" % (name, enabled))
    return drift


# --- databases and read-only commands ------------------------------------------------------------

_GRANT = re.compile(r"^GRANT (?P<privs>.+?) ON (?P<obj>\S+) TO (?P<who>\S+)(?P<rest>.*)$")
_NATIVE_HASH = re.compile(r"IDENTIFIED BY PASSWORD '(?P<hash>\*[0-9A-Fa-f]{40})'")
_IDENTIFIED = re.compile(r"\bIDENTIFIED (BY|VIA|WITH)\b")


def mysql_native_hash(password):
    """The mysql_native_password hash MariaDB and MySQL store: '*' and SHA1(SHA1(password)) in upper-case hex."""
    inner = hashlib.sha1(password.encode("utf-8")).digest()
    return "*" + hashlib.sha1(inner).hexdigest().upper()


def _privileges(text):
    """'ALL', 'ALL PRIVILEGES', 'SELECT, INSERT' as a frozenset of upper-case names (ALL is ALL PRIVILEGES)."""
    names = set(p.strip().upper() for p in text.split(",") if p.strip())
    return frozenset("ALL PRIVILEGES" if n == "ALL" else n for n in names)


def _grant_object(text):
    """`db`.* or db.* -> db.* (quotes dropped, as mysql_user's priv string writes it)."""
    return text.replace("`", "").replace('"', "")


def parse_show_grants(text):
    """SHOW GRANTS output (mysql -N -B: one statement a line) -> {hash, other_auth, grants, grant_option}.

    hash: the mysql_native_password hash or None; other_auth: the user authenticates by something
    else (IDENTIFIED VIA a plugin, or a form this does not read); grants: {object: frozenset of
    privileges}, USAGE ON *.* left out; grant_option: the objects granted WITH GRANT OPTION.
    Lines that are not GRANT statements (a role's grant names no ON) are an error: the caller
    reports drift rather than guess."""
    found = {"hash": None, "other_auth": False, "grants": {}, "grant_option": []}
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        match = _GRANT.match(line)
        if not match:
            raise ManagedStateError("SHOW GRANTS: a line that is not GRANT ... ON ... TO: %r" % line[:80])
        rest = match.group("rest")
        native = _NATIVE_HASH.search(rest)
        if native:
            found["hash"] = native.group("hash").upper()
        elif _IDENTIFIED.search(rest):
            found["other_auth"] = True
        obj = _grant_object(match.group("obj"))
        privs = _privileges(match.group("privs"))
        if "WITH GRANT OPTION" in rest.upper():
            found["grant_option"].append(obj)
        if obj == "*.*" and privs == frozenset(["USAGE"]):
            continue
        found["grants"][obj] = found["grants"].get(obj, frozenset()) | privs
    return found


def parse_priv(priv):
    """mysql_user's priv string ('db.*:ALL/other.*:SELECT,INSERT') -> {object: frozenset of privileges}."""
    wanted = {}
    for part in (priv or "").split("/"):
        if not part.strip():
            continue
        obj, sep, privs = part.rpartition(":")
        if not sep or not obj.strip():
            raise ManagedStateError("priv %r: each part must be object:privileges" % part)
        obj = _grant_object(obj.strip())
        wanted[obj] = wanted.get(obj, frozenset()) | _privileges(privs)
    if wanted.get("*.*") == frozenset(["USAGE"]):
        del wanted["*.*"]
    return wanted


def mysql_user_drift(item, grants_text, error=None):
    """A database user against its SHOW GRANTS output (None: no such user), or the error that kept it
    from being read (no client, the server's own error). The password is never named."""
    who = "mysql user %s@%s" % (item["name"], item.get("host") or "localhost")
    if error:
        return ["%s: %s" % (who, error)]
    if grants_text is None:
        return [who + ": missing"]
    try:
        seen = parse_show_grants(grants_text)
    except ManagedStateError as exc:
        return ["%s: %s" % (who, exc)]
    drift = []
    if seen["other_auth"]:
        drift.append(who + ": authenticated by another plugin than mysql_native_password")
    elif item.get("password") is not None and seen["hash"] != mysql_native_hash(item["password"]):
        drift.append(who + ": password differs")
    wanted = parse_priv(item.get("priv"))
    if seen["grants"] != wanted:
        def show(grants):
            return "; ".join("%s:%s" % (obj, ",".join(sorted(privs))) for obj, privs in sorted(grants.items())) or "none"
        drift.append("%s: privileges %s, expected %s" % (who, show(seen["grants"]), show(wanted)))
    if seen["grant_option"]:
        drift.append("%s: WITH GRANT OPTION on %s, not asked" % (who, ", ".join(sorted(seen["grant_option"]))))
    return drift


def mysql_database_drift(item, names, error=None):
    """A database against the names the server listed (None: the server could not be asked), or the
    error that kept them from being read (no client)."""
    if error:
        return ["mysql database %s: %s" % (item["name"], error)]
    if names is None:
        return ["mysql database %s: the server does not answer" % item["name"]]
    return [] if item["name"] in names else ["mysql database %s: missing" % item["name"]]


def command_drift(item, rc, out):
    """A read-only command's result against its expected exit status and output line."""
    name = item["name"]
    if rc is None:
        return ["command %s: %s not found" % (name, item["argv"][0])]
    if rc != item.get("rc", 0):
        return ["command %s: exit status %d, expected %d" % (name, rc, item.get("rc", 0))]
    pattern = item.get("stdout_regex")
    if pattern and not re.search(pattern, out or "", re.MULTILINE):
        return ["command %s: no output line matches %s" % (name, pattern)]
    return []


# --- the file item -------------------------------------------------------------------------------

def file_item_options(states, **own):
    """The argument spec of one file item (the options of the list's dicts): the one format that
    managed_state compares and managed_files writes, so that one item serves both. path, state
    (one of states, file by default), content, checksum, owner, group and mode (raw: an integer
    or text, read by _file_attributes), then the module's own keys (managed_files' backup,
    validate, diff and name).

    Each module documents the keys in its own DOCUMENTATION: what it does with them differs, and a
    doc fragment cannot add suboptions to an option the module documents itself (ansible-core merges
    a fragment's options one level deep: the module's files replaces the fragment's whole)."""
    options = dict(
        path=dict(type="path", required=True),
        state=dict(type="str", choices=list(states), default="file"),
        content=dict(type="str", no_log=False),
        checksum=dict(type="str", no_log=False),
        owner=dict(type="str"),
        group=dict(type="str"),
        mode=dict(type="raw"),
    )
    options.update(own)
    return options


# --- structured results -----------------------------------------------------------------------

# The field that names an item of each kind (files, lines and blocks by path, the others by name).
ITEM_KEY = {"files": "path", "lines": "path", "blocks": "path", "sysctls": "name", "groups": "name",
            "users": "name", "packages": "name", "services": "name", "mysql_databases": "name", "mysql_users": "name",
            "commands": "name"}


def drift_record(kind, item, drift, missing):
    """One item's drift as a record {kind, name, missing, drift}, or None when it did not drift.

    missing says the item itself is not on the host (a file, the file of a line, block or sysctl, a
    user or group, a package not installed, a unit systemd does not know), as opposed to present
    but different."""
    if not drift:
        return None
    if kind not in ITEM_KEY:
        raise ManagedStateError("unknown kind %r" % kind)
    return {"kind": kind, "name": item[ITEM_KEY[kind]], "missing": bool(missing), "drift": list(drift)}


def state_drifted(state, kinds, names=None):
    """Whether a managed_state result says items of these kinds (and, given names, with one of these
    names) drifted: what a role reads to run one change step only where its own items drifted.

    A result with no drift_items (the check did not run: skipped, a fast path turned off, no result
    at all) counts as drifted, so the step runs as it would without the check."""
    if isinstance(kinds, str):
        kinds = [kinds]
    unknown = sorted(set(kinds) - set(ITEM_KEY))
    if not kinds or unknown:
        raise ManagedStateError("kinds must name some of %s, not %s" % (", ".join(sorted(ITEM_KEY)), unknown or "none"))
    if not isinstance(state, dict) or not isinstance(state.get("drift_items"), list):
        return True
    wanted = None if names is None else set(names)
    return any(record.get("kind") in kinds and (wanted is None or record.get("name") in wanted)
               for record in state["drift_items"])


def service_down(state, name):
    """Whether a managed_state result says the service name was not running when it was checked:
    its unit unknown (not installed yet) or not started. The change steps then start it after every
    file they write, so a restart notified by those files is redundant. False when the result holds
    no check (skipped, a fast path turned off, no result at all): the restart runs as it would
    without the check."""
    if not isinstance(state, dict) or not isinstance(state.get("drift_items"), list):
        return False
    return any(record.get("kind") == "services" and record.get("name") == name
               and (record.get("missing") or any(line.endswith(NOT_STARTED) for line in record.get("drift", [])))
               for record in state["drift_items"])


def service_stale(state, name):
    """Whether a managed_state result says the service name runs since before a file of its ``restart_after``
    changed (a restart that did not happen: a run stopped between writing the file and the restart, or a file
    written by hand). False when the result holds no check."""
    if not isinstance(state, dict) or not isinstance(state.get("drift_items"), list):
        return False
    return any(record.get("kind") == "services" and record.get("name") == name
               and any(line.endswith(NOT_RESTARTED) for line in record.get("drift", []))
               for record in state["drift_items"])


def content_sha1(content):
    """The SHA-1 (hex) a file item's expected content is compared by: that of its UTF-8 bytes (as
    ansible's copy and template write text)."""
    return hashlib.sha1(content.encode("utf-8", "surrogateescape")).hexdigest()


def items_by_checksum(items):
    """A role's items ({kind: [item, ...]}) with each file's expected content replaced by its SHA-1, the
    way managed_state compares it anyway (the SHA-1 of the content's UTF-8 bytes): the same check, whose
    arguments, and the facts that hold them until the call, are the size of a hash instead of the file.
    A file item with a checksum already, or without text content, and the other kinds are kept as given."""
    _item_keys(items)
    result = dict(items)
    files = []
    for item in items.get("files") or []:
        content = item.get("content")
        if isinstance(content, str) and item.get("checksum") is None:
            item = dict((key, value) for key, value in item.items() if key != "content")
            item["checksum"] = content_sha1(content)
        files.append(item)
    if "files" in items:
        result["files"] = files
    return result


def state_parts(state, parts):
    """One managed_state result of a call that compared several parts' items at once (site.yml's
    check play: each stage's items in one call per host) -> {part: result of that part alone}.

    parts maps a part's name to its items as they were passed ({kind: [item, ...]}). A part's result
    has the keys of a managed_state result: in_sync, drift and drift_items (the records of its own
    items, matched by kind and the field that names the item), checked (its items per kind), msg,
    and found (the whole call's: what was read, not compared). A record that no part's items name
    counts for every part, so that no part is in sync on a drift it cannot place."""
    if not isinstance(state, dict) or not isinstance(state.get("drift_items"), list):
        raise ManagedStateError("not a managed_state result (no drift_items): %r" % (type(state).__name__,))
    keys = _parts_keys(parts)
    placed = set().union(*keys.values()) if keys else set()
    results = {}
    for part, items in parts.items():
        records = [record for record in state["drift_items"]
                   if (record.get("kind"), record.get("name")) in keys[part]
                   or (record.get("kind"), record.get("name")) not in placed]
        drift = [line for record in records for line in record.get("drift", [])]
        checked = dict((kind, len(listed or [])) for kind, listed in items.items())
        results[part] = {
            "changed": False,
            "in_sync": not records,
            "drift": drift,
            "drift_items": records,
            "checked": checked,
            "found": state.get("found", {}),
            "msg": state_msg(drift, checked),
        }
    return results


def items_union(parts):
    """Several parts' items ({part: {kind: [item, ...]}}) -> the items of one managed_state call
    that compares them all: every kind, each the parts' items of that kind in the parts' order."""
    _parts_keys(parts)
    return dict((kind, [item for items in parts.values() for item in items.get(kind) or []]) for kind in ITEM_KEY)


def state_msg(drift, checked):
    """The one line a managed_state result says: in sync, or how many differences, given its drift
    lines and the count of items checked per kind."""
    total = sum(checked.values())
    if not drift:
        return "in sync: %d item(s) checked" % total
    return "%d difference(s) in %d item(s) checked" % (len(drift), total)


def _parts_keys(parts):
    """{part: the (kind, name) of its items} of several parts' items ({part: {kind: [item, ...]}}),
    after checking that parts is such a mapping (each part's items as _item_keys checks them)."""
    if not isinstance(parts, dict):
        raise ManagedStateError("parts must map a part's name to its items, not %s" % type(parts).__name__)
    return dict((part, _item_keys(items, "part %s: " % part)) for part, items in parts.items())


def _item_keys(items, where=""):
    """The (kind, name) of every item of a role's items ({kind: [item, ...]}), after checking that
    they are such a mapping of known kinds whose items carry the field that names them."""
    if not isinstance(items, dict):
        raise ManagedStateError("%sitems must map a kind to a list, not %s" % (where, type(items).__name__))
    unknown = sorted(set(items) - set(ITEM_KEY))
    if unknown:
        raise ManagedStateError("%sunknown kinds %s (known: %s)" % (where, unknown, ", ".join(sorted(ITEM_KEY))))
    keys = set()
    for kind, listed in items.items():
        for item in listed or []:
            if not isinstance(item, dict) or ITEM_KEY[kind] not in item:
                raise ManagedStateError("%san item of %s has no %s: %r" % (where, kind, ITEM_KEY[kind], item))
            keys.add((kind, item[ITEM_KEY[kind]]))
    return keys


def found_groups(items, gids):
    """{name: gid} of the groups asked (any state) that the host has; gids maps a name to its gid or None."""
    return dict((item["name"], gids[item["name"]]) for item in items if gids.get(item["name"]) is not None)
