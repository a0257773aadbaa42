# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ONE guard at the door of the text parsers: the input is text, and not larger than the tool prints.

PRIVATE to the collection: the interface may change without notice. Pure functions, no I/O.

``require_text(text, max_chars, error, not_text, too_long)`` raises the parser's own ``error``
with its own messages: ``not_text % kind`` (``_coerce.kind``: "a dict", "null"...) for a value that is no ``str``,
``too_long % (length, max_chars)`` for a text above ``max_chars`` characters.
"""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._coerce import kind

__all__ = ["require_text"]


def require_text(text, max_chars, error, not_text, too_long):
    """``text`` itself when it is a ``str`` of at most ``max_chars`` characters, else ``error``."""
    if not isinstance(text, str):
        raise error(not_text % kind(text))
    if len(text) > max_chars:
        raise error(too_long % (len(text), max_chars))
    return text
