# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja face of the perftest bandwidth parser (documentation: perftest.yml).

``perftest``: Text (or list of lines) of an ib_write_bw / ib_read_bw / ib_send_bw run -> rows.
"""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._perftest import PerftestParseError, parse_perftest_bw
from ansible_collections.gpucluster.training.plugins.plugin_utils._filter import filter_module, jinja_filter

perftest = jinja_filter("perftest", PerftestParseError, lines=True)(parse_perftest_bw)

FilterModule = filter_module(perftest=perftest)
