#!/usr/bin/python
# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: managed_files
short_description: Write a role's generated files and directories in one call
version_added: 0.2.0
description:
  - The writing counterpart of M(gpucluster.training.managed_state) - takes the same file items (path, content, owner,
    group, mode, state) and makes the host match them in one round trip, where a loop of M(ansible.builtin.copy) and
    M(ansible.builtin.file) makes one or more per item.
  - Items are handled in order - a directory listed before the files in it exists when they are written.
  - A file is written only when its bytes differ, through a temporary file in the same directory moved into place
    (atomic), after O(files[].validate) accepted it and, with O(files[].backup), a copy of the old file was kept.
    Owner, group and mode are then set where they differ; a new file with a mode to come is readable by the writing
    user only until then (a key or a password file is never readable by others, not even for a moment).
  - Fails naming the item when a validation command refuses a file or a path cannot be written; the items before it
    were written already (as in a loop of M(ansible.builtin.copy)).
options:
  files:
    description: The files and directories, in the order they are made.
    type: list
    elements: dict
    required: true
    suboptions:
      path:
        description: Absolute path.
        type: path
        required: true
      state:
        description:
          - V(file) - a regular file with O(files[].content); V(directory) - a directory (parents made too); V(absent) -
            nothing at the path (a directory is removed with what it holds).
        type: str
        choices: [file, directory, absent]
        default: file
      content:
        description: The file's text (V(state=file) only; it or O(files[].content_base64) is required there).
        type: str
      content_base64:
        description:
          - The file's bytes, base64-encoded, instead of O(files[].content) - for a binary file such as a key. Its value
            is hidden in Ansible's output (C(no_log)) and its content is never shown in C(--diff).
          - Not compared by M(gpucluster.training.managed_state) - give that module the SHA-1 of the bytes as
            O(files[].checksum); this module ignores O(files[].checksum), so one item serves both.
        type: str
      owner:
        description:
          - Owner name or numeric id (V("0") or V(0)); left as it is when not given. A name the host does not have
            fails the call.
        type: str
      group:
        description:
          - Group name or numeric id; left as it is when not given. A name the host does not have fails the call.
        type: str
      mode:
        description:
          - The mode, read as ansible's file modules read it - octal text (V("0644"), V("644"), V("0o644")), an integer
            taken as the mode itself (an unquoted YAML V(0644) arrives as V(420), which is V("0644")), or a symbolic
            mode (V("u=rw,g=r,o=r"), V("u+x")) applied to the path's present mode. Left as it is when not given.
          - A value that is none of these, or more than the permission bits (V("07777")), fails the call before
            anything is written.
          - M(gpucluster.training.managed_state) reads owner, group and mode the same way, so an item written here is
            no drift there.
        type: raw
      backup:
        description: Keep the old file beside the new one (a timestamped copy) when the content changes.
        type: bool
        default: false
      validate:
        description:
          - Command that checks the new file before it replaces the old one; C(%s) is the new file's path. A non-zero exit
            fails the call and leaves the old file in place.
        type: str
      diff:
        description: Show the content in C(--diff) output; V(false) for a file that holds a secret (only its path shows).
        type: bool
        default: true
      name:
        description: A label for the item (the role's own name for it); returned in RV(changed_names).
        type: str
      checksum:
        description: Ignored - M(gpucluster.training.managed_state) compares by it; accepted so that one item serves both.
        type: str
attributes:
  check_mode:
    description: Writes nothing; reports what would change (the content diff with C(--diff)).
    support: full
  diff_mode:
    description: The content of each changed file before and after (not for O(files[].diff=false)), and attribute changes.
    support: full
notes:
  - Read-only counterpart and item format - M(gpucluster.training.managed_state).
seealso:
  - module: gpucluster.training.managed_state
  - module: ansible.builtin.copy
author:
  - gpucluster.training maintainers (@gpucluster)
"""

EXAMPLES = r"""
- name: Write chrony's directory, configuration and options in one call
  gpucluster.training.managed_files:
    files:
      - {path: /etc/chrony, state: directory, owner: root, group: root, mode: "0755"}
      - {path: /etc/chrony/chrony.conf, content: "{{ lookup('template', 'chrony.conf.j2') }}", owner: root, group: root,
         mode: "0644"}
  notify: Restart chrony

- name: slurm.conf checked by Slurm's own parser before it replaces the old one, the old one kept
  gpucluster.training.managed_files:
    files:
      - path: /etc/slurm/slurm.conf
        content: "{{ rendered }}"
        mode: "0644"
        backup: true
        validate: env SLURM_CONF=%s /usr/bin/scontrol show hostnames localhost
  register: written

- name: A binary key, its value hidden from the output
  gpucluster.training.managed_files:
    files:
      - {path: /etc/munge/munge.key, content_base64: "{{ munge_key_b64 }}", owner: munge, group: munge, mode: "0400"}
  no_log: true
- name: Act on one file of several
  ansible.builtin.debug:
    msg: slurm.conf changed
  when: "'/etc/slurm/slurm.conf' in written.changed_paths"
"""

RETURN = r"""
changed_paths:
  description: The paths that changed (or would, in check mode), in the order given.
  returned: always
  type: list
  elements: str
  sample: [/etc/chrony/chrony.conf]
changed_names:
  description: The O(files[].name) of the changed items that have one.
  returned: always
  type: list
  elements: str
  sample: [slurm.conf]
backups:
  description: "Path: backup file, for each file backed up."
  returned: always
  type: dict
  sample: {/etc/slurm/slurm.conf: /etc/slurm/slurm.conf.12345.2026-12-04@22:10:01~}
msg:
  description: How many items changed of how many.
  returned: always
  type: str
  sample: 1 of 3 item(s) changed
"""

import base64
import os
import shutil

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpucluster.training.plugins.module_utils._file_write import (
    FileWriteError, check_items, ensure_directory, read_bytes, write_file)
from ansible_collections.gpucluster.training.plugins.module_utils._managed_state import file_item_options


def _absent(module, item, diffs):
    path = item["path"]
    if not os.path.lexists(path):
        return False
    diffs.append({"before": {"path": path, "state": "present"}, "after": {"path": path, "state": "absent"}})
    if not module.check_mode:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    return True


def _file(module, item, diffs, backups):
    path = item["path"]
    if os.path.isdir(path):
        raise FileWriteError("%s: a directory, expected a file" % path)
    current = read_bytes(path)
    binary = item.get("content_base64") is not None
    data = base64.b64decode(item["content_base64"]) if binary else item["content"].encode("utf-8")
    shown = item["diff"] and not binary
    if current != data and module._diff:
        diffs.append({"before_header": path, "after_header": path,
                      "before": current.decode("utf-8", "replace") if shown and current is not None else "",
                      "after": item["content"] if shown else "(content hidden: %s)" % ("content_base64" if binary else "diff=false")})
    return write_file(module, item, data, current, diffs, backups)


def main():
    module = AnsibleModule(
        argument_spec=dict(files=dict(type="list", elements="dict", required=True, options=file_item_options(
            ["file", "directory", "absent"],
            content_base64=dict(type="str", no_log=True),
            backup=dict(type="bool", default=False),
            validate=dict(type="str"),
            diff=dict(type="bool", default=True),
            name=dict(type="str"),
        ))),
        supports_check_mode=True,
    )
    items = module.params["files"]
    try:
        check_items(items)
    except FileWriteError as exc:
        module.fail_json(msg=str(exc))
    changed_paths, changed_names, diffs, backups = [], [], [], {}
    for item in items:
        try:
            if item["state"] == "directory":
                changed = ensure_directory(module, item, diffs)
            elif item["state"] == "absent":
                changed = _absent(module, item, diffs)
            else:
                changed = _file(module, item, diffs, backups)
        except (FileWriteError, OSError) as exc:
            module.fail_json(msg="%s (%d item(s) before it were handled: %s changed)" % (
                exc, items.index(item), ", ".join(changed_paths) or "none"), changed=bool(changed_paths),
                changed_paths=changed_paths)
        if changed:
            changed_paths.append(item["path"])
            if item.get("name"):
                changed_names.append(item["name"])
    result = dict(changed=bool(changed_paths), changed_paths=changed_paths, changed_names=changed_names, backups=backups,
                  msg="%d of %d item(s) changed" % (len(changed_paths), len(items)))
    if module._diff:
        result["diff"] = diffs
    module.exit_json(**result)


if __name__ == "__main__":
    main()
