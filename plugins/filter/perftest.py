# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of the perftest bandwidth parser (documentation: perftest.yml)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.gpucluster.training.plugins.module_utils._perftest import (
    PerftestParseError,
    parse_perftest_bw,
)


def perftest(text):
    """Text (or list of lines) of an ib_write_bw / ib_read_bw / ib_send_bw run -> rows."""
    if isinstance(text, (list, tuple)):
        text = "\n".join(str(line) for line in text)
    try:
        return parse_perftest_bw(text)
    except PerftestParseError as exc:
        raise AnsibleFilterError("perftest: %s" % exc) from exc


class FilterModule:
    """gpucluster.training.perftest"""

    def filters(self):
        return {"perftest": perftest}
