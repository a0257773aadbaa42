# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Documentation every read-only probe module shares (gpu_info, rdma_info)."""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
attributes:
  check_mode:
    description: Read-only probe; runs and returns the same facts in check mode.
    support: full
  diff_mode:
    description: Has no diff output (it changes nothing).
    support: none
"""
