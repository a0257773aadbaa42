# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""--check --diff of the megatron role says what it would do to the image and the container as changes. The engine
commands do not run in check mode, and a check run used to show a missing image, and a container it would create or
replace, as skipped tasks with changed=0. Real podman on this machine, a container and an image that do not exist;
check mode, so nothing is pulled or started."""
import re
import subprocess


def test_check_mode_reports_the_pull_and_the_container_it_would_create(run_playbook):
    result = run_playbook("tests/harness/playbooks/megatron_check_mode.yml", "--check", "--diff")
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "localhost: image localhost/gpucluster-harness-no-such-image:none is not on the node: would pull it" in out, out
    assert "WOULD localhost: would create and start the container gpucluster-harness-no-such-container" in out, out
    assert re.search(r"localhost\s+: ok=\d+\s+changed=2\s", out), out
    # nothing was created
    inspect = subprocess.run(["podman", "container", "exists", "gpucluster-harness-no-such-container"], check=False)
    assert inspect.returncode == 1


def test_check_mode_fails_where_the_run_would_find_no_image_to_use(run_playbook):
    result = run_playbook("tests/harness/playbooks/megatron_check_mode.yml", "--check", "-e", "image_source=present")
    out = result.stdout + result.stderr
    assert result.returncode != 0, out
    assert "image localhost/gpucluster-harness-no-such-image:none is not on localhost after nothing (megatron_image_source=present)" \
        in re.sub(r"\s+", " ", out), out
