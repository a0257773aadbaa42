# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""slurm_controller's preflight refuses a database password slurmdbd.conf cannot hold: Slurm's
parse_config (src/common/parse_config.c) ends StoragePass at an unescaped '#' (a comment), at white
space (an unquoted value), drops a backslash (an escape) and reads a leading double quote as a
quoted value, while MariaDB gets the whole password. The message names the variable, never the
value (no_log)."""
import json

import pytest

MESSAGE = ("slurm_controller_db_password contains a character slurmdbd.conf cannot hold in StoragePass "
           "(#, white space, backslash or double quote): slurmdbd would not read it as given")


@pytest.mark.parametrize("password", ["Xy#7 q=z", "Secret#1", "two words", "tab\there", "back\\slash",
                                      'quo"te', '"quoted"', "trailing "])
def test_a_password_slurmdbd_reads_otherwise_is_refused(run_playbook, password):
    result = run_playbook("tests/harness/playbooks/slurm_db_password.yml", "-v",
                          "-e", json.dumps({"slurm_controller_db_password": password}))
    out = result.stdout + result.stderr
    assert result.returncode != 0, out
    assert MESSAGE in " ".join(out.split()), out
    assert "preflight passed" not in out
    assert password not in out and password.strip() not in out, "the password is in the output"


@pytest.mark.parametrize("password", ["Xy7_q=z!$%^&*()'.,;:", "s3cr3t-Pass"])
def test_a_password_slurmdbd_reads_whole_passes(run_playbook, password):
    result = run_playbook("tests/harness/playbooks/slurm_db_password.yml",
                          "-e", json.dumps({"slurm_controller_db_password": password}))
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "preflight passed" in out


def test_without_accounting_the_password_is_not_read(run_playbook):
    result = run_playbook("tests/harness/playbooks/slurm_db_password.yml",
                          "-e", json.dumps({"slurm_controller_db_password": "a#b", "slurm_common_accounting": False}))
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "preflight passed" in out
