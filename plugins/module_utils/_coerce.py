# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Input coercion: the ONE place that turns a user's value into a bool, a tri-state or a number.

PRIVATE to the collection: the interface may change without notice. Pure functions, no I/O.

A boolean is what Ansible calls a boolean (``ansible.module_utils.parsing.convert_bool.boolean``:
``yes/no``, ``true/false``, ``on/off``, ``y/n``, ``t/f``, ``1/0``, any case). Every function takes
the input's ``name`` for the message and the caller's ``error`` class, so each parser keeps
raising its own error type:

* ``to_bool(value, name, error, default=REQUIRED)``: True or False; None gives ``default``.
* ``to_tri(value, name, error)``: ``"auto"``, True or False.
* ``to_float(value, name, error, allow_none=True, minimum=None, positive=False)``: a finite float.
* ``to_int(value, name, error, allow_none=False)``: an int from an int, an integral float or a
  string of digits (booleans are not numbers).
* ``kind(value)``: what a value is, for messages ("a string", "a dict", "a list", "a number",
  "a boolean", "null"). Ansible 2.19 hands plugins tagged subclasses (``_AnsibleTaggedStr``...):
  ``type(value).__name__`` would name those, not what the user wrote.
* ``sysfs_int(text, where, error, prefix="", max_len=24)``: an int as the kernel writes it in
  sysfs (decimal or ``0x`` hex, surrounding white space ignored), also as tools print it (ibstat).
"""

from __future__ import annotations

import math
import re

from ansible.module_utils.parsing.convert_bool import boolean

REQUIRED = object()
# one optional sign and at most 18 ASCII digits: "+-4", other scripts' digits and 5,000-digit
# numbers (past Python's int() limit) are refused with the caller's error
_INTEGER = re.compile(r"[+-]?[0-9]{1,18}")


def kind(value):
    """The YAML kind of a value, for messages (tagged strings, dicts and lists by their base type)."""
    for base, name in ((bool, "a boolean"), (str, "a string"), (dict, "a dict"), (list, "a list"),
                       (int, "a number"), (float, "a number")):
        if isinstance(value, base):
            return name
    return "null" if value is None else type(value).__name__


def _absent(value, name, error, allow_none, kind):
    """True for a blank value (None or "") that may be blank; the error for one that may not, or
    for a boolean where a number is wanted."""
    if value is None or (isinstance(value, str) and value.strip() == ""):
        if allow_none:
            return True
        raise error("%s is required" % name)
    if isinstance(value, bool):
        raise error("%s must be %s, got %r" % (name, kind, value))
    return False


def to_bool(value, name, error=ValueError, default=REQUIRED):
    """``value`` as Ansible's boolean; None gives ``default`` (an error when there is none)."""
    if value is None and default is not REQUIRED:
        return default
    try:
        return boolean(value, strict=True)
    except TypeError:
        raise error("%s must be true or false, got %r" % (name, value))


def to_tri(value, name, error=ValueError):
    """``"auto"``, True or False."""
    if isinstance(value, str) and value.strip().lower() == "auto":
        return "auto"
    try:
        return boolean(value, strict=True)
    except TypeError:
        raise error("%s must be auto, true or false, got %r" % (name, value))


def to_float(value, name, error=ValueError, allow_none=True, minimum=None, positive=False):
    """A finite float (``> 0`` with ``positive``, ``>= minimum`` with ``minimum``); None or ""
    gives None when ``allow_none``."""
    if _absent(value, name, error, allow_none, "a number"):
        return None
    try:
        out = float(value)
    except (TypeError, ValueError, OverflowError):
        raise error("%s must be a number, got %r" % (name, value))
    if not math.isfinite(out):
        raise error("%s must be a finite number, got %r" % (name, value))
    if positive and out <= 0:
        raise error("%s must be a positive number, got %r" % (name, value))
    if minimum is not None and out < minimum:
        raise error("%s must be a number >= %s, got %r" % (name, minimum, value))
    return out


def to_int(value, name, error=ValueError, allow_none=False):
    """An int from an int, an integral float or a string of digits; None or "" gives None when
    ``allow_none``."""
    if _absent(value, name, error, allow_none, "an integer"):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        return int(value.strip())
    raise error("%s must be an integer, got %r" % (name, value))


def sysfs_int(text, where, error=ValueError, prefix="", max_len=24):
    """An int as the kernel writes it in sysfs (decimal or 0x hex); ``where`` names the file.

    Also the numbers tools print from sysfs (ibstat's LIDs and port counts): ``prefix`` starts the
    message (``"ibstat: "``), ``max_len`` bounds the value's length.
    """
    value = (text or "").strip()
    # sysfs numbers are short ASCII: a long or non-ASCII value is refused before int() sees it
    message = "%s%s: %r is not a number" % (prefix, where, value[:40])
    if len(value) > max_len or not value.isascii():
        raise error(message)
    try:
        return int(value, 0)
    except ValueError:
        raise error(message)
