# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""torchrun, as the collection's torchrun job steps start it.

Same arguments and behaviour as `torchrun` (torch.distributed.run), with two differences:

- USE_LIBUV=0 in the environment is honoured everywhere. PyTorch >= 2.4 makes TCPStore use
  libuv by default; Debian 13's python3-torch (2.6.0+dfsg) is built without libuv, and
  torchrun's static and c10d rendezvous (and the workers' env:// store when torchrun hosts it)
  create their TCPStore without reading USE_LIBUV, so on Debian's torch every multi-process
  start fails with "use_libuv was requested but PyTorch was build without libuv support".
  patch() gives those TCPStore calls use_libuv=False when USE_LIBUV=0. The training script
  calls patch() too (its process group store).
- A failed worker ends torchrun with the worker's exit code and one line naming the first failed
  rank, and a signal (Slurm's scancel, requeue or time limit) with 128 + its number, without a
  Python traceback of the launcher.

The training scripts also end their workers through end_worker() (see there).
"""

from __future__ import annotations

import os
import sys


def patch():
    """TCPStore without libuv where USE_LIBUV=0 (a no-op otherwise)."""
    if os.environ.get("USE_LIBUV", "1") != "0":
        return
    import importlib

    import torch.distributed as dist

    # importlib: the attribute torch.distributed.rendezvous is a function, not the module.
    modules = [importlib.import_module("torch.distributed." + name) for name in (
        "rendezvous", "elastic.rendezvous.static_tcp_rendezvous", "elastic.rendezvous.c10d_rendezvous_backend")]
    original = dist.TCPStore
    if "use_libuv" not in (original.__init__.__doc__ or ""):
        return  # PyTorch < 2.4 (Debian 12's 1.13): no libuv option, nothing to change

    def tcp_store(*args, **kwargs):
        kwargs.setdefault("use_libuv", False)
        return original(*args, **kwargs)

    for module in modules:
        module.TCPStore = tcp_store


def end_worker(code=0):
    """End a training worker now, after its last collective, without torch's destructors.

    PyTorch 1.13 (Debian 12's python3-torch) can deadlock tearing a gloo process group down: the
    thread that drops the last reference (the DDP Reducer, when the model goes out of scope) holds
    the GIL while ProcessGroupGloo's destructor joins its worker threads, and a worker still
    finishing its last work item needs the GIL to free a tensor that has a Python object. Seen in
    the lab's smoke job (molecule cluster, 5 December 2026): rank 1 hung for good after rank 0
    printed 'smoke: done', its main thread in ProcessGroupGloo::~ProcessGroupGloo ->
    std::thread::join, a gloo worker in c10::TensorImpl::destroy_pyobj_if_needed ->
    PyEval_AcquireThread (gdb). It is a race, so most runs end. The caller has passed its final
    barrier (every collective completed, every file closed): flush the output and exit without
    running the destructors."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # pylint: disable=protected-access


def main():
    patch()
    from torch.distributed.elastic.multiprocessing.api import SignalException
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.run import main as torchrun

    try:
        return torchrun()
    except ChildFailedError as exc:
        failures = exc.failures
        first = failures[min(failures)] if failures else None
        code = first.exitcode if first is not None and first.exitcode > 0 else 1
        print("torchrun: %d worker(s) failed; first: rank %s, exit code %s" % (
            len(failures), min(failures) if failures else "?", first.exitcode if first is not None else "?"), file=sys.stderr)
        return code
    except SignalException as exc:  # Slurm stopping the step (scancel, requeue, time limit)
        print("torchrun: stopped by signal %s" % exc.sigval.name, file=sys.stderr)
        return 128 + int(exc.sigval)


if __name__ == "__main__":
    sys.exit(main())
