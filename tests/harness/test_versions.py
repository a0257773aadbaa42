# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ansible-core versions the collection claims are the ones its suite runs on."""
import re

import yaml
from ansible.release import __version__ as ANSIBLE_CORE

from conftest import ROOT


def _claim():
    spec = yaml.safe_load((ROOT / "meta/runtime.yml").read_text())["requires_ansible"]
    low = re.search(r">=\s*(\d+)\.(\d+)", spec)
    high = re.search(r"<\s*(\d+)\.(\d+)", spec)
    return (int(low.group(1)), int(low.group(2))), (int(high.group(1)), int(high.group(2)))


def test_claimed_range_is_exactly_the_tested_release():
    # sanity and units run with the .venv's ansible-core only (requirements/dev.txt): the claim
    # is that one release series, not more
    low, high = _claim()
    tested = tuple(int(x) for x in ANSIBLE_CORE.split(".")[:2])
    print("requires_ansible %s.%s <= x < %s.%s; tested ansible-core %s" % (low + high + (ANSIBLE_CORE,)))
    assert low == tested and high == (tested[0], tested[1] + 1)
    pinned = re.search(r"^ansible-core==(\S+)$", (ROOT / "requirements/dev.txt").read_text(), re.M).group(1)
    assert pinned == ANSIBLE_CORE


def test_roles_and_sanity_ignores_follow_the_claim():
    low, _high = _claim()
    for meta in sorted((ROOT / "roles").glob("*/meta/main.yml")):
        assert yaml.safe_load(meta.read_text())["galaxy_info"]["min_ansible_version"] == "%d.%d" % low, meta
    ignores = sorted(p.name for p in (ROOT / "tests/sanity").glob("ignore-*.txt"))
    assert ignores == ["ignore-%d.%d.txt" % low]
    assert (ROOT / "tests/sanity" / ignores[0]).read_text() == ""
