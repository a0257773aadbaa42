# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one reader of host files (sysfs, /proc, /etc) and the one locale of the modules' tools."""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._sysfs_read import LANG_C, listdir, read_text


def test_read_text_reads_a_file(tmp_path):
    (tmp_path / "fw_ver").write_text("28.39.1002\n", encoding="utf-8")
    assert read_text(str(tmp_path / "fw_ver")) == "28.39.1002\n"


def test_read_text_missing_is_none(tmp_path):
    assert read_text(str(tmp_path / "absent")) is None
    assert read_text(str(tmp_path)) is None  # a directory


def test_read_text_undecodable_is_none_unless_escaped(tmp_path):
    """A probe treats bytes that are not UTF-8 as unreadable; a configuration file compared line by
    line keeps them, so that an operator's Latin-1 comment is drift, not an unreadable file."""
    path = tmp_path / "slurm.conf"
    path.write_bytes(b"# caf\xe9\nClusterName=lab\n")
    assert read_text(str(path)) is None
    text = read_text(str(path), escape=True)
    assert text.splitlines()[1] == "ClusterName=lab"
    assert text.encode("utf-8", errors="surrogateescape") == b"# caf\xe9\nClusterName=lab\n"


def test_listdir_sorted_or_none(tmp_path):
    for name in ("mlx5_1", "mlx5_0"):
        (tmp_path / name).mkdir()
    assert listdir(str(tmp_path)) == ["mlx5_0", "mlx5_1"]
    assert listdir(str(tmp_path / "absent")) is None


def test_lang_c_sets_every_locale_variable_the_tools_read():
    assert LANG_C == {"LANG": "C", "LC_ALL": "C", "LC_MESSAGES": "C"}
