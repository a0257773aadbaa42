# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A cache of the Python code Jinja generates from a template's source, kept between runs.

ansible-core 2.19 parses and compiles every template and conditional each time it renders one
(no cache), and it renders a task's templates in a new process forked for each task and host, so
the same source is compiled again and again in one ansible-playbook run, and again in the next run.
This cache keeps the compiled code object of each source in the process's memory and in a directory
(marshal files, written atomically), where the later worker processes of the run, and later runs,
find it.

What is cached is only what Jinja's own compile step returns for the same input: the key holds the
source, the template name and file name, the environment's class, extensions and every setting the
lexer and the code generator read, Ansible's backslash-escaping mode of the compile, and the Python,
Jinja and ansible-core releases; rendering (variables, filters, lookups) is untouched. The generated
code calls filters, tests and lookups by name when it renders: ansible-core turns Jinja's optimizer
off (no constant folding at compile time), so no plugin's result is compiled into the code, and a
plugin changed between runs is called as it is now. The kept directory is one per release of
ansible-core, Jinja and Python, of the running user only (mode 0700; one that others can write is
not used), and its oldest entries are removed when it holds more than MAX_ENTRIES. Anything
unexpected (another ansible-core release, a template debugger) leaves Ansible's own compile path
alone.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import shutil
import sys
import tempfile
import threading
import time

from ansible_collections.gpucluster.training.plugins.plugin_utils import _ansible_release
from ansible_collections.gpucluster.training.plugins.plugin_utils._cache_files import private_dir, write_atomic

# the Environment attributes Jinja's lexer and code generator read while compiling a source
_SETTINGS = (
    "block_start_string",
    "block_end_string",
    "variable_start_string",
    "variable_end_string",
    "comment_start_string",
    "comment_end_string",
    "line_statement_prefix",
    "line_comment_prefix",
    "trim_blocks",
    "lstrip_blocks",
    "newline_sequence",
    "keep_trailing_newline",
    "optimized",
    "is_async",
    "autoescape",
)


class _State(threading.local):
    expression = None


# a kept directory holds at most this many compiled sources (a 3-host site.yml run compiles about 700,
# a few hundred bytes to a few kB each); beyond it the oldest are removed down to half
MAX_ENTRIES = 20000

_STATE = _State()
_CACHE = {"dir": None, "keep": False, "memory": {}, "owner": None, "hits": 0, "misses": 0}
_ORIGINAL = {}
_WARM = {"engine": None, "seen": set()}


def settings_key(env, kind, source, name=None, filename=None, defer_init=False, escape_backslashes=None):
    """The cache key (hex digest) of one compile: everything Jinja's compile output depends on."""
    if callable(env.autoescape):
        return None  # decided per template name at compile time: not cached
    parts = (
        kind,
        sys.version,
        _releases(),
        type(env).__module__,
        type(env).__qualname__,
        tuple(sorted(env.extensions)),
        escape_backslashes,
        name,
        filename,
        bool(defer_init),
    ) + tuple(getattr(env, field, None) for field in _SETTINGS)
    digest = hashlib.sha256(repr(parts).encode("utf-8", "surrogatepass"))
    digest.update(b"\0")
    digest.update(str(source).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


_RELEASES = []


def _releases():
    """The ansible-core and Jinja releases whose code generator made the code."""
    if not _RELEASES:
        import jinja2
        from ansible.release import __version__ as ansible_version
        _RELEASES.extend((ansible_version, jinja2.__version__))
    return tuple(_RELEASES)


def store_dir(base):
    """The kept directory under base for this ansible-core, Jinja and Python release."""
    ansible_version, jinja_version = _releases()
    return os.path.join(os.path.expanduser(base), "ansible-%s-jinja-%s-py%d.%d" % (
        ansible_version, jinja_version, sys.version_info[0], sys.version_info[1]))


def open_store(base):
    """The kept directory under base, created for this user only; None where it is not safe to use."""
    folder = store_dir(base)
    try:
        return folder if private_dir(folder) else None
    except OSError:
        return None


def prune(folder, max_entries=None, now=None):
    """Remove the oldest entries (by modification time) down to half of max_entries when the folder
    holds more, and temporary files of writes that did not finish (older than an hour)."""
    max_entries = MAX_ENTRIES if max_entries is None else max_entries
    now = time.time() if now is None else now
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    removed = 0
    for name in names:
        if name.startswith(".") and name.endswith(".tmp") and _age(os.path.join(folder, name), now) > 3600:
            removed += _unlink(os.path.join(folder, name))
    entries = [name for name in names if not name.startswith(".")]
    if len(entries) > max_entries:  # the common case (within the limit) stats nothing
        dated = sorted((-_age(os.path.join(folder, name), now), name) for name in entries)
        for _age_key, name in dated[:len(entries) - max_entries // 2]:
            removed += _unlink(os.path.join(folder, name))
    return removed


def _age(path, now):
    try:
        return now - os.lstat(path).st_mtime
    except OSError:
        return 0


def _unlink(path):
    try:
        os.unlink(path)
    except OSError:
        return 0
    return 1


def load(key):
    """The cached code object of a key, or None."""
    code = _CACHE["memory"].get(key)
    if code is None and _CACHE["dir"]:
        try:
            with open(os.path.join(_CACHE["dir"], key), "rb") as handle:
                code = marshal.load(handle)
        except (OSError, EOFError, ValueError, TypeError):
            return None
        _CACHE["memory"][key] = code
    return code


def store(key, code):
    """Keep a code object in memory and, atomically, in the run's directory."""
    _CACHE["memory"][key] = code
    folder = _CACHE["dir"]
    if not folder:
        return
    try:
        write_atomic(os.path.join(folder, key), marshal.dumps(code))
    except (OSError, ValueError):
        pass  # a full or removed directory: the code is still kept in this process


def _escape_backslashes(ctx_class):
    ctx = ctx_class.current(optional=True)
    return None if ctx is None else ctx.escape_backslashes


def _patched(env_class, ctx_class):
    from jinja2.environment import TemplateExpression

    compile_original = env_class.compile
    expression_original = env_class.compile_expression

    def compile(self, source, name=None, filename=None, raw=False, defer_init=False):  # pylint: disable=redefined-builtin
        expression, _STATE.expression = _STATE.expression, None
        if raw or getattr(self, "_debuggable_template_source", False):
            return compile_original(self, source, name, filename, raw, defer_init)
        if isinstance(source, str):
            kind, text = "template", source
        elif expression is not None:
            kind, text = "expression", expression
        else:
            return compile_original(self, source, name, filename, raw, defer_init)
        key = settings_key(self, kind, text, name, filename, defer_init, _escape_backslashes(ctx_class))
        code = load(key) if key else None
        if code is not None:
            _CACHE["hits"] += 1
            return code
        code = compile_original(self, source, name, filename, raw, defer_init)
        _CACHE["misses"] += 1
        if key:
            store(key, code)
        return code

    def compile_expression(self, source, undefined_to_none=True):
        # Jinja parses the expression, then compiles a template made of it: that compile is keyed
        # by the expression's source. Found in the cache, the code makes the template as Jinja's
        # from_string would, without parsing the expression again.
        if isinstance(source, str) and not getattr(self, "_debuggable_template_source", False):
            key = settings_key(self, "expression", source, escape_backslashes=_escape_backslashes(ctx_class))
            code = load(key) if key else None
            if code is not None:
                _CACHE["hits"] += 1
                template = self.template_class.from_code(self, code, self.make_globals(None), None)
                return TemplateExpression(template, undefined_to_none)
        _STATE.expression = source if isinstance(source, str) else None
        try:
            return expression_original(self, source, undefined_to_none)
        finally:
            _STATE.expression = None

    return compile, compile_expression


def install(folder=None, keep=False):
    """Route AnsibleEnvironment's compiles through the cache; returns why not, or None when done.
    folder: where the code is written for other processes; keep: it is a kept directory (open_store),
    left in place at the end (pruned), else a directory of this run, removed at the end."""
    if _ORIGINAL:
        return None
    try:
        from ansible.release import __version__ as ansible_version
        from ansible._internal._templating._jinja_bits import AnsibleEnvironment, _TemplateCompileContext
    except ImportError as exc:
        return "ansible-core without the expected templating internals (%s)" % exc
    # compile and compile_expression of AnsibleEnvironment reach Jinja's Environment.compile once per source
    unsupported = _ansible_release.unsupported(ansible_version)
    if unsupported:
        return unsupported
    if "compile" in vars(AnsibleEnvironment) or "compile_expression" not in vars(AnsibleEnvironment):
        return "ansible-core's AnsibleEnvironment compiles differently than this cache expects"
    _ORIGINAL.update(compile=AnsibleEnvironment.compile, compile_expression=AnsibleEnvironment.compile_expression,
                     env_class=AnsibleEnvironment)
    AnsibleEnvironment.compile, AnsibleEnvironment.compile_expression = _patched(AnsibleEnvironment, _TemplateCompileContext)
    _CACHE.update(dir=folder, keep=bool(keep and folder), memory={}, owner=os.getpid(), hits=0, misses=0)
    return None


def _strings(value, depth=0):
    """The strings in a task's or role's data (dict values, list items), at most 20 levels down."""
    if isinstance(value, str):
        yield value
    elif depth < 20 and isinstance(value, dict):
        for item in value.values():
            yield from _strings(item, depth + 1)
    elif depth < 20 and isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item, depth + 1)


def prewarm(templates=(), conditionals=(), files=()):
    """Compile, in this process, the template strings and conditionals a task's worker processes
    will compile, before they are forked: each of them then finds the code in its memory instead
    of every host's worker compiling the same source at the same time. Nothing is rendered;
    a source that fails to compile fails later where Ansible compiles it, with Ansible's message.
    files: the texts of template files, compiled as a file's text is (no backslash escaping)."""
    if not _ORIGINAL:
        return 0
    from ansible._internal._templating._engine import TemplateEngine, TemplateOptions
    from ansible._internal._templating._jinja_bits import is_possibly_all_template, is_possibly_template

    if _WARM["engine"] is None:
        _WARM["engine"] = TemplateEngine()
        _WARM["expression_options"] = TemplateOptions(escape_backslashes=False, preserve_trailing_newlines=False)
        _WARM["file_options"] = TemplateOptions(escape_backslashes=False)
    engine, seen, done = _WARM["engine"], _WARM["seen"], 0
    for kind, values in (("template", templates), ("conditional", conditionals), ("file", files)):
        for value in values:
            if not isinstance(value, str) or (kind, value) in seen:
                continue
            seen.add((kind, value))
            try:
                if kind == "conditional" and not is_possibly_all_template(value):
                    # as TemplateEngine.evaluate_conditional compiles a bare expression
                    engine._compile_expression(value.strip(), _WARM["expression_options"])  # pylint: disable=protected-access
                elif kind == "file":
                    # as the template module and gpucluster.training.template compile a file's text
                    engine._compile_template(value, _WARM["file_options"])  # pylint: disable=protected-access
                elif is_possibly_template(value):
                    engine._compile_template(value, TemplateOptions.DEFAULT)  # pylint: disable=protected-access
                else:
                    continue
            except Exception:  # pylint: disable=broad-except
                continue  # compiled again where Ansible compiles it, failing there with Ansible's message
            done += 1
    return done


def role_template_files(role_path):
    """The text of each file under a role's templates folder (as the template module reads it)."""
    from ansible.template import trust_as_template

    texts = []
    folder = os.path.join(role_path, "templates") if role_path else None
    if not folder or not os.path.isdir(folder):
        return texts
    for root, _dirs, names in sorted(os.walk(folder)):
        for name in sorted(names):
            try:
                with open(os.path.join(root, name), "rb") as handle:
                    texts.append(trust_as_template(handle.read().decode("utf-8")))
            except (OSError, UnicodeDecodeError):
                continue
    return texts


# actions whose "that" (of the arguments, or of each item of the named list) are conditionals
CONDITION_ACTIONS = {
    "assert": None,
    "ansible.builtin.assert": None,
    "ansible.legacy.assert": None,
    "gpucluster.training.checks": "checks",
}


def prewarm_task(task):
    """prewarm() with what a task's workers template: its arguments, variables, loop, conditions,
    and once per role and play, the role's variables, defaults and template files and the play's
    variables."""
    templates = [task.args, task.vars, getattr(task, "loop", None), getattr(task, "delegate_to", None)]
    role = getattr(task, "_role", None)
    files = []
    for owner, parts in ((role, ("_role_vars", "_default_vars")), (_play(task), ("vars",))):
        if owner is not None and ("owner", id(owner)) not in _WARM["seen"]:
            _WARM["seen"].add(("owner", id(owner)))
            templates.extend(getattr(owner, part, None) for part in parts)
            role_path = getattr(role, "_role_path", None) if owner is role else None
            if role_path and ("role_path", role_path) not in _WARM["seen"]:
                # each include_role makes a new Role object: its files are read once per run
                _WARM["seen"].add(("role_path", role_path))
                files = role_template_files(role_path)
    conditionals = []
    for attribute in ("when", "changed_when", "failed_when", "until"):
        value = getattr(task, attribute, None)
        conditionals.extend(value if isinstance(value, list) else [value])
    # the conditions of assert and of this collection's checks action are evaluated as conditionals
    args = task.args if isinstance(task.args, dict) else {}
    if task.action in CONDITION_ACTIONS:
        checks = [args] if CONDITION_ACTIONS[task.action] is None else args.get(CONDITION_ACTIONS[task.action])
        for check in checks if isinstance(checks, list) else []:
            that = check.get("that") if isinstance(check, dict) else None
            conditionals.extend(that if isinstance(that, list) else [that])
    return prewarm(list(_strings(templates)), [c for c in conditionals if isinstance(c, str)], files)


def _play(task):
    try:
        return task.get_play()
    except Exception:  # pylint: disable=broad-except
        return None


def make_run_dir(parent=None):
    """A private directory (mode 0700) for one run's compiled code."""
    return tempfile.mkdtemp(prefix="gpucluster-jinja-", dir=parent)


def uninstall():
    """Give AnsibleEnvironment back its own compiles; in the process that installed the cache, remove
    the run's directory, or prune the kept one."""
    if _ORIGINAL:
        env_class = _ORIGINAL["env_class"]
        del env_class.compile  # inherited from Jinja's Environment again
        env_class.compile_expression = _ORIGINAL["compile_expression"]
        _ORIGINAL.clear()
    folder = _CACHE["dir"]
    if folder and _CACHE["owner"] == os.getpid():
        if _CACHE["keep"]:
            prune(folder)
        else:
            shutil.rmtree(folder, ignore_errors=True)
    _CACHE.update(dir=None, keep=False, memory={}, owner=None)
    _WARM.update(engine=None, seen=set())


def active():
    """Whether AnsibleEnvironment compiles through the cache in this process."""
    return bool(_ORIGINAL)


def stats():
    """Hits and misses of this process."""
    return {"hits": _CACHE["hits"], "misses": _CACHE["misses"]}
