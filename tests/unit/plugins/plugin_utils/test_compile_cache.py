# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The compile cache of gpucluster.training.preload: templates and conditionals render the same
with it as without it, from memory, from the run's directory (a later worker process) and from the
kept directory (a later run), keyed by every compile setting and release, a kept directory used only
when it is the user's own and pruned, and it stays off where it was not checked (the
whole-playbook proof is every harness run: ansible.cfg enables the callback)."""

from __future__ import annotations

import os
import sys
import time
from types import SimpleNamespace

import pytest
from ansible._internal._templating._jinja_bits import AnsibleEnvironment
from ansible.template import Templar, trust_as_template
from ansible_collections.gpucluster.training.plugins.plugin_utils import _compile_cache as cache

VARIABLES = {
    "nodes": ["gpu2", "gpu1", "gpu10"],
    "gres": {"gpu1": 8, "gpu2": 4},
    "path": "C:\\data",
    "empty": "",
}

TEMPLATES = [
    "{{ nodes | sort | join(',') }}",
    "{% for n in nodes %}{{ n }}={{ gres[n] | default(0) }}\n{% endfor %}",
    "{{ gres | dict2items | selectattr('value', 'gt', 4) | map(attribute='key') | list }}",
    "NodeName={{ nodes[0] }} Gres=gpu:{{ gres[nodes[1]] }}",
    "{{ path }} and '\\n' {{ 'a\\tb' }}",
    "{{ {'x': nodes | length, 'y': empty or 'none'} }}",
    "#jinja2:variable_start_string:'[%', variable_end_string:'%]'\n[% nodes | length %] {{ kept }}",
]

CONDITIONALS = [
    "nodes | length == 3",
    "'gpu1' in gres and gres['gpu1'] > 4",
    "path is search('data')",
    "empty | length > 0",
]


def render_all():
    templar = Templar(variables=VARIABLES)
    rendered = [templar.template(trust_as_template(t)) for t in TEMPLATES]
    decided = [templar.evaluate_conditional(trust_as_template(c)) for c in CONDITIONALS]
    return rendered, decided


@pytest.fixture
def installed(tmp_path):
    folder = cache.make_run_dir(str(tmp_path))
    assert cache.install(folder) is None
    yield folder
    cache.uninstall()


def test_templates_and_conditionals_render_the_same_with_the_cache(installed):
    cache.uninstall()
    without = render_all()
    assert cache.install(installed) is None
    first = render_all()
    assert cache.stats() == {"hits": 0, "misses": len(TEMPLATES) + len(CONDITIONALS)}
    second = render_all()
    assert cache.stats()["hits"] == len(TEMPLATES) + len(CONDITIONALS)
    assert without == first == second
    assert without[1] == [True, True, True, False]


def test_a_later_process_finds_the_code_in_the_runs_directory(installed):
    expected = render_all()
    assert len([name for name in os.listdir(installed) if not name.startswith(".")]) == len(TEMPLATES) + len(CONDITIONALS)
    cache._CACHE["memory"] = {}  # a worker process forked before these were compiled
    before = cache.stats()["hits"]
    assert render_all() == expected
    assert cache.stats()["hits"] - before == len(TEMPLATES) + len(CONDITIONALS)


def test_a_damaged_file_is_compiled_again(installed):
    expected = render_all()
    for name in os.listdir(installed):
        with open(os.path.join(installed, name), "wb") as handle:
            handle.write(b"not marshal data")
    cache._CACHE["memory"] = {}
    assert render_all() == expected


def test_every_compile_setting_is_part_of_the_key():
    env = AnsibleEnvironment()
    base = cache.settings_key(env, "template", "{{ x }}")
    assert base == cache.settings_key(AnsibleEnvironment(), "template", "{{ x }}")
    assert base != cache.settings_key(env, "expression", "{{ x }}")
    assert base != cache.settings_key(env, "template", "{{ x }} ")
    assert base != cache.settings_key(env, "template", "{{ x }}", escape_backslashes=False)
    assert base != cache.settings_key(env, "template", "{{ x }}", name="a.j2")
    assert base != cache.settings_key(env.overlay(variable_start_string="[%"), "template", "{{ x }}")
    assert base != cache.settings_key(env.overlay(trim_blocks=False), "template", "{{ x }}")
    assert cache.settings_key(env.overlay(autoescape=lambda name: True), "template", "{{ x }}") is None


def test_the_releases_of_ansible_core_jinja_and_python_are_part_of_the_key_and_the_kept_directory(monkeypatch, tmp_path):
    env = AnsibleEnvironment()
    base = cache.settings_key(env, "template", "{{ x }}")
    folder = cache.store_dir(str(tmp_path))
    monkeypatch.setattr(cache, "_RELEASES", ["2.19.99", "3.1.99"])
    assert cache.settings_key(env, "template", "{{ x }}") != base
    python = "py%d.%d" % (sys.version_info[0], sys.version_info[1])
    assert cache.store_dir(str(tmp_path)) == str(tmp_path / ("ansible-2.19.99-jinja-3.1.99-" + python))
    assert folder != cache.store_dir(str(tmp_path))


def test_a_later_run_finds_the_code_in_the_kept_directory(tmp_path):
    expected = (cache.uninstall(), render_all())[1]
    kept = cache.open_store(str(tmp_path))
    assert kept is not None and os.stat(kept).st_mode & 0o777 == 0o700
    assert cache.install(kept, keep=True) is None
    assert render_all() == expected
    assert cache.stats() == {"hits": 0, "misses": len(TEMPLATES) + len(CONDITIONALS)}
    cache.uninstall()  # the run ends: the kept directory stays
    assert len(os.listdir(kept)) == len(TEMPLATES) + len(CONDITIONALS)
    assert cache.install(cache.open_store(str(tmp_path)), keep=True) is None  # the next run
    try:
        assert render_all() == expected
        assert cache.stats() == {"hits": len(TEMPLATES) + len(CONDITIONALS), "misses": 0}
    finally:
        cache.uninstall()


def test_a_kept_directory_others_can_write_or_own_is_not_used(tmp_path):
    folder = cache.store_dir(str(tmp_path))
    os.makedirs(folder)
    os.chmod(folder, 0o777)
    assert cache.open_store(str(tmp_path)) is None
    os.chmod(folder, 0o700)
    assert cache.open_store(str(tmp_path)) == folder
    os.rmdir(folder)
    os.symlink(str(tmp_path), folder)  # a link is not the user's directory, wherever it points
    assert cache.open_store(str(tmp_path)) is None


def test_the_kept_directory_is_pruned_to_half_its_limit_oldest_first(tmp_path):
    now = time.time()
    for age in range(6):
        (tmp_path / ("entry%d" % age)).write_bytes(b"x")
        os.utime(tmp_path / ("entry%d" % age), (now - age * 60, now - age * 60))
    (tmp_path / ".old.tmp").write_bytes(b"")
    os.utime(tmp_path / ".old.tmp", (now - 7200, now - 7200))
    (tmp_path / ".writing.tmp").write_bytes(b"")
    assert cache.prune(str(tmp_path), max_entries=6, now=now) == 1  # within the limit: only the old partial write
    assert cache.prune(str(tmp_path), max_entries=4, now=now) == 4
    assert sorted(os.listdir(tmp_path)) == [".writing.tmp", "entry0", "entry1"]


def test_an_unchecked_ansible_core_is_left_alone(monkeypatch, tmp_path):
    monkeypatch.setattr(cache._ansible_release, "SUPPORTED_ANSIBLE", ("9.9.",))
    assert "not one of 9.9.x" in cache.install(str(tmp_path))
    assert "compile" not in vars(AnsibleEnvironment)
    assert render_all()[1] == [True, True, True, False]


def test_uninstall_gives_jinja_its_compile_back_and_removes_the_directory(installed):
    render_all()
    assert "compile" in vars(AnsibleEnvironment)
    cache.uninstall()
    assert "compile" not in vars(AnsibleEnvironment)
    assert not os.path.exists(installed)


def test_a_tasks_templates_and_conditions_are_compiled_before_its_workers(installed):
    task = SimpleNamespace(
        action="ansible.builtin.assert",
        args={"that": [trust_as_template(CONDITIONALS[0])], "fail_msg": trust_as_template(TEMPLATES[0])},
        vars={"nested": {"list": [trust_as_template(TEMPLATES[3]), 3, None]}},
        when=[trust_as_template(CONDITIONALS[1])],
        changed_when=[], failed_when=[], until=[], loop=None, delegate_to=None,
        _role=SimpleNamespace(_role_vars={"v": trust_as_template(TEMPLATES[2])}, _default_vars={"d": "plain"}),
        get_play=lambda: SimpleNamespace(vars={}),
    )
    assert cache.prewarm_task(task) == 5
    assert cache.prewarm_task(task) == 0  # each source once per run
    misses = cache.stats()["misses"]
    templar = Templar(variables=VARIABLES)
    assert templar.evaluate_conditional(trust_as_template(CONDITIONALS[0]))
    assert templar.template(trust_as_template(TEMPLATES[3])) == "NodeName=gpu2 Gres=gpu:8"
    assert cache.stats()["misses"] == misses


def test_checks_of_the_collections_action_are_conditionals(installed):
    task = SimpleNamespace(
        action="gpucluster.training.checks",
        args={"checks": [{"that": [trust_as_template(CONDITIONALS[2])], "msg": "m"}, {"that": trust_as_template(CONDITIONALS[3]), "msg": "n"}]},
        vars={}, when=[], changed_when=[], failed_when=[], until=[], loop=None, delegate_to=None, _role=None,
        get_play=lambda: None,
    )
    assert cache.prewarm_task(task) == 2


def test_prewarm_does_nothing_without_the_cache():
    assert cache.prewarm(templates=["{{ x }}"], conditionals=["x"]) == 0


def test_a_roles_template_files_are_compiled_as_the_template_module_compiles_them(installed, tmp_path):
    (tmp_path / "role" / "templates" / "sub").mkdir(parents=True)
    (tmp_path / "role" / "templates" / "a.conf.j2").write_bytes(TEMPLATES[1].encode() + b"\\path\r\n")
    (tmp_path / "role" / "templates" / "sub" / "b.j2").write_text("{{ nodes | first }}\n")
    role = SimpleNamespace(_role_vars={}, _default_vars={}, _role_path=str(tmp_path / "role"))
    task = SimpleNamespace(action="ansible.builtin.debug", args={}, vars={}, when=[], changed_when=[], failed_when=[],
                           until=[], loop=None, delegate_to=None, _role=role, get_play=lambda: None)
    assert cache.prewarm_task(task) == 2
    misses = cache.stats()["misses"]
    templar = Templar(variables=VARIABLES)
    text = trust_as_template((tmp_path / "role" / "templates" / "a.conf.j2").read_bytes().decode())
    assert templar.template(text, escape_backslashes=False) == "gpu2=4\ngpu1=8\ngpu10=0\n\\path\n"  # Jinja writes its newline_sequence
    assert cache.stats()["misses"] == misses
