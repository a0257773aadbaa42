# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Drive a module's main() with module arguments and catch what it exits or fails with."""

from __future__ import annotations

import pytest
from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args


class Exit(Exception):
    pass


class Fail(Exception):
    pass


@pytest.fixture(autouse=True)
def exits(monkeypatch):
    """Autouse in every test module that imports it: exit_json / fail_json raise Exit / Fail."""
    def exit_json(self, **kwargs):
        raise Exit(kwargs)

    def fail_json(self, **kwargs):
        raise Fail(kwargs)

    monkeypatch.setattr(basic.AnsibleModule, "exit_json", exit_json)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", fail_json)


def run_main(main, args, expect=Exit):
    """Run ``main`` with ``args``; return the keyword arguments it exited (or failed) with."""
    with patch_module_args(args):
        with pytest.raises(expect) as info:
            main()
    return info.value.args[0]
