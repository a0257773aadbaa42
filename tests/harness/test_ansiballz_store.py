# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Module payloads kept between runs by gpucluster.training.preload, in real ansible-playbook runs:
the second run uses the payload the first built, and a run after a module_utils file changed runs
the changed code (the stored payload is refused, naming the file), never the stored one."""
import re

from conftest import ROOT

MODULE = '''#!/usr/bin/python
from ansible.module_utils.basic import AnsibleModule
from ansible_collections.probe.store.plugins.module_utils.value import VALUE


def main():
    AnsibleModule(argument_spec={}).exit_json(changed=False, value=VALUE)


if __name__ == "__main__":
    main()
'''

PLAYBOOK = '''- hosts: localhost
  gather_facts: false
  tasks:
    - probe.store.answer:
      register: answer
    - ansible.builtin.debug:
        msg: "value={{ answer.value }}"
'''


def test_a_stored_payload_is_used_until_a_file_in_it_changes(run_playbook, tmp_path):
    collection = tmp_path / "collections" / "ansible_collections" / "probe" / "store"
    (collection / "plugins" / "modules").mkdir(parents=True)
    (collection / "plugins" / "module_utils").mkdir()
    (collection / "galaxy.yml").write_text("namespace: probe\nname: store\nversion: 1.0.0\nauthors: [t]\nreadme: README.md\n")
    (collection / "plugins" / "modules" / "answer.py").write_text(MODULE)
    (collection / "plugins" / "module_utils" / "value.py").write_text("VALUE = 1\n")
    (tmp_path / "play.yml").write_text(PLAYBOOK)
    env = {"GPUCLUSTER_ANSIBALLZ_STORE_DIR": str(tmp_path / "store"),
           "ANSIBLE_COLLECTIONS_PATH": "%s:%s" % (tmp_path / "collections", ROOT / ".tmp" / "collections")}

    def run():
        result = run_playbook(str(tmp_path / "play.yml"), "-i", "localhost,", "-c", "local", "-vvv",
                              "-e", "ansible_python_interpreter={{ ansible_playbook_python }}", extra_env=env)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr
        return result.stdout, re.findall(r'"msg": "value=(\d+)"', result.stdout)

    out, values = run()
    assert values == ["1"] and "preload: 0 stored module payload(s) current" in out
    stored = sorted(p.name for p in (tmp_path / "store").glob("*/*") if not p.name.endswith(".sources.json"))
    assert "ansible_collections.probe.store.plugins.modules.answer-ZIP_DEFLATED-none" in stored, stored

    out, values = run()
    assert values == ["1"] and "preload: %d stored module payload(s) current\n" % len(stored) in out, out[:2000]

    (collection / "plugins" / "module_utils" / "value.py").write_text("VALUE = 2\n")
    out, values = run()
    assert values == ["2"], out[-2000:]
    assert ("ansible_collections.probe.store.plugins.modules.answer-ZIP_DEFLATED-none not used: changed since stored: "
            "ansible_collections/probe/store/plugins/module_utils/value.py") in out

    out, values = run()  # the payload of the changed file was stored in its place
    assert values == ["2"] and "preload: %d stored module payload(s) current\n" % len(stored) in out
