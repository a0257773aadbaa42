# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Build a stand-in KFD topology tree (class/kfd/kfd/topology/nodes/N/properties) from a real
captured rocminfo output.

TEST TOOL of the lab; never used on a real node. The lab containers have no GPU, so gpu_info
is given a real rocminfo capture (tests/fixtures/rocminfo, see SOURCES.md) and this tree, which
carries for each GPU agent of that capture its KFD node id and PCI location (BDFID) as the
capture printed them, and a render minor of 128 + its position: the lab's stand-in render
nodes /dev/dri/renderD128... (the kernel numbers render nodes from 128 in probe order). Those
minors are the one value not taken from the capture. Parsing here is deliberately independent
of the collection's rocminfo parser. Writes a .tar.gz whose members are relative to the sysfs
root.
"""

from __future__ import annotations

import argparse
import io
import re
import sys
import tarfile


def gpu_agents(text):
    agents = []
    for block in re.split(r"^Agent \d+\s*$", text, flags=re.M)[1:]:
        fields = dict(re.findall(r"^\s{2}([A-Za-z][A-Za-z ]*?):\s+(\S.*?)\s*$", block, flags=re.M))
        if fields.get("Device Type") == "GPU" and not fields.get("Uuid", "").endswith("-XX"):
            agents.append((int(fields["Node"]), int(fields["BDFID"])))
    return agents


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rocminfo", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    with open(args.rocminfo, encoding="utf-8") as handle:
        agents = gpu_agents(handle.read())
    if not agents:
        sys.exit("build_kfd_tree: no GPU agent in %s" % args.rocminfo)
    with tarfile.open(args.out, "w:gz") as tar:
        for position, (node, bdfid) in enumerate(agents):
            data = ("location_id %d\ndomain 0\ndrm_render_minor %d\n" % (bdfid, 128 + position)).encode()
            info = tarfile.TarInfo("class/kfd/kfd/topology/nodes/%d/properties" % node)
            info.size = len(data)
            info.mode = 0o444
            tar.addfile(info, io.BytesIO(data))
    print(len(agents))
    return 0


if __name__ == "__main__":
    sys.exit(main())
