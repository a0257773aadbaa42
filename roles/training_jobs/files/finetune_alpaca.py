# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""LLaMA fine-tuning on Alpaca-format data with PyTorch FSDP (role gpucluster.training.training_jobs).

The shape of the RDMA tutorial's job (Stanford Alpaca's train.py under torchrun, FSDP
full_shard with LlamaDecoderLayer auto-wrap), written for Slurm:

- model: transformers' LlamaForCausalLM; --model_name_or_path <local dir> loads real weights
  (never downloaded: HF_HUB_OFFLINE), otherwise a LLaMA-architecture model of the size given by
  --hidden_size/--num_layers/... with random init (the lab's tiny model);
- tokenizer: --tokenizer byte (alpaca_data.ByteTokenizer: UTF-8 bytes, no download) or a local
  tokenizer directory (AutoTokenizer, local files only);
- data: an Alpaca JSON array or JSON Lines file (instruction / input / output), Stanford
  Alpaca's prompt template, the prompt masked out of the loss; a malformed file stops the job
  with the line and record number (exit code 2, no traceback);
- FSDP: FULL_SHARD, each LlamaDecoderLayer its own unit; nccl on GPUs, gloo on CPUs (the lab);
  bf16 mixed precision on GPUs that have it;
- checkpoints: torch.distributed.checkpoint (each rank writes its own shard) under
  <output_dir>/checkpoints/step-<N> every --save_steps steps; a started (or requeued) job resumes
  from the newest complete one: model, optimizer, step counter and data position continue;
- log: rank 0 prints each step's loss, learning rate, samples/s and tokens/s.

<output_dir> must be on a filesystem every node sees (checked at start) and writable by the user who
submitted the job; ``$USER`` / ``${USER}`` (the user the job runs as) and other environment variables
in --output_dir and --data_path are expanded, so one job template gives each user their own run
directory.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import pwd
import shutil
import socket
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import alpaca_data  # noqa: E402  pylint: disable=wrong-import-position


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data_path", required=True, help="Alpaca JSON (array) or JSON Lines file")
    p.add_argument("--output_dir", required=True, help="checkpoints go to <output_dir>/checkpoints (shared by all nodes)")
    p.add_argument("--check_data", action="store_true", help="only validate the dataset file, then exit")
    p.add_argument("--tokenizer", default="byte", help="'byte' or a local tokenizer directory")
    p.add_argument("--model_name_or_path", default="", help="local model directory (empty: random init from the size options)")
    p.add_argument("--hidden_size", type=int, default=64)
    p.add_argument("--intermediate_size", type=int, default=172)
    p.add_argument("--num_layers", type=int, default=2)
    p.add_argument("--num_heads", type=int, default=4)
    p.add_argument("--max_length", type=int, default=512)
    p.add_argument("--per_device_train_batch_size", type=int, default=2)
    p.add_argument("--max_steps", type=int, default=20)
    p.add_argument("--save_steps", type=int, default=5)
    p.add_argument("--save_total_limit", type=int, default=2, help="complete checkpoints kept (0: all)")
    p.add_argument("--learning_rate", type=float, default=3e-3)
    p.add_argument("--weight_decay", type=float, default=0.0)
    p.add_argument("--warmup_ratio", type=float, default=0.1)
    p.add_argument("--max_grad_norm", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--bf16", choices=["auto", "True", "False"], default="auto", help="auto: on GPUs that support it")
    p.add_argument("--tf32", choices=["True", "False"], default="False")
    return p.parse_args(argv)


def fail(message, code=2):
    """One line on stderr from one process per node, then exit (no traceback)."""
    if os.environ.get("LOCAL_RANK", "0") == "0":
        print("finetune: error: %s" % message, file=sys.stderr, flush=True)
    sys.exit(code)


def load_dataset(path):
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        fail("%s: %s" % (path, exc))
    try:
        return alpaca_data.parse_dataset(text)
    except alpaca_data.DatasetError as exc:
        fail("%s: %s" % (path, exc))
    return None


class HFTokenizer:
    """A local tokenizer directory through transformers, with the ByteTokenizer interface."""

    def __init__(self, path):
        from transformers import AutoTokenizer

        self.tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
        self.eos_token_id = self.tok.eos_token_id
        self.bos_token_id = self.tok.bos_token_id if self.tok.bos_token_id is not None else self.tok.eos_token_id
        self.pad_token_id = self.tok.pad_token_id if self.tok.pad_token_id is not None else self.tok.eos_token_id
        self.vocab_size = len(self.tok)

    def encode(self, text):
        return self.tok.encode(text, add_special_tokens=False)


def expand_paths(args):
    """$USER (the user this process runs as, whatever the submitting shell exported) and the
    job's other environment variables in --output_dir and --data_path."""
    os.environ["USER"] = pwd.getpwuid(os.getuid()).pw_name
    args.output_dir = os.path.expandvars(os.path.expanduser(args.output_dir))
    args.data_path = os.path.expandvars(os.path.expanduser(args.data_path))
    return args


def main(argv=None):  # pylint: disable=too-many-locals,too-many-statements
    args = expand_paths(parse_args(argv))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    records = load_dataset(args.data_path)
    if args.check_data:
        print("finetune: %s: %d records, valid" % (args.data_path, len(records)), flush=True)
        return 0

    # torch.distributed.checkpoint's own deprecation notices (TypedStorage, ...), once per rank.
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=UserWarning, module="torch.distributed")
    import torch
    import torch.distributed as dist
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    from torch.distributed.fsdp import MixedPrecision, ShardingStrategy
    from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy
    from transformers import LlamaConfig, LlamaForCausalLM
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer

    import torchrun_compat

    torchrun_compat.patch()
    cuda = torch.cuda.is_available()
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if cuda:
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
        if args.tf32 == "True":
            torch.backends.cuda.matmul.allow_tf32 = True
            torch.backends.cudnn.allow_tf32 = True
    else:
        device = torch.device("cpu")
    dist.init_process_group(backend="nccl" if cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()

    def log(message):
        if rank == 0:
            print("finetune: %s" % message, flush=True)

    def all_fail(ok, message):
        """Every rank stops (exit 2) when any rank is not ok; rank 0 says why."""
        flag = torch.tensor([0 if ok else 1], device=device)
        dist.all_reduce(flag)
        if flag.item():
            if rank == 0:
                print("finetune: error: %s" % message, file=sys.stderr, flush=True)
            dist.destroy_process_group()
            sys.exit(2)

    hosts = [None] * world
    dist.all_gather_object(hosts, "%s/%d" % (socket.gethostname(), local_rank))
    log("job %s restart %s: world_size=%d backend=%s device=%s ranks=%s" % (
        os.environ.get("SLURM_JOB_ID", "-"), os.environ.get("SLURM_RESTART_COUNT", "0"), world,
        dist.get_backend(), device.type, ",".join(hosts)))
    log("dataset %s: %d records" % (args.data_path, len(records)))

    # The checkpoints must be visible to every rank: probe with a file rank 0 writes.
    ckpt_dir = os.path.join(args.output_dir, "checkpoints")
    probe = [os.path.join(args.output_dir, ".shared-%s-%d" % (socket.gethostname(), os.getpid()))]
    dist.broadcast_object_list(probe)
    probe = probe[0]
    written = [""]
    if rank == 0:
        try:
            os.makedirs(ckpt_dir, exist_ok=True)
            with open(probe, "w", encoding="utf-8") as handle:
                handle.write("probe\n")
        except OSError as exc:
            written = ["output_dir %s is not writable by user %s: %s" % (
                args.output_dir, os.environ["USER"], exc.strerror or exc)]
    dist.broadcast_object_list(written)
    all_fail(not written[0], written[0])
    dist.barrier()
    all_fail(os.path.isfile(probe), "output_dir %s is not on a filesystem shared by every node (%s)" % (args.output_dir, ", ".join(hosts)))
    dist.barrier()
    if rank == 0:
        os.remove(probe)

    tokenizer = alpaca_data.ByteTokenizer() if args.tokenizer == "byte" else HFTokenizer(args.tokenizer)
    torch.manual_seed(args.seed)
    if args.model_name_or_path:
        model = LlamaForCausalLM.from_pretrained(args.model_name_or_path, local_files_only=True)
    else:
        config = LlamaConfig(vocab_size=tokenizer.vocab_size, hidden_size=args.hidden_size,
                             intermediate_size=args.intermediate_size, num_hidden_layers=args.num_layers,
                             num_attention_heads=args.num_heads, num_key_value_heads=args.num_heads,
                             max_position_embeddings=args.max_length, pad_token_id=tokenizer.pad_token_id,
                             bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
        model = LlamaForCausalLM(config)
    params = sum(p.numel() for p in model.parameters())
    bf16 = args.bf16 == "True" or (args.bf16 == "auto" and cuda and torch.cuda.is_bf16_supported())
    model = FSDP(
        model,
        auto_wrap_policy=functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={LlamaDecoderLayer}),
        sharding_strategy=ShardingStrategy.FULL_SHARD,
        mixed_precision=MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16, buffer_dtype=torch.bfloat16) if bf16 else None,
        device_id=device,  # torch.device("cpu") on CPUs: FSDP on CPU with gloo (PyTorch >= 2.4)
        sync_module_states=cuda,  # GPUs only (FSDP refuses it on CPU); every rank has the same seed anyway
    )
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=args.weight_decay)
    log("model LlamaForCausalLM %s: %.2fM parameters, FSDP FULL_SHARD over %d ranks (LlamaDecoderLayer units), %s" % (
        args.model_name_or_path or "random init (hidden %d, %d layers, %d heads, vocab %d)" % (
            args.hidden_size, args.num_layers, args.num_heads, tokenizer.vocab_size),
        params / 1e6, world, "bf16" if bf16 else "fp32"))

    start_step, last = 0, None
    step_found, path = alpaca_data.latest_checkpoint(ckpt_dir)
    if path:
        model_sd, optim_sd = get_state_dict(model, optimizer)
        state = {"model": model_sd, "optim": optim_sd}
        dcp.load(state, checkpoint_id=path)
        set_state_dict(model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optim"])
        with open(os.path.join(path, "trainer_state.json"), encoding="utf-8") as handle:
            last = json.load(handle)
        start_step = step_found
        log("resumed from checkpoint %s: step %d, loss %.4f (restart %s)" % (
            path, start_step, last["loss"], os.environ.get("SLURM_RESTART_COUNT", "0")))
    else:
        log("no checkpoint in %s: starting at step 0" % ckpt_dir)
    if start_step >= args.max_steps:
        log("nothing to do: step %d of %d already reached" % (start_step, args.max_steps))

    def save(step, loss):
        began = time.perf_counter()
        target = os.path.join(ckpt_dir, alpaca_data.checkpoint_name(step))
        model_sd, optim_sd = get_state_dict(model, optimizer)
        dcp.save({"model": model_sd, "optim": optim_sd}, checkpoint_id=target)
        dist.barrier()
        if rank == 0:
            with open(os.path.join(target, "trainer_state.json"), "w", encoding="utf-8") as handle:
                json.dump({"step": step, "loss": loss, "world_size": world, "max_steps": args.max_steps}, handle)
            with open(os.path.join(target, alpaca_data.CHECKPOINT_DONE), "w", encoding="utf-8") as handle:
                handle.write("%d\n" % step)
            names = os.listdir(ckpt_dir)
            done = alpaca_data.checkpoint_steps(names, lambda n: os.path.isfile(os.path.join(ckpt_dir, n, alpaca_data.CHECKPOINT_DONE)))
            for old in alpaca_data.checkpoints_to_prune(done, args.save_total_limit):
                shutil.rmtree(os.path.join(ckpt_dir, alpaca_data.checkpoint_name(old)), ignore_errors=True)
        dist.barrier()
        log("checkpoint step %d saved: %s (%d shards, %.2f s)" % (step, target, world, time.perf_counter() - began))

    model.train()
    loss_value = None
    for step in range(start_step + 1, args.max_steps + 1):
        began = time.perf_counter()
        lr = alpaca_data.lr_at(step, args.max_steps, args.learning_rate, args.warmup_ratio)
        for group in optimizer.param_groups:
            group["lr"] = lr
        indices = alpaca_data.batch_indices(len(records), world, rank, args.per_device_train_batch_size, step - 1, args.seed)
        batch = [alpaca_data.encode_example(tokenizer, records[i], args.max_length) for i in indices]
        ids, labels, mask = (torch.tensor(x, device=device) for x in alpaca_data.collate(batch, tokenizer.pad_token_id))
        optimizer.zero_grad(set_to_none=True)
        # Token-weighted loss over the global batch: each rank's sum of token losses over the
        # number of answer tokens of all ranks (FSDP averages gradients over the ranks, hence
        # x world). A rank whose micro batch has no answer token (all truncated) adds zero.
        counts = torch.tensor([float((labels[:, 1:] != alpaca_data.IGNORE_INDEX).sum().item()), float(mask.sum().item()),
                               float(len(indices))], device=device, dtype=torch.float64)
        dist.all_reduce(counts)
        logits = model(input_ids=ids, attention_mask=mask).logits
        loss_sum = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)).float(), labels[:, 1:].reshape(-1),
                                                     ignore_index=alpaca_data.IGNORE_INDEX, reduction="sum")
        (loss_sum * world / max(counts[0].item(), 1.0)).backward()
        model.clip_grad_norm_(args.max_grad_norm)
        optimizer.step()
        total = loss_sum.detach().to(torch.float64).reshape(1)
        dist.all_reduce(total)
        seconds = time.perf_counter() - began
        loss_value = total.item() / max(counts[0].item(), 1.0)
        samples_s, tokens_s = alpaca_data.throughput(counts[2].item(), counts[1].item(), seconds)
        log("step %d/%d loss %.4f lr %.2e samples/s %.1f tokens/s %.0f (global batch %d, %d tokens, %.2f s)" % (
            step, args.max_steps, loss_value, lr, samples_s, tokens_s, int(counts[2].item()), int(counts[1].item()), seconds))
        if step % args.save_steps == 0 or step == args.max_steps:
            save(step, loss_value)

    log("done: step %d of %d%s" % (max(start_step, args.max_steps if loss_value is not None else start_step), args.max_steps,
                                   "" if loss_value is None else ", final loss %.4f" % loss_value))
    dist.barrier()
    dist.destroy_process_group()
    # while the FSDP model still holds the process group: no destructor runs the teardown that
    # can deadlock on Debian 12's torch (torchrun_compat.end_worker)
    torchrun_compat.end_worker(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
