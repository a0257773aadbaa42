# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of the managed_state module: files under tmp_path, the tools' output replayed (the
captures of tests/unit/plugins/module_utils/test__managed_state.py)."""

from __future__ import annotations

import grp
import hashlib
import os
import pwd

import pytest
from ansible.module_utils import basic

from ansible_collections.gpucluster.training.plugins.modules import managed_state
from ansible_collections.gpucluster.training.tests.unit.plugins.module_utils.test__managed_state import DPKG, SYSTEMCTL
from ansible_collections.gpucluster.training.tests.unit.plugins.modules.module_harness import Exit, Fail, exits, run_main  # noqa: F401  pylint: disable=unused-import

# the captured blocks by unit (systemctl prints one per unit asked, in that order)
BLOCKS = dict((b.split("\n", 1)[0][3:], b.strip("\n") + "\n") for b in SYSTEMCTL.split("\n\n"))
ME = pwd.getpwuid(os.getuid())[0]
MY_GROUP = grp.getgrgid(os.getgid())[0]


@pytest.fixture
def tools(monkeypatch):
    """dpkg-query and systemctl answer with the captures; the calls are recorded."""
    calls = []

    def run_command(self, args, **kwargs):
        calls.append((args, kwargs.get("environ_update")))
        if "dpkg-query" in args[0]:
            return 1, DPKG, "dpkg-query: no packages found matching slurmd\n"
        units = args[args.index("--") + 1:]
        return 0, "\n".join(BLOCKS[u if u.endswith(".service") else u + ".service"] for u in units), ""

    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: "/usr/bin/" + name)
    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    return calls


def test_in_sync_and_drift_in_one_call(tmp_path, tools):
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=lab\n")
    conf.chmod(0o644)
    key = tmp_path / "munge.key"
    key.write_bytes(b"\x00\xff secret bytes")
    key.chmod(0o400)
    args = {
        "files": [
            {"path": str(conf), "content": "ClusterName=lab\n", "owner": ME, "group": MY_GROUP, "mode": "0644"},
            {"path": str(key), "checksum": hashlib.sha1(b"\x00\xff secret bytes").hexdigest(), "mode": "0400"},
            {"path": str(tmp_path), "state": "directory"},
            {"path": str(tmp_path / "gone"), "state": "absent"},
        ],
        "packages": [{"name": "numactl"}, {"name": "chrony"}],
        "services": [{"name": "chrony", "started": True, "enabled": True}],
        "_ansible_check_mode": True,
    }
    result = run_main(managed_state.main, args)
    assert result["in_sync"] is True and result["drift"] == [] and result["changed"] is False
    assert result["checked"]["files"] == 4
    # one package query and one systemctl call, both with LANG=C
    assert [c[0][0] for c in tools] == ["/usr/bin/dpkg-query", "/usr/bin/systemctl"]
    assert all(c[1]["LANG"] == "C" for c in tools)
    assert tools[0][0][-2:] == ["chrony", "numactl"]

    conf.write_text("ClusterName=lab\nSlurmctldDebug=debug5\n")
    args["files"][1]["checksum"] = "0" * 40
    args["packages"].append({"name": "slurmd"})
    args["services"] = [{"name": "chrony", "started": True}, {"name": "munge", "started": True}, {"name": "nosuch.service"}]
    result = run_main(managed_state.main, args)
    assert result["in_sync"] is False
    assert result["drift"] == ["%s: content differs" % conf, "%s: content differs" % key,
                               "package slurmd: not installed", "service munge: no such unit",
                               "service nosuch.service: no such unit"]
    # the same drift by item: kind, name, whether the item is missing
    assert [(r["kind"], r["name"], r["missing"]) for r in result["drift_items"]] == [
        ("files", str(conf), False), ("files", str(key), False), ("packages", "slurmd", True),
        ("services", "munge", True), ("services", "nosuch.service", True)]
    assert [line for r in result["drift_items"] for line in r["drift"]] == result["drift"]
    assert "secret" not in str(result)


def test_lines_blocks_sysctls_accounts(tmp_path, tools):
    pam = tmp_path / "sshd"
    pam.write_text("@include common-account\n")
    hosts = tmp_path / "hosts"
    hosts.write_text("# BEGIN m\n10.0.0.1 a\n# END m\n")
    sysctl = tmp_path / "60.conf"
    sysctl.write_text("kernel.numa_balancing=0\n")
    result = run_main(managed_state.main, {
        "lines": [{"path": str(pam), "regexp": "pam_slurm_adopt", "line": "-account required pam_slurm_adopt.so"}],
        "blocks": [{"path": str(hosts), "marker": "# {mark} m", "block": "10.0.0.1 a\n"}],
        "sysctls": [{"name": "kernel.numa_balancing", "value": "0", "path": str(sysctl)}],
        "users": [{"name": ME, "uid": os.getuid()}, {"name": "no-such-user-gpucluster"}],
        "groups": [{"name": MY_GROUP, "gid": os.getgid()}],
    })
    assert result["drift"] == ["%s: line '-account required pam_slurm_adopt.so' missing" % pam, "user no-such-user-gpucluster: missing"]
    assert [(r["kind"], r["missing"]) for r in result["drift_items"]] == [("lines", False), ("users", True)]
    assert result["found"] == {"groups": {MY_GROUP: os.getgid()}, "commands": {}}
    assert tools == []  # no package or service asked: no tool run


def test_groups_only_read_with_state_query(tmp_path):
    """The gids of groups asked with state query come back; one the host does not have is no drift."""
    result = run_main(managed_state.main, {
        "files": [{"path": str(tmp_path), "state": "present"}, {"path": str(tmp_path / "kfd"), "state": "present"}],
        "groups": [{"name": MY_GROUP, "state": "query"}, {"name": "no-such-group-gpucluster", "state": "query"}],
    })
    assert result["found"] == {"groups": {MY_GROUP: os.getgid()}, "commands": {}}
    assert result["drift_items"] == [{"kind": "files", "name": str(tmp_path / "kfd"), "missing": True,
                                      "drift": ["%s: missing" % (tmp_path / "kfd")]}]
    # asked as present, the same missing group is drift
    result = run_main(managed_state.main, {"groups": [{"name": "no-such-group-gpucluster"}]})
    assert result["drift_items"] == [{"kind": "groups", "name": "no-such-group-gpucluster", "missing": True,
                                      "drift": ["group no-such-group-gpucluster: missing"]}]
    assert result["found"] == {"groups": {}, "commands": {}} and result["in_sync"] is False


def test_query_with_a_gid_is_refused():
    result = run_main(managed_state.main, {"groups": [{"name": "video", "gid": 44, "state": "query"}]}, expect=Fail)
    assert "state query only reads the gid" in result["msg"]


def test_tool_output_it_cannot_read_fails_cleanly(monkeypatch):
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: "/usr/bin/" + name)
    monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda self, args, **kw: (0, "Id=x.service\n", ""))
    result = run_main(managed_state.main, {"services": [{"name": "x", "started": True}]}, expect=Fail)
    assert result["msg"] == "systemctl show: no LoadState, ActiveState, UnitFileState for unit x"


def test_bad_mode_is_refused(tmp_path):
    result = run_main(managed_state.main, {"files": [{"path": str(tmp_path), "mode": "rw-r--r--"}]}, expect=Fail)
    assert result["msg"] == "files: %s: mode 'rw-r--r--' is not octal or symbolic (bad symbolic permission for mode: rw-r--r--)" % tmp_path
    result = run_main(managed_state.main, {"files": [{"path": str(tmp_path), "owner": "-1"}]}, expect=Fail)
    assert result["msg"] == "files: %s: owner '-1' is not a name or a numeric id (ids are 0 or more)" % tmp_path


def test_databases_users_and_commands_in_the_same_call(monkeypatch):
    """One SHOW DATABASES per socket, one SHOW GRANTS per user, each command under timeout with LANG=C;
    the password is in no result and no drift line."""
    from ansible_collections.gpucluster.training.tests.unit.plugins.module_utils.test__managed_state import GRANTS, LAB_USER
    calls = []

    def run_command(self, args, **kwargs):
        calls.append((args, kwargs.get("environ_update")))
        if args[0].endswith("mariadb") and args[-1] == "SHOW DATABASES":
            return 0, "information_schema\nmysql\nslurm_acct_db\n", ""
        if args[0].endswith("mariadb") and "'slurm'@'localhost'" in args[-1]:
            return 0, GRANTS, ""
        if args[0].endswith("mariadb"):
            return 1, "", "ERROR 1141 (42000) at line 1: There is no such grant defined for user 'nobody' on host 'localhost'\n"
        if "scontrol" in args[3]:
            return 0, "Slurmctld(primary) at ctl1 is UP\n", ""
        return 0, "other\n", ""

    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: "/usr/bin/" + name)
    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    result = run_main(managed_state.main, {
        "mysql_databases": [{"name": "slurm_acct_db"}, {"name": "gone"}],
        "mysql_users": [LAB_USER, {"name": "nobody", "priv": "x.*:ALL"}],
        "commands": [{"name": "slurmctld answers", "argv": ["scontrol", "ping"], "stdout_regex": "is UP"},
                     {"name": "cluster lab registered", "argv": ["sacctmgr", "-n", "list", "cluster"], "stdout_regex": "^lab$", "timeout": 5}],
    })
    assert result["drift"] == ["mysql database gone: missing", "mysql user nobody@localhost: missing",
                               "command cluster lab registered: no output line matches ^lab$"]
    assert [(r["kind"], r["name"], r["missing"]) for r in result["drift_items"]] == [
        ("mysql_databases", "gone", True), ("mysql_users", "nobody", True), ("commands", "cluster lab registered", False)]
    assert result["checked"]["mysql_users"] == 2 and result["checked"]["commands"] == 2
    assert [c[0][-1] for c in calls[:3]] == ["SHOW DATABASES", "SHOW GRANTS FOR 'slurm'@'localhost'", "SHOW GRANTS FOR 'nobody'@'localhost'"]
    assert calls[0][0][:2] == ["/usr/bin/mariadb", "--protocol=socket"] and "--socket=/run/mysqld/mysqld.sock" in calls[0][0]
    assert calls[3][0] == ["/usr/bin/timeout", "--kill-after=2", "10", "/usr/bin/scontrol", "ping"]
    assert calls[4][0][2] == "5"
    assert all(c[1]["LANG"] == "C" for c in calls)
    assert "lab-only-accounting-password" not in str(result)
    # what each command printed, for a caller that reads more than the regular expression
    assert result["found"]["commands"] == {"slurmctld answers": {"rc": 0, "stdout": "Slurmctld(primary) at ctl1 is UP\n"},
                                           "cluster lab registered": {"rc": 0, "stdout": "other\n"}}


def test_no_database_client_is_drift_and_a_command_needs_argv(monkeypatch):
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: None)
    result = run_main(managed_state.main, {"mysql_databases": [{"name": "db"}], "mysql_users": [{"name": "u"}],
                                           "commands": [{"name": "x", "argv": ["scontrol", "ping"]}]})
    assert result["drift"] == ["mysql database db: no mariadb or mysql client", "mysql user u@localhost: no mariadb or mysql client",
                               "command x: scontrol not found"]
    assert result["found"]["commands"] == {"x": {"rc": None, "stdout": ""}}
    result = run_main(managed_state.main, {"commands": [{"name": "x", "argv": []}]}, expect=Fail)
    assert "argv must name a command" in result["msg"]
