# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Stand-in for the get-pip bootstrap that ansible-test downloads from a host this machine
cannot reach. ansible-test runs it with the pip arguments and packages to install (pip itself
among them); we run pip from CPython's bundled ensurepip wheel and let it install them from
the package index the machine does reach. tools/setup.sh copies it into ansible-test's cache."""
import glob
import os
import sys

import ensurepip

wheels = glob.glob(os.path.join(os.path.dirname(ensurepip.__file__), "_bundled", "pip-*.whl"))
if not wheels:
    sys.exit("get_pip_offline: CPython's bundled pip wheel is missing (ensurepip/_bundled)")
sys.path.insert(0, wheels[0])

from pip._internal.cli.main import main  # noqa: E402  pylint: disable=wrong-import-position

# --no-setuptools / --no-wheel are get-pip.py's own options (pip would refuse them): a
# plain `pip install` of the named packages installs neither anyway.
args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
sys.exit(main(["install"] + args))
