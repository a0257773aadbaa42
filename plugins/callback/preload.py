# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Load this collection's filter, test and lookup plugins once in ansible-playbook's own process,
so that every task's worker process (a fork of it) starts with them loaded; keep the code Jinja
compiles from each template source, and the module payloads, for the rest of the run and the next."""

from __future__ import annotations

DOCUMENTATION = r"""
name: preload
type: aggregate
version_added: 0.1.0
author:
  - gpucluster.training maintainers (@gpucluster)
short_description: Load the collection's Jinja plugins once, keep compiled templates and module payloads between runs
description:
  - ansible-playbook runs each task on each host in a new process forked from its own, and a
    template that names a filter of a collection makes that process load the collection's filter
    files one by one until it finds the filter (ansible-core 2.19), a lookup's documentation parsed
    for its options. Nothing of it is kept for the next task. This callback loads every filter, test
    and lookup plugin of gpucluster.training in ansible-playbook's own process when the playbook
    starts, so each worker process has them already. It prints nothing and changes no result.
  - Enabled by the collection's C(ansible.cfg) (C(callbacks_enabled)). On the lab, a whole
    C(site.yml) rerun used about 2 s less processor time with it (README, Speed of a rerun).
  - ansible-core 2.19 also parses and compiles a template's source each time it renders it, in each
    task's worker process. With O(compile_cache) on, this callback keeps the code Jinja compiles for
    each source in O(compile_cache_store_dir), one directory per release of ansible-core, Jinja and
    Python, where later worker processes of the same run and later runs find it (with
    O(compile_cache_store) off, in a directory of this run under Ansible's local temporary directory,
    removed when the run ends). Before a task's first worker
    is forked, it compiles that task's templates and conditions (and, once per role and play, their
    variables) in ansible-playbook's own process, so the workers of all hosts start with them instead
    of each compiling the same sources at the same time. Only Jinja's compile step is skipped; every
    template is still rendered with the variables of its task and host, and the code calls each
    filter, test and lookup as it is when it renders (ansible-core compiles without Jinja's constant
    folding). It is applied
    only on the ansible-core releases it was checked with (2.19); on others it stays off and says why
    at verbosity 3.
  - ansible-core 2.19 builds each Python module's payload (the module and every module_utils file it
    imports, zipped) once per run, on the controller, and the first hosts to run the module wait for
    it (0.15-0.4 s per module on an idle 2-core controller). With O(ansiballz_store) on, this callback
    keeps the payloads a run built in O(ansiballz_store_dir), each with a record of its files, and,
    when the next run starts, gives it every stored payload whose files are all the files the
    controller would put into it now (the module and each module_utils file, resolved through the
    current ansible-core and collection search path; each file is the recorded one with the recorded
    stat, or else its content has the recorded SHA-1). A
    payload with any difference (an edited or upgraded collection, another checkout, another
    ansible-core) is not used, and Ansible builds the module as always. Only the zipped code is kept;
    the arguments, interpreter and environment of each task are assembled by Ansible per task.
    Applied on ansible-core 2.19 only.
requirements:
  - enabled in callbacks_enabled
options:
  compile_cache:
    description:
      - Keep the code compiled from each template source for the rest of the run.
      - Set to false to compare, or when debugging Ansible's templating.
    type: bool
    default: true
    env:
      - name: GPUCLUSTER_COMPILE_CACHE
    ini:
      - section: callback_preload
        key: compile_cache
  compile_cache_store:
    description:
      - Keep the compiled code between runs in O(compile_cache_store_dir) (with O(compile_cache) on).
      - Set to false to keep it for one run only, or where the controller's home directory must not be written.
    type: bool
    default: true
    env:
      - name: GPUCLUSTER_COMPILE_CACHE_STORE
    ini:
      - section: callback_preload
        key: compile_cache_store
  compile_cache_store_dir:
    description:
      - Where the compiled code is kept, one directory per release of ansible-core, Jinja and Python;
        beyond 20,000 entries the oldest are removed at the end of a run.
      - Created for the running user only (mode 0700); a directory of another user, or writable by
        others, is not used (the run keeps its code in a directory of its own instead).
    type: path
    default: ~/.ansible/gpucluster/jinja
    env:
      - name: GPUCLUSTER_COMPILE_CACHE_STORE_DIR
    ini:
      - section: callback_preload
        key: compile_cache_store_dir
  ansiballz_store:
    description:
      - Keep the module payloads a run built for later runs (checked file by file before each use).
      - Set to false to compare, or where the controller's home directory must not be written.
    type: bool
    default: true
    env:
      - name: GPUCLUSTER_ANSIBALLZ_STORE
    ini:
      - section: callback_preload
        key: ansiballz_store
  ansiballz_store_dir:
    description:
      - Where the module payloads are kept, one directory per ansible-core release and Python version.
      - Created for the running user only (mode 0700); a directory or file of another user, or
        writable by others, is not read.
    type: path
    default: ~/.ansible/gpucluster/ansiballz
    env:
      - name: GPUCLUSTER_ANSIBALLZ_STORE_DIR
    ini:
      - section: callback_preload
        key: ansiballz_store_dir
"""

import os

from ansible import constants as C
from ansible.plugins.callback import CallbackBase
from ansible.plugins.loader import filter_loader, lookup_loader, test_loader
from ansible_collections.gpucluster.training.plugins.plugin_utils import _ansiballz_store, _compile_cache

COLLECTION = "gpucluster.training"
_PLUGINS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def plugin_files(kind, root=_PLUGINS):
    """The plugin names of one kind (the .py files of plugins/<kind>, without __init__)."""
    folder = os.path.join(root, kind)
    if not os.path.isdir(folder):
        return []
    return sorted(name[:-3] for name in os.listdir(folder) if name.endswith(".py") and not name.startswith("_"))


class CallbackModule(CallbackBase):
    """Resolve each Jinja plugin of the collection through Ansible's own loaders, once."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "gpucluster.training.preload"
    CALLBACK_NEEDS_ENABLED = True

    def v2_playbook_on_start(self, playbook):
        if self.get_option("compile_cache") and not _compile_cache.active():
            kept = self._compile_store()
            why_not = _compile_cache.install(kept or _compile_cache.make_run_dir(C.DEFAULT_LOCAL_TMP), keep=kept is not None)
            if why_not:
                # nothing was patched; a run's empty directory goes with Ansible's local temporary directory
                self._display.vvv("preload: no compile cache: %s" % why_not)
        self._restore_payloads()
        for kind, loader in (("filter", filter_loader), ("test", test_loader), ("lookup", lookup_loader)):
            for name in plugin_files(kind):
                # a filter or test file's plugins are found by their function names: the first one
                # loads the file (and, as a worker would, every file of the collection before it)
                try:
                    loader.get("%s.%s" % (COLLECTION, name))
                except Exception as exc:  # pylint: disable=broad-except
                    # a plugin that fails to load fails where a task uses it, with Ansible's message
                    self._display.vvv("preload: %s %s not loaded: %s" % (kind, name, exc))

    def v2_playbook_on_task_start(self, task, is_conditional):
        # before the task's first worker process is forked: compile its templates here once
        try:
            _compile_cache.prewarm_task(task)
        except Exception as exc:  # pylint: disable=broad-except
            self._display.vvv("preload: task templates not compiled ahead: %s" % exc)

    def _compile_store(self):
        """The kept directory of compiled code, or None (off, or not safe to use)."""
        if not self.get_option("compile_cache_store"):
            return None
        kept = _compile_cache.open_store(self.get_option("compile_cache_store_dir"))
        if kept is None:
            self._display.vvv("preload: compiled templates kept for this run only: %s is not a directory of this user only"
                              % _compile_cache.store_dir(self.get_option("compile_cache_store_dir")))
        return kept

    def _payload_store(self):
        """The store's directory for this run, or None (off, or another ansible-core)."""
        if not self.get_option("ansiballz_store"):
            return None
        why_not = _ansiballz_store.why_not()
        if why_not:
            self._display.vvv("preload: module payloads not kept: %s" % why_not)
            return None
        return _ansiballz_store.store_dir(self.get_option("ansiballz_store_dir"))

    def _restore_payloads(self):
        # in ansible-playbook's own process, before any worker is forked
        store = self._payload_store()
        if store is None:
            return
        try:
            restored, skipped = _ansiballz_store.restore(store, C.DEFAULT_LOCAL_TMP)
        except OSError as exc:
            self._display.vvv("preload: stored module payloads not used: %s" % exc)
            return
        self._display.vvv("preload: %d stored module payload(s) current%s" % (
            len(restored), "".join("; %s not used: %s" % item for item in sorted(skipped.items()))))

    def v2_playbook_on_stats(self, stats):
        # in ansible-playbook's own process, after the last task: the run's directory goes (a kept one is pruned)
        if _compile_cache.active():
            counts = _compile_cache.stats()
            self._display.vvv("preload: templates in ansible-playbook's own process: %d compiled code(s) reused, %d compiled"
                              % (counts["hits"], counts["misses"]))
        _compile_cache.uninstall()
        store = self._payload_store()
        if store is not None:
            try:
                _ansiballz_store.save(C.DEFAULT_LOCAL_TMP, store)
            except OSError as exc:
                self._display.vvv("preload: module payloads not stored: %s" % exc)
