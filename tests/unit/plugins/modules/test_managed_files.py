# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""managed_files: a role's files and directories written in one call, on files under tmp_path."""

from __future__ import annotations

import base64
import os

from ansible_collections.gpucluster.training.plugins.modules import managed_files
from ansible_collections.gpucluster.training.tests.unit.plugins.modules.module_harness import Exit, Fail, exits, run_main  # noqa: F401  pylint: disable=unused-import

CONF = "SlurmctldHost=ctl1\nClusterName=lab\n"


def _items(tmp_path, content=CONF, **extra):
    return [{"path": str(tmp_path / "etc"), "state": "directory", "mode": "0755"},
            dict({"path": str(tmp_path / "etc" / "slurm.conf"), "content": content, "mode": "0644", "name": "slurm.conf"}, **extra)]


def _mode(path):
    return "%04o" % (os.stat(path).st_mode & 0o7777)


def test_writes_in_order_then_changes_nothing(tmp_path):
    result = run_main(managed_files.main, {"files": _items(tmp_path)})
    conf = tmp_path / "etc" / "slurm.conf"
    assert result["changed"] and result["changed_paths"] == [str(tmp_path / "etc"), str(conf)]
    assert result["changed_names"] == ["slurm.conf"] and result["msg"] == "2 of 2 item(s) changed"
    assert conf.read_text(encoding="utf-8") == CONF and _mode(conf) == "0644" and _mode(tmp_path / "etc") == "0755"
    # no temporary file left beside it
    assert os.listdir(tmp_path / "etc") == ["slurm.conf"]
    again = run_main(managed_files.main, {"files": _items(tmp_path)})
    assert not again["changed"] and again["changed_paths"] == [] and again["msg"] == "0 of 2 item(s) changed"


def test_a_mode_alone_is_a_change(tmp_path):
    run_main(managed_files.main, {"files": _items(tmp_path)})
    os.chmod(tmp_path / "etc" / "slurm.conf", 0o600)
    result = run_main(managed_files.main, {"files": _items(tmp_path), "_ansible_diff": True})
    assert result["changed_paths"] == [str(tmp_path / "etc" / "slurm.conf")]
    assert {"before": {"path": str(tmp_path / "etc" / "slurm.conf"), "mode": "0600"},
            "after": {"path": str(tmp_path / "etc" / "slurm.conf"), "mode": "0644"}} in result["diff"]
    assert _mode(tmp_path / "etc" / "slurm.conf") == "0644"


def test_check_mode_writes_nothing_and_shows_the_diff(tmp_path):
    result = run_main(managed_files.main, {"files": _items(tmp_path), "_ansible_check_mode": True, "_ansible_diff": True})
    assert result["changed"] and len(result["changed_paths"]) == 2
    assert not (tmp_path / "etc").exists()
    assert {"before_header": str(tmp_path / "etc" / "slurm.conf"), "after_header": str(tmp_path / "etc" / "slurm.conf"),
            "before": "", "after": CONF} in result["diff"]


def test_a_secret_shows_no_content_in_the_diff(tmp_path):
    result = run_main(managed_files.main, {"files": _items(tmp_path, content="StoragePass=s3cret\n", diff=False), "_ansible_diff": True})
    assert "s3cret" not in repr(result)


KEY = bytes(range(256)) * 4  # a binary key of 1024 bytes, not UTF-8


def test_a_binary_key_is_written_by_its_bytes_and_never_shown(tmp_path):
    key = tmp_path / "munge.key"
    item = {"path": str(key), "content_base64": base64.b64encode(KEY).decode(), "mode": "0400", "checksum": "ignored"}
    result = run_main(managed_files.main, {"files": [item], "_ansible_diff": True})
    assert result["changed_paths"] == [str(key)] and key.read_bytes() == KEY and _mode(key) == "0400"
    assert {"before_header": str(key), "after_header": str(key), "before": "", "after": "(content hidden: content_base64)"} in result["diff"]
    assert item["content_base64"] not in repr(result)
    assert not run_main(managed_files.main, {"files": [item]})["changed"]
    # a new key replaces the old one by its bytes
    item["content_base64"] = base64.b64encode(KEY[::-1]).decode()
    assert run_main(managed_files.main, {"files": [item]})["changed_paths"] == [str(key)] and key.read_bytes() == KEY[::-1]


def test_a_new_file_with_a_mode_is_never_readable_by_others(tmp_path, monkeypatch):
    # what atomic_move leaves at the path, before the item's mode is set
    seen = []
    real = managed_files.AnsibleModule.atomic_move

    def spy(self, src, dest, *args, **kwargs):
        real(self, src, dest, *args, **kwargs)
        seen.append(_mode(dest))
    monkeypatch.setattr(managed_files.AnsibleModule, "atomic_move", spy)
    old = os.umask(0o022)
    try:
        run_main(managed_files.main, {"files": [{"path": str(tmp_path / "slurmdbd.conf"), "content": "StoragePass=x\n", "mode": "0600"},
                                                {"path": str(tmp_path / "motd"), "content": "hello\n"}]})
        assert os.umask(0o022) == 0o022  # the process's umask is put back
    finally:
        os.umask(old)
    # the file with a mode was the writer's alone; the file without one is created as copy creates it
    assert seen == ["0600", "0644"] and _mode(tmp_path / "slurmdbd.conf") == "0600"


def test_validation_refuses_and_keeps_the_old_file(tmp_path):
    run_main(managed_files.main, {"files": _items(tmp_path)})
    conf = tmp_path / "etc" / "slurm.conf"
    result = run_main(managed_files.main, {"files": _items(tmp_path, content="NodeName=\n", validate="grep -q ClusterName= %s")},
                      expect=Fail)
    assert result["msg"].startswith("%s: the new file was refused by 'grep -q ClusterName= %%s' (exit status 1)" % conf), result
    assert "the old file is left in place (1 item(s) before it were handled: none changed)" in result["msg"]
    assert conf.read_text(encoding="utf-8") == CONF and os.listdir(tmp_path / "etc") == ["slurm.conf"]
    accepted = run_main(managed_files.main, {"files": _items(tmp_path, content=CONF + "# more\n", validate="grep -q ClusterName= %s")})
    assert accepted["changed_paths"] == [str(conf)] and conf.read_text(encoding="utf-8").endswith("# more\n")


def test_backup_keeps_the_old_file(tmp_path):
    run_main(managed_files.main, {"files": _items(tmp_path)})
    result = run_main(managed_files.main, {"files": _items(tmp_path, content=CONF + "# new\n", backup=True)})
    (backup,) = result["backups"].values()
    with open(backup, encoding="utf-8") as handle:
        assert handle.read() == CONF
    # nothing to back up when the file is new or unchanged
    assert run_main(managed_files.main, {"files": _items(tmp_path, content=CONF + "# new\n", backup=True)})["backups"] == {}


def test_absent_removes_once(tmp_path):
    old = tmp_path / "gpucluster-node-facts.json"
    old.write_text("{}", encoding="utf-8")
    items = [{"path": str(old), "state": "absent"}]
    assert run_main(managed_files.main, {"files": items})["changed_paths"] == [str(old)] and not old.exists()
    assert not run_main(managed_files.main, {"files": items})["changed"]


def test_items_that_mean_nothing_fail_before_anything_is_written(tmp_path):
    bad = [
        ({"path": "etc/x", "content": "x"}, "path must be absolute"),
        ({"path": str(tmp_path / "x")}, "state=file needs content or content_base64 (one of them)"),
        ({"path": str(tmp_path / "x"), "content": "x", "content_base64": "eA=="}, "needs content or content_base64 (one of them)"),
        ({"path": str(tmp_path / "x"), "content_base64": "not base64!"}, "content_base64 is not base64"),
        ({"path": str(tmp_path / "d"), "state": "directory", "content": "x"}, "content, content_base64, validate and backup are for state=file only"),
        ({"path": str(tmp_path / "x"), "content": "x", "validate": "slurmd -C"}, "validate must contain %s"),
        ({"path": str(tmp_path / "x"), "content": "x", "mode": "u+q"}, "mode 'u+q' is not octal or symbolic"),
        ({"path": str(tmp_path / "x"), "content": "x", "group": "-1"}, "group '-1' is not a name or a numeric id"),
    ]
    for item, message in bad:
        result = run_main(managed_files.main, {"files": _items(tmp_path) + [item]}, expect=Fail)
        assert message in result["msg"], result
        assert not (tmp_path / "etc").exists()


def test_a_directory_where_a_file_belongs_fails_naming_it(tmp_path):
    (tmp_path / "etc" / "slurm.conf").mkdir(parents=True)
    result = run_main(managed_files.main, {"files": _items(tmp_path)}, expect=Fail)
    assert result["msg"].startswith("%s: a directory, expected a file" % (tmp_path / "etc" / "slurm.conf")), result


def test_a_file_where_a_directory_belongs_fails_naming_it(tmp_path):
    (tmp_path / "etc").write_text("", encoding="utf-8")
    result = run_main(managed_files.main, {"files": _items(tmp_path)}, expect=Fail)
    assert result["msg"].startswith("%s exists and is not a directory" % (tmp_path / "etc")), result
