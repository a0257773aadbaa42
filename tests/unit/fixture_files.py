# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where the real captures are and how a unit test reads one: the ONE place for both.

The captures are in tests/fixtures, each cited in tests/fixtures/SOURCES.md. ``fixture_text("ibstat",
name)`` is the text of tests/fixtures/ibstat/<name> (UTF-8); ``FIXTURES`` is the folder, for the
tests that list it.
"""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def fixture_text(*parts):
    """The text of ``tests/fixtures/<parts...>``."""
    return FIXTURES.joinpath(*parts).read_text(encoding="utf-8")
