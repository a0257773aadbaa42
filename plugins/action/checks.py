# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action of gpucluster.training.checks: every check evaluated on the controller, every failure named."""

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

_CHECK_KEYS = frozenset(("that", "msg"))


class ActionModule(ActionBase):
    """Evaluate a list of checks (conditions and a message each) in one task; fail naming each that failed."""

    _requires_connection = False
    _VALID_ARGS = frozenset(("checks",))

    @classmethod
    def finalize_task_arg(cls, name, value, templar, context):
        # A check's conditions and message are evaluated by run(), the message only when its check
        # failed: it may name values that exist only then (as ansible.builtin.assert's that).
        if name == "checks" and isinstance(value, list):
            return value
        return super().finalize_task_arg(name, value, templar, context)

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp
        checks = self._task.args.get("checks")
        if not isinstance(checks, list) or not checks:
            raise AnsibleActionFail("checks must be a non-empty list of {that, msg}, got %r" % (checks,))
        failures = []
        for number, check in enumerate(checks, 1):
            if not isinstance(check, dict) or set(check) != _CHECK_KEYS:
                raise AnsibleActionFail("check %d must have exactly the keys that and msg, got %r" % (number, check))
            conditions = check["that"] if isinstance(check["that"], list) else [check["that"]]
            if not conditions or not all(isinstance(cond, bool) or (isinstance(cond, str) and cond.strip()) for cond in conditions):
                raise AnsibleActionFail("check %d: that must be a condition or a list of conditions, got %r" % (number, check["that"]))
            for cond in conditions:
                if not self._templar.evaluate_conditional(conditional=cond):
                    failures.append({"check": number, "condition": str(cond), "msg": str(self._templar.template(check["msg"])).strip()})
                    break
        result["changed"] = False
        result["failures"] = failures
        if failures:
            result["failed"] = True
            result["msg"] = " | ".join(f["msg"] for f in failures) if len(failures) == 1 else "%d of %d checks failed: %s" % (
                len(failures), len(checks), " | ".join("(%d) %s" % (i, f["msg"]) for i, f in enumerate(failures, 1)))
        else:
            result["msg"] = "all %d checks passed" % len(checks)
        return result
