# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Compiled templates kept between runs by gpucluster.training.preload, in real ansible-playbook
runs: the second run compiles nothing it compiled before, and a filter plugin changed between the
runs is called as it is now (the kept code names the filter, it holds no result of it), as is a
changed template source."""
import re

from conftest import ROOT

FILTER = '''
def stamp(value):
    return "%s-{version}" % value


class FilterModule:
    def filters(self):
        return {{"stamp": stamp}}
'''

PLAYBOOK = '''- hosts: localhost
  gather_facts: false
  vars:
    word: a
  tasks:
    - ansible.builtin.debug:
        msg: "value={{{{ word | probe.jinja.stamp }}}}{suffix}"
      when: word | length > 0
'''


def test_kept_code_is_reused_and_plugins_and_sources_are_taken_as_they_are_now(run_playbook, tmp_path):
    collection = tmp_path / "collections" / "ansible_collections" / "probe" / "jinja"
    (collection / "plugins" / "filter").mkdir(parents=True)
    (collection / "galaxy.yml").write_text("namespace: probe\nname: jinja\nversion: 1.0.0\nauthors: [t]\nreadme: README.md\n")
    env = {"GPUCLUSTER_COMPILE_CACHE_STORE_DIR": str(tmp_path / "kept"),
           "ANSIBLE_COLLECTIONS_PATH": "%s:%s" % (tmp_path / "collections", ROOT / ".tmp" / "collections")}

    def run(version, suffix=""):
        (collection / "plugins" / "filter" / "stamp.py").write_text(FILTER.format(version=version))
        (tmp_path / "play.yml").write_text(PLAYBOOK.format(suffix=suffix))
        result = run_playbook(str(tmp_path / "play.yml"), "-i", "localhost,", "-c", "local", "-vvv", extra_env=env)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr
        counts = re.findall(r"preload: templates in ansible-playbook's own process: (\d+) compiled code\(s\) reused, (\d+) compiled",
                            result.stdout)
        assert len(counts) == 1, result.stdout[-3000:]
        return re.findall(r'"msg": "value=([\w-]+)"', result.stdout), [int(n) for n in counts[0]]

    values, (_reused, compiled) = run(1)
    assert values == ["a-1"] and compiled > 0
    kept = list((tmp_path / "kept").glob("*/*"))
    assert len(kept) >= compiled

    values, (reused, compiled) = run(2)  # the filter changed: its new code runs, from kept compiled templates
    assert values == ["a-2"] and reused > 0 and compiled == 0

    values, (_reused, compiled) = run(2, suffix="-c")  # a changed source is compiled
    assert values == ["a-2-c"] and compiled > 0
