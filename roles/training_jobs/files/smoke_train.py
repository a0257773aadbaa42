# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Smoke job of gpucluster.training: a real distributed training run on CPUs.

Started by torchrun on every node (through Slurm or playbooks/torchrun_noslurm.yml): joins
the process group with the gloo backend, trains a tiny regression model with
DistributedDataParallel for a few SGD steps and has rank 0 print the all-reduced loss of each
step. It proves the rendezvous, the node ranks and the collectives, not any GPU.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torchrun_compat  # noqa: E402  pylint: disable=wrong-import-position


def say(line):
    """One line of the job log in one write: with unbuffered output (torchrun's log redirects) print()
    writes the text and its newline apart, and a reader that prefixes each line with its rank
    ([default0]:) can read between them and glue the next prefix onto this line."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args(argv)

    torchrun_compat.patch()  # Debian 13's torch has no libuv (USE_LIBUV=0)
    dist.init_process_group(backend="gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)  # same initial weights on every rank
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=args.lr)

    data = torch.Generator().manual_seed(1000 + rank)  # each rank its own shard
    inputs = torch.randn(256, 16, generator=data)
    target = inputs @ torch.linspace(-1.0, 1.0, 16).unsqueeze(1)

    hosts = [None] * world
    dist.all_gather_object(hosts, "%s/%s" % (socket.gethostname(), os.environ.get("LOCAL_RANK", "0")))
    if rank == 0:
        say("smoke: world_size=%d backend=%s ranks=%s" % (world, dist.get_backend(), ",".join(hosts)))

    for step in range(1, args.steps + 1):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(ddp(inputs), target)
        loss.backward()  # DDP all-reduces the gradients over every rank
        optimizer.step()
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        mean /= world
        if rank == 0:
            say("smoke: step %d loss %.6f" % (step, mean.item()))

    dist.barrier()
    if rank == 0:
        say("smoke: done")
    dist.destroy_process_group()
    # while the model (its DDP Reducer) still holds the process group: no destructor runs the
    # teardown that can deadlock on Debian 12's torch (torchrun_compat.end_worker)
    torchrun_compat.end_worker(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
