# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The Jinja face of a pure function: the ONE place that turns a parser's or deriver's own error
into the AnsibleFilterError a template shows.

PRIVATE to the collection: the interface may change without notice.
"""

from __future__ import annotations

import functools

from ansible.errors import AnsibleFilterError


def jinja_filter(name, errors, lines=False, prefix=True):
    """Decorate a filter function: ``errors`` (a class or tuple of them) become AnsibleFilterError
    with the message ``"<name>: <error>"`` (the error's own text with ``prefix=False``); with
    ``lines`` a list of lines as input is joined into one text first."""
    def decorate(func):
        @functools.wraps(func)
        def run(value, *args, **kwargs):
            if lines and isinstance(value, (list, tuple)):
                value = "\n".join(str(line) for line in value)
            try:
                return func(value, *args, **kwargs)
            except errors as exc:
                raise AnsibleFilterError("%s: %s" % (name, exc) if prefix else str(exc)) from exc
        return run
    return decorate


def filter_module(**filters):
    """The FilterModule class Ansible loads from a filter plugin file, offering ``filters``."""
    class FilterModule:
        def filters(self):
            return dict(filters)
    FilterModule.__doc__ = "gpucluster.training filters: %s" % ", ".join(sorted(filters))
    return FilterModule
