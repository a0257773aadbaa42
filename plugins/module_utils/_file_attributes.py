# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A file item's owner, group and mode read the way ansible's file modules read them: the ONE
reading for managed_files (which sets them, through AnsibleModule.set_fs_attributes_if_different)
and managed_state (which compares them), so that an item managed_files has written is no drift.

- mode: an integer is the mode itself (YAML ``mode: 0644`` arrives as 420, which is 0o644); a
  string is octal when ``int(text, 8)`` reads it ("0644", "644", "0o644"), symbolic otherwise
  ("u=rw,g=r,o=r", "u+x", applied to the path's present mode as chmod and ansible apply it);
  anything else, or more than the permission bits (07777), is an error.
- owner, group: an id (an integer, or text ``int()`` reads: "0", 0) or a name; the caller
  looks a name up (an id is compared with the file's uid or gid as it is).

None or "" is "not given" for each. Pure: values in, values out, no AnsibleModule; the umask a
symbolic mode without a user class (``+x``, ``=rw``) needs is the caller's to read.

PRIVATE to the collection: the interface may change without notice.
"""

from __future__ import annotations

import re
import stat

PERM_BITS = 0o7777
_ANY_EXEC = stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
_OPERATOR = re.compile(r"[+=-]")
_USERS = re.compile(r"^[ugo]+$")
_PERMS = re.compile(r"^[rwxXstugo]*$")
# the bits '=' replaces for each class: its rwx and its special bit
_CLASS_BITS = {"u": stat.S_IRWXU | stat.S_ISUID, "g": stat.S_IRWXG | stat.S_ISGID, "o": stat.S_IRWXO | stat.S_ISVTX}


class FileAttributeError(ValueError):
    """An owner, group or mode that ansible's file modules would refuse (or that could never be in sync)."""


def _given(value):
    return value is not None and value != ""


def _symbolic_bits(user, perms, use_umask, mode, directory, umask):
    """The bits that perms ('rwX', 'u', 'st'...) stand for in class user, with the path's mode as it
    stands after the clauses before (ansible's _get_octal_mode_from_symbolic_perms)."""
    kept = (umask ^ PERM_BITS) if use_umask else PERM_BITS
    read = {"u": stat.S_IRUSR, "g": stat.S_IRGRP, "o": stat.S_IROTH}[user]
    write = {"u": stat.S_IWUSR, "g": stat.S_IWGRP, "o": stat.S_IWOTH}[user]
    execute = {"u": stat.S_IXUSR, "g": stat.S_IXGRP, "o": stat.S_IXOTH}[user]
    shift = {"u": 6, "g": 3, "o": 0}[user]
    bits = {
        "r": kept & read, "w": kept & write, "x": kept & execute,
        "X": execute if directory or mode & _ANY_EXEC else 0,
        "s": {"u": stat.S_ISUID, "g": stat.S_ISGID, "o": 0}[user],
        "t": stat.S_ISVTX if user == "o" else 0,
        # copy another class's present rwx into this class
        "u": ((mode & stat.S_IRWXU) >> 6) << shift,
        "g": ((mode & stat.S_IRWXG) >> 3) << shift,
        "o": (mode & stat.S_IRWXO) << shift,
    }
    result = 0
    for perm in perms:
        result |= bits[perm]
    return result


def symbolic_mode(text, current, directory=False, umask=0o022):
    """A symbolic mode ("u=rw,g=r,o=r", "a+X", "g=u", "+x") applied to the present permission bits
    current, as ansible's file modules apply it (AnsibleModule._symbolic_mode_to_octal): clauses in
    order, each class in order; no class means all three, with the umask's bits left alone for
    r, w and x; X is x for a directory or a path some class may execute. ValueError when a clause
    is not symbolic."""
    mode = stat.S_IMODE(current)
    for clause in text.split(","):
        perm_lists = _OPERATOR.split(clause)
        operators = _OPERATOR.findall(clause)
        users = perm_lists.pop(0)
        use_umask = users == ""
        if users in ("a", ""):
            users = "ugo"
        if not _USERS.match(users):
            raise ValueError("bad symbolic permission for mode: %s" % clause)
        for operator, perms in zip(operators, perm_lists):
            if not _PERMS.match(perms):
                raise ValueError("bad symbolic permission for mode: %s" % clause)
            for user in users:
                bits = _symbolic_bits(user, perms, use_umask, mode, directory, umask)
                if operator == "=":
                    mode = (mode & (_CLASS_BITS[user] ^ PERM_BITS)) | bits
                elif operator == "+":
                    mode |= bits
                else:
                    mode &= ~bits
    return mode


def file_mode(value, current=0, directory=False, umask=0o022):
    """The permission bits an item's mode asks for (an int), or None when it gives none.

    value as a module receives it (mode is type raw): an int is the mode; text is octal when
    int(text, 8) reads it, else symbolic, applied to current (the path's present mode; 0 when
    it has none: only the syntax is checked then), directory and umask as symbolic_mode says."""
    if not _given(value):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise FileAttributeError("mode %r is not a mode: give octal text such as '0644', or an integer" % (value,))
    if isinstance(value, int):
        mode = value
    else:
        try:
            mode = int(value, 8)
        except ValueError:
            try:
                mode = symbolic_mode(value, current, directory, umask)
            except ValueError as exc:
                raise FileAttributeError("mode %r is not octal or symbolic (%s)" % (value, exc)) from None
    if not 0 <= mode <= PERM_BITS:
        raise FileAttributeError("mode %r is not a mode: only permission bits (0 to 07777) are allowed" % (value,))
    return mode


def file_owner(value, key="owner"):
    """An item's owner or group: None (not given), an id (an int: an int, or text int() reads) or a
    name (any other text), as ansible's file modules read it. key names it in errors."""
    if not _given(value):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise FileAttributeError("%s %r is not a name or a numeric id" % (key, value))
    try:
        ident = int(value)
    except ValueError:
        return value
    if ident < 0:
        raise FileAttributeError("%s %r is not a name or a numeric id (ids are 0 or more)" % (key, value))
    return ident


def file_attributes(item, current=0, directory=False, umask=0o022):
    """{owner, group, mode} of a file item as both modules read them: owner and group an id, a
    name or None; mode the permission bits or None (file_mode with current, directory and umask).
    FileAttributeError names the key that cannot be read."""
    return {"owner": file_owner(item.get("owner"), "owner"), "group": file_owner(item.get("group"), "group"),
            "mode": file_mode(item.get("mode"), current, directory, umask)}
