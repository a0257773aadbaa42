# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The parsers' shared input guard (synthetic inputs)."""

from __future__ import annotations

import pytest

from ansible_collections.gpucluster.training.plugins.module_utils._parse_text import require_text


class _Err(ValueError):
    pass


def test_text_within_the_limit_is_returned():
    assert require_text("abc", 3, _Err, "no text: %s", "%d > %d") == "abc"


@pytest.mark.parametrize("value, message", [(None, "no text: null"), (b"abc", "no text: bytes"), ("abcd", "4 > 3")])
def test_refusal_is_the_callers_error_and_message(value, message):
    with pytest.raises(_Err) as info:
        require_text(value, 3, _Err, "no text: %s", "%d > %d")
    assert str(info.value) == message
