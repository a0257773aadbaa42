# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Hypothesis settings for the unit tests: no per-example deadline (a loaded 2-core CI machine
is slow, and a slow example is not a failure), and in CI a derandomized search, so a CI run is
reproducible; a developer's run explores new examples each time."""
import os

from hypothesis import settings

settings.register_profile("gpucluster", deadline=None)
settings.register_profile("gpucluster-ci", deadline=None, derandomize=True)
settings.load_profile("gpucluster-ci" if os.environ.get("CI") else "gpucluster")
