# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of module_utils/_managed_state.py (the check-first path's comparisons).

The systemctl and dpkg-query outputs below were CAPTURED on this project's Debian 13 test
containers (the node image of the lab and the bench: systemd 257.13-1~deb13u1, dpkg 1.22.22), with
the exact commands the module runs; they are real tool output, not of a public source (see
tests/fixtures/SOURCES.md for the project's public fixtures). The rpm lines are synthetic, in the
format the module asks rpm for.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.training.plugins.module_utils._file_attributes import FileAttributeError
from ansible_collections.gpucluster.training.plugins.module_utils._managed_state import (
    ManagedStateError, block_drift, command_drift, drift_record, file_drift, file_item_options, found_groups, group_drift,
    line_drift, mysql_database_drift, mysql_native_hash, mysql_user_drift, package_drift, parse_dpkg_query, parse_priv,
    parse_rpm_query, parse_show_grants, parse_systemctl_show, service_drift, service_started_at, state_drifted, sysctl_drift, sysctl_proc_path,
    user_drift)

# LANG=C systemctl show -p Id,LoadState,ActiveState,UnitFileState -- chrony munge nosuch.service (bench-gpu1)
SYSTEMCTL = """Id=chrony.service
LoadState=loaded
ActiveState=active
UnitFileState=enabled

Id=munge.service
LoadState=not-found
ActiveState=inactive
UnitFileState=

Id=nosuch.service
LoadState=not-found
ActiveState=inactive
UnitFileState=
"""
# LANG=C systemctl show -p Id,LoadState,ActiveState,UnitFileState,ActiveEnterTimestampMonotonic -- munge on a compute
# container of molecule/cluster (Debian 12, systemd 252.39-1~deb12u2) after the converge wrote the cluster's key and
# started munge; then, in the same shell, python3 -c 'print(time.time(), time.monotonic())', stat -c %.9Y of the key,
# and systemctl show -p ActiveEnterTimestamp --timestamp=unix munge (systemd's own wall-clock start: @1796690388).
SYSTEMCTL_STARTED = """Id=munge.service
LoadState=loaded
ActiveState=active
UnitFileState=enabled
ActiveEnterTimestampMonotonic=817749029
"""
CAPTURE_CLOCKS = (1796690429.8280416, 859.459981775)
CAPTURE_KEY_MTIME = 1796690384.839661836
CAPTURE_STARTED = 1796690388.117089   # from the two clocks; systemd's own second: 1796690388
# LANG=C dpkg-query -W -f='${db:Status-Abbrev}\t${Package}\t${Version}\n' -- numactl pciutils procps chrony slurmd nosuchpkg
# (stdout; stderr said "dpkg-query: no packages found matching slurmd" and "... nosuchpkg", rc 1)
DPKG = "ii \tchrony\t4.6.1-3+deb13u2\nii \tnumactl\t2.0.19-1\nii \tpciutils\t1:3.13.0-2\nii \tprocps\t2:4.0.4-9\n"


def test_systemctl_blocks_in_the_order_asked():
    shown = parse_systemctl_show(SYSTEMCTL, ["chrony", "munge", "nosuch.service"])
    assert shown["chrony"]["ActiveState"] == "active" and shown["munge"]["LoadState"] == "not-found"
    assert service_drift({"name": "chrony", "started": True, "enabled": True}, shown["chrony"]) == []
    assert service_drift({"name": "munge", "started": True, "enabled": True}, shown["munge"]) == ["service munge: no such unit"]


@pytest.mark.parametrize("text,units,message", [
    (SYSTEMCTL, ["chrony", "munge"], r"3 block\(s\) for 2 unit\(s\)"),
    ("garbage\n", ["x"], "is not Property=value"),
    ("Id=x.service\nLoadState=loaded\n", ["x"], "no ActiveState, UnitFileState for unit x"),
    ("", ["x"], r"0 block\(s\) for 1 unit\(s\)"),
])
def test_systemctl_malformed(text, units, message):
    with pytest.raises(ManagedStateError, match=message):
        parse_systemctl_show(text, units)


@pytest.mark.parametrize("active,enabled,want", [
    ("inactive", "enabled", ["service slurmd: inactive, expected started"]),
    ("failed", "disabled", ["service slurmd: failed, expected started", "service slurmd: disabled, expected enabled"]),
    ("activating", "enabled", []),
    ("active", "static", []),
])
def test_service_states(active, enabled, want):
    seen = {"LoadState": "loaded", "ActiveState": active, "UnitFileState": enabled}
    assert service_drift({"name": "slurmd", "started": True, "enabled": True}, seen) == want


def test_dpkg_installed_missing_version_hold():
    seen = parse_dpkg_query(DPKG)
    assert seen["pciutils"] == {"want": "i", "status": "i", "version": "1:3.13.0-2"}
    assert package_drift({"name": "numactl"}, seen.get("numactl")) == []
    assert package_drift({"name": "slurmd"}, seen.get("slurmd")) == ["package slurmd: not installed"]
    assert package_drift({"name": "chrony", "version": "4.6.1-3+deb13u2"}, seen["chrony"]) == []
    assert package_drift({"name": "chrony", "version": "4.6.1-3"}, seen["chrony"]) == ["package chrony: version 4.6.1-3+deb13u2, expected 4.6.1-3"]
    assert package_drift({"name": "chrony", "hold": True}, seen["chrony"]) == ["package chrony: not held"]


def test_dpkg_states_other_than_installed():
    # synthetic lines in the captured format: removed with its configuration left (rc), held (hi)
    seen = parse_dpkg_query("rc \tnumactl\t2.0.19-1\nhi \tslurmd\t24.11.5-2\n")
    assert package_drift({"name": "numactl"}, seen["numactl"]) == ["package numactl: not installed"]
    assert package_drift({"name": "slurmd", "hold": True, "version": "24.11.5-2"}, seen["slurmd"]) == []


@pytest.mark.parametrize("text", ["ii numactl 2.0.19-1\n", "i\tx\n"])
def test_dpkg_malformed(text):
    with pytest.raises(ManagedStateError, match="^dpkg-query: line"):
        parse_dpkg_query(text)


def test_rpm_query():
    seen = parse_rpm_query("slurm\t23.11.10-1.el9\npackage slurm-slurmd is not installed\n")
    assert package_drift({"name": "slurm", "version": "23.11.10"}, seen["slurm"]) == []
    assert package_drift({"name": "slurm-slurmd"}, seen.get("slurm-slurmd")) == ["package slurm-slurmd: not installed"]
    with pytest.raises(ManagedStateError):
        parse_rpm_query("error: rpmdb open failed\n")


def test_file_rules():
    seen = {"type": "file", "owner": "root", "group": "root", "uid": 0, "gid": 0, "mode": 0o644, "sha1": "ab"}
    assert file_drift({"path": "/f", "checksum": "AB", "owner": "root", "group": "root", "mode": "0644"}, seen) == []
    assert file_drift({"path": "/f", "checksum": "cd", "owner": "slurm", "mode": "0600"}, seen) == [
        "/f: content differs", "/f: owner root, expected slurm", "/f: mode 0644, expected 0600"]
    assert file_drift({"path": "/f"}, None) == ["/f: missing"]
    assert file_drift({"path": "/f", "state": "absent"}, None) == []
    assert file_drift({"path": "/f", "state": "absent"}, seen) == ["/f: present, expected absent"]
    assert file_drift({"path": "/f", "state": "directory"}, seen) == ["/f: is a file, expected a directory"]
    # a GPU device file: exists, of any type
    assert file_drift({"path": "/dev/dri/renderD128", "state": "present"}, dict(seen, type="other")) == []
    assert file_drift({"path": "/dev/dri/renderD128", "state": "present"}, None) == ["/dev/dri/renderD128: missing"]


def test_file_owner_group_and_mode_as_managed_files_reads_them():
    seen = {"type": "file", "owner": "root", "group": "root", "uid": 0, "gid": 0, "mode": 0o644, "sha1": None}
    # an unquoted YAML 0644 (420), octal text, a symbolic mode that leaves 0644 as it is; ids as text or int
    for mode in (420, "0644", "644", "0o644", "u=rw,g=r,o=r", "a-x"):
        assert file_drift({"path": "/f", "owner": "0", "group": 0, "mode": mode}, seen) == [], mode
    assert file_drift({"path": "/f", "owner": "64030", "group": "64030", "mode": 384}, seen) == [
        "/f: owner root, expected 64030", "/f: group root, expected 64030", "/f: mode 0644, expected 0600"]
    assert file_drift({"path": "/f", "mode": "u+x"}, seen) == ["/f: mode 0644, expected 0744"]
    # a name by the id the host gives it (as chown does): another name of uid 0 is no drift, an unknown name is
    ids = {("owner", "toor"): 0, ("owner", "root"): 0, ("group", "wheel"): 10}.get
    assert file_drift({"path": "/f", "owner": "toor"}, seen, lambda key, name: ids((key, name))) == []
    assert file_drift({"path": "/f", "owner": "nosuch", "group": "wheel"}, seen, lambda key, name: ids((key, name))) == [
        "/f: owner root, expected nosuch", "/f: group root, expected wheel"]
    # a symbolic mode's X and its umask: the directory's own
    directory = dict(seen, type="directory", mode=0o700)
    assert file_drift({"path": "/d", "state": "directory", "mode": "go+rX"}, dict(directory, mode=0o755)) == []
    assert file_drift({"path": "/d", "state": "directory", "mode": "+rx"}, directory, umask=0o077) == []
    assert file_drift({"path": "/d", "state": "directory", "mode": "+rx"}, directory) == ["/d: mode 0700, expected 0755"]
    with pytest.raises(FileAttributeError):
        file_drift({"path": "/f", "mode": "rw-r--r--"}, seen)


def test_line_rules_follow_lineinfile():
    item = {"path": "/etc/pam.d/sshd", "regexp": r"pam_slurm_adopt\.so", "line": "-account required pam_slurm_adopt.so"}
    assert line_drift(item, "auth x\n-account required pam_slurm_adopt.so\n") == []
    assert line_drift(item, "-account sufficient pam_slurm_adopt.so\n") == [
        "/etc/pam.d/sshd: line '-account sufficient pam_slurm_adopt.so' differs from '-account required pam_slurm_adopt.so'"]
    assert line_drift(item, "auth x\n") == ["/etc/pam.d/sshd: line '-account required pam_slurm_adopt.so' missing"]
    assert line_drift(item, None)[0].startswith("/etc/pam.d/sshd: missing")


def test_block_rules_follow_blockinfile():
    item = {"path": "/etc/hosts", "marker": "# {mark} members", "block": "10.0.0.1 a\n10.0.0.2 b"}
    good = "127.0.0.1 localhost\n# BEGIN members\n10.0.0.1 a\n10.0.0.2 b\n# END members\n"
    assert block_drift(item, good) == []
    assert block_drift(item, good.replace("10.0.0.2 b", "10.0.0.9 b")) == ["/etc/hosts: managed block differs"]
    assert block_drift(item, "127.0.0.1 localhost\n") == ["/etc/hosts: managed block missing"]
    # an END marker without its newline at the end of the file: blockinfile would write the block again
    assert block_drift(item, good.rstrip("\n")) == ["/etc/hosts: managed block missing"]


def test_sysctl_rules_follow_ansible_posix_sysctl():
    item = {"name": "kernel.numa_balancing", "value": 0, "path": "/etc/sysctl.d/60.conf", "apply": True}
    assert sysctl_drift(item, "# x\nkernel.numa_balancing = 0\n", "0\n") == []
    assert sysctl_drift(item, "kernel.numa_balancing=1\n", "1\n") == [
        "sysctl kernel.numa_balancing: 1 in /etc/sysctl.d/60.conf, expected 0", "sysctl kernel.numa_balancing: live value 1, expected 0"]
    assert sysctl_drift(dict(item, apply=False, value="false"), "kernel.numa_balancing=0\n", None) == []
    assert sysctl_drift(item, None, None) == ["sysctl kernel.numa_balancing: not in /etc/sysctl.d/60.conf",
                                              "sysctl kernel.numa_balancing: live value unreadable"]
    assert sysctl_drift(dict(item, name="net.ipv4.ip_local_port_range", value="1024 65000"),
                        "net.ipv4.ip_local_port_range = 1024 65000\n", "1024\t65000\n") == []
    assert sysctl_proc_path("net.ipv4.conf/eth0.100/rp_filter") == "net.ipv4.conf/eth0.100/rp_filter"


def test_users_and_groups():
    want = {"name": "slurm", "uid": 64030, "group": "slurm", "home": "/nonexistent", "shell": "/usr/sbin/nologin"}
    assert user_drift(want, {"uid": 64030, "group": "slurm", "home": "/nonexistent", "shell": "/usr/sbin/nologin"}) == []
    assert user_drift(want, {"uid": 999, "group": "slurm", "home": "/var/lib/slurm", "shell": "/usr/sbin/nologin"}) == [
        "user slurm: uid 999, expected 64030", "user slurm: home /var/lib/slurm, expected /nonexistent"]
    assert user_drift(want, None) == ["user slurm: missing"]
    assert group_drift({"name": "slurm", "gid": 64030}, {"gid": 64030}) == []
    assert group_drift({"name": "slurm", "gid": 64030}, {"gid": 1}) == ["group slurm: gid 1, expected 64030"]
    # state query only reads the group: never drift, whether the host has it or not
    assert group_drift({"name": "render", "state": "query"}, None) == []
    assert group_drift({"name": "render", "state": "query"}, {"gid": 992}) == []
    assert found_groups([{"name": "video"}, {"name": "render", "state": "query"}, {"name": "kvm", "state": "query"}],
                        {"video": 44, "render": 992, "kvm": None}) == {"video": 44, "render": 992}


def test_drift_records():
    assert drift_record("files", {"path": "/dev/kfd", "state": "present"}, [], True) is None
    assert drift_record("files", {"path": "/dev/kfd", "state": "present"}, ["/dev/kfd: missing"], True) == {
        "kind": "files", "name": "/dev/kfd", "missing": True, "drift": ["/dev/kfd: missing"]}
    assert drift_record("services", {"name": "docker", "started": True}, ["service docker: inactive, expected started"], False) == {
        "kind": "services", "name": "docker", "missing": False, "drift": ["service docker: inactive, expected started"]}
    with pytest.raises(ManagedStateError):
        drift_record("mounts", {"name": "x"}, ["x"], False)


def test_state_drifted_by_kind_and_name():
    # the shape managed_state returns: a controller whose slurm.conf was edited, packages in sync
    state = {"in_sync": False, "drift": ["/etc/slurm/slurm.conf: content differs"],
             "drift_items": [{"kind": "files", "name": "/etc/slurm/slurm.conf", "missing": False,
                              "drift": ["/etc/slurm/slurm.conf: content differs"]}]}
    assert state_drifted(state, ["packages"]) is False
    assert state_drifted(state, "files") is True
    assert state_drifted(state, ["packages", "files"]) is True
    assert state_drifted(state, ["files"], names=["/dev/kfd"]) is False
    assert state_drifted(state, ["files"], names=["/etc/slurm/slurm.conf"]) is True
    assert state_drifted({"in_sync": True, "drift": [], "drift_items": []}, ["packages"]) is False


def test_state_drifted_without_a_check_counts_as_drifted():
    # a skipped check (fast path off), no result at all, a result of another module
    for state in ({"skipped": True, "changed": False}, None, {}, "", {"drift_items": None}):
        assert state_drifted(state, ["packages"]) is True


def test_state_drifted_refuses_unknown_kinds():
    with pytest.raises(ManagedStateError, match="not \\['package'\\]"):
        state_drifted({"drift_items": []}, ["package"])
    with pytest.raises(ManagedStateError, match="not none"):
        state_drifted({"drift_items": []}, [])


# --- databases and read-only commands ----------------------------------------------------------------

# LANG=C mysql -N -B -e "SHOW GRANTS FOR 'slurm'@'localhost'" on the lab's controller (Debian 13,
# MariaDB 11.8.9, the user as community.mysql.mysql_user made it; the lab's password is
# lab-only-accounting-password, inventories/lab/group_vars/cluster.yml): CAPTURED, real output.
GRANTS = ("GRANT USAGE ON *.* TO `slurm`@`localhost` IDENTIFIED BY PASSWORD '*0E1910684955E6220E316099BA7528A02852DB91'\n"
          "GRANT ALL PRIVILEGES ON `slurm_acct_db`.* TO `slurm`@`localhost`\n")
LAB_USER = {"name": "slurm", "host": "localhost", "password": "lab-only-accounting-password", "priv": "slurm_acct_db.*:ALL"}


def test_mysql_native_hash_is_the_one_mariadb_stored():
    assert mysql_native_hash("lab-only-accounting-password") == "*0E1910684955E6220E316099BA7528A02852DB91"


def test_show_grants_parsed():
    seen = parse_show_grants(GRANTS)
    assert seen == {"hash": "*0E1910684955E6220E316099BA7528A02852DB91", "other_auth": False,
                    "grants": {"slurm_acct_db.*": frozenset(["ALL PRIVILEGES"])}, "grant_option": []}
    # another plugin (MariaDB's documented form), a second object, the grant option
    other = parse_show_grants("GRANT USAGE ON *.* TO `a`@`%` IDENTIFIED VIA ed25519 USING 'xyz'\n"
                              "GRANT SELECT, INSERT ON `db`.`t` TO `a`@`%` WITH GRANT OPTION\n")
    assert other["other_auth"] is True and other["hash"] is None
    assert other["grants"] == {"db.t": frozenset(["SELECT", "INSERT"])} and other["grant_option"] == ["db.t"]
    with pytest.raises(ManagedStateError, match="not GRANT"):
        parse_show_grants("GRANT `role1` TO `a`@`%`\n")


def test_priv_strings_as_mysql_user_reads_them():
    assert parse_priv("slurm_acct_db.*:ALL") == {"slurm_acct_db.*": frozenset(["ALL PRIVILEGES"])}
    assert parse_priv("a.*:SELECT,insert/*.*:USAGE") == {"a.*": frozenset(["SELECT", "INSERT"])}
    assert parse_priv("") == {}
    with pytest.raises(ManagedStateError, match="object:privileges"):
        parse_priv("nocolon")


def test_mysql_user_in_sync_and_each_drift():
    assert mysql_user_drift(LAB_USER, GRANTS) == []
    assert mysql_user_drift(LAB_USER, None) == ["mysql user slurm@localhost: missing"]
    changed = dict(LAB_USER, password="another")
    assert mysql_user_drift(changed, GRANTS) == ["mysql user slurm@localhost: password differs"]
    assert "another" not in str(mysql_user_drift(changed, GRANTS))
    # a privilege taken away by hand, one added by hand, the grant option
    assert mysql_user_drift(LAB_USER, GRANTS.splitlines()[0]) == [
        "mysql user slurm@localhost: privileges none, expected slurm_acct_db.*:ALL PRIVILEGES"]
    extra = GRANTS + "GRANT SELECT ON `mysql`.* TO `slurm`@`localhost` WITH GRANT OPTION\n"
    assert mysql_user_drift(LAB_USER, extra) == [
        "mysql user slurm@localhost: privileges mysql.*:SELECT; slurm_acct_db.*:ALL PRIVILEGES, expected slurm_acct_db.*:ALL PRIVILEGES",
        "mysql user slurm@localhost: WITH GRANT OPTION on mysql.*, not asked"]
    # a user of another plugin is drift: only mysql_user knows what it would do
    assert mysql_user_drift(LAB_USER, GRANTS.replace("IDENTIFIED BY PASSWORD '*0E1910684955E6220E316099BA7528A02852DB91'",
                                                     "IDENTIFIED VIA unix_socket")) == [
        "mysql user slurm@localhost: authenticated by another plugin than mysql_native_password"]
    # without a password to compare, only the privileges count
    assert mysql_user_drift({"name": "slurm", "priv": "slurm_acct_db.*:ALL"}, GRANTS) == []
    # what kept the grants from being read, named for the user (the module passes it)
    assert mysql_user_drift(LAB_USER, None, error="cannot be read: ERROR 2002") == ["mysql user slurm@localhost: cannot be read: ERROR 2002"]
    assert mysql_user_drift(LAB_USER, "garbage\n") == ["mysql user slurm@localhost: SHOW GRANTS: a line that is not GRANT ... ON ... TO: 'garbage'"]


def test_databases_and_commands():
    assert mysql_database_drift({"name": "slurm_acct_db"}, {"mysql", "slurm_acct_db"}) == []
    assert mysql_database_drift({"name": "slurm_acct_db"}, {"mysql"}) == ["mysql database slurm_acct_db: missing"]
    assert mysql_database_drift({"name": "slurm_acct_db"}, None) == ["mysql database slurm_acct_db: the server does not answer"]
    assert mysql_database_drift({"name": "slurm_acct_db"}, None, error="no client") == ["mysql database slurm_acct_db: no client"]
    ping = {"name": "slurmctld answers", "argv": ["scontrol", "ping"], "rc": 0, "stdout_regex": r"is UP"}
    # scontrol ping on the lab's controller (Slurm 24.11, Debian 13): CAPTURED
    assert command_drift(ping, 0, "Slurmctld(primary) at ctl1 is UP\n") == []
    assert command_drift(ping, 1, "Slurmctld(primary) at ctl1 is DOWN\n") == ["command slurmctld answers: exit status 1, expected 0"]
    assert command_drift(ping, 0, "Slurmctld(primary) at ctl1 is DOWN\n") == ["command slurmctld answers: no output line matches is UP"]
    assert command_drift(ping, None, "") == ["command slurmctld answers: scontrol not found"]
    listed = {"name": "cluster lab registered", "argv": ["sacctmgr"], "stdout_regex": "^lab$"}
    assert command_drift(listed, 0, "other\nlab\n") == [] and command_drift(listed, 0, "lab2\n") != []
    assert drift_record("commands", ping, ["x"], False)["name"] == "slurmctld answers"


def test_one_file_item_spec_then_each_module_s_own_keys():
    check = file_item_options(["file", "present"])
    write = file_item_options(["file"], backup=dict(type="bool", default=False))
    common = ["path", "state", "content", "checksum", "owner", "group", "mode"]
    assert list(check) == common and list(write) == common + ["backup"]
    assert check["state"] == {"type": "str", "choices": ["file", "present"], "default": "file"}
    assert check["path"] == write["path"] == {"type": "path", "required": True}
    # mode is raw in both: an int (an unquoted YAML 0644) reaches each module as the int, read by _file_attributes
    assert check["mode"] == write["mode"] == {"type": "raw"}
    # each call makes its own dicts: one module's spec cannot change the other's
    check["path"]["required"] = False
    assert write["path"]["required"] is True


# A munge that runs with the key it read when it started, and one whose key file was written after it started (a run
# that stopped between writing the key and restarting munge). The times are those of the capture below; the drift is
# decided by the key file's modification time against the start systemd keeps (monotonic), read with both clocks.
def _munge(mtime, clocks=CAPTURE_CLOCKS, seen=None):
    item = {"name": "munge", "started": True, "enabled": True, "restart_after": ["/etc/munge/munge.key"]}
    return service_drift(item, seen or parse_systemctl_show(SYSTEMCTL_STARTED, ["munge"])["munge"],
                         {"/etc/munge/munge.key": mtime}, clocks)


def test_the_start_time_is_systemds_monotonic_one_in_wall_clock_time():
    seen = parse_systemctl_show(SYSTEMCTL_STARTED, ["munge"])["munge"]
    assert service_started_at(seen, *CAPTURE_CLOCKS) == pytest.approx(CAPTURE_STARTED, abs=1e-3)
    assert service_started_at({"ActiveEnterTimestampMonotonic": "0"}, *CAPTURE_CLOCKS) is None
    assert service_started_at({}, *CAPTURE_CLOCKS) is None
    with pytest.raises(ManagedStateError, match="ActiveEnterTimestampMonotonic='soon' is not a number"):
        service_started_at({"ActiveEnterTimestampMonotonic": "soon"}, *CAPTURE_CLOCKS)


def test_a_service_started_before_its_file_was_written_runs_with_the_old_one():
    assert _munge(CAPTURE_KEY_MTIME) == []                       # the capture: key written, then munge started
    assert _munge(CAPTURE_STARTED + 60) == [
        "service munge: running since before /etc/munge/munge.key changed, expected restarted"]
    assert _munge(CAPTURE_STARTED + 1.5) == []                   # inside the slack of the two clocks' reading
    assert _munge(None) == []                                    # no key file: nothing to compare
    assert _munge(CAPTURE_STARTED + 60, clocks=None) == []       # no clocks read: not compared


def test_a_stopped_service_is_not_started_and_not_also_stale():
    stopped = {"LoadState": "loaded", "ActiveState": "inactive", "UnitFileState": "enabled", "ActiveEnterTimestampMonotonic": "0"}
    assert _munge(CAPTURE_STARTED + 60, seen=stopped) == ["service munge: inactive, expected started"]
