# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The size slurm_common gives a munge key in base64, the one figure its preflight (the inventory's
key) and tasks/munge.yml (the controller's) check against munge's 32 to 1024 bytes. A key pasted
as base64 prints it, wrapped at 76 columns, counts as its bytes: before, the line breaks counted,
and a 1024-byte key was refused as 1037 bytes."""

import base64
import json
import os

import pytest


@pytest.mark.parametrize("size, wrapped", [(32, False), (1024, False), (1024, True), (1025, True), (31, True)])
def test_key_size_is_its_bytes(run_playbook, size, wrapped):
    key = os.urandom(size)
    text = base64.encodebytes(key).decode() if wrapped else base64.b64encode(key).decode()
    assert ("\n" in text.strip()) is (wrapped and size > 57)  # encodebytes wraps every 57 bytes (76 columns)
    result = run_playbook("tests/harness/playbooks/munge_key_size.yml", "-e", json.dumps({"key": text}))
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "key bytes: %d" % size in out, out
