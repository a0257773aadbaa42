#!/usr/bin/python
# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: parallel_plan
short_description: Check a Megatron-LM parallel layout and estimate its memory and throughput
version_added: 0.1.0
description:
  - Checks a tensor x pipeline x context x data parallel layout for LLM training against
    every Megatron-LM start-up rule that applies (world size divisible by TP x PP x CP, TP
    inside one node, heads and KV groups divisible by TP, layers divisible by PP and by
    virtual stages, global batch divisible by micro batch x DP, sequence divisible by TP with
    sequence parallel and by 2 x CP, FP8 only on GPUs that have it, FSDP and optimizer
    constraints, Transformer Engine FP8 GEMM shapes).
  - Estimates, for the most loaded GPU, the weights, gradients and optimizer state as
    Megatron-LM's theoretical memory report counts them and the activations by Korthikanti
    et al. 2022, and whether they fit the GPU memory with a stated headroom.
  - Estimates FLOPs per step as Megatron-LM counts them, and the step time and tokens per
    second per GPU with a throughput model calibrated on published Megatron runs (NeMo's
    H100 tables, the Llama 3 405B runs; see the collection's docs/planner-calibration.md),
    which models
    GEMM efficiency against the per-GPU matrix sizes, flash attention at the BF16 peak (FP8
    speeds up GEMMs only), TP collectives and the CP ring over the node fabric, pipeline
    sends and bubble with interleaving, DP gradient reduce-scatter when not overlapped,
    recomputation. Every plan states the estimate's confidence and assumptions.
  - Fails listing every violation, one line each naming the rule and the numbers, plus the
    nearest valid layouts for the same cluster with their memory estimates.
  - With O(search=true), ranks every valid layout (TP x PP x CP, each with its best VPP,
    micro batch and recomputation) that fits by estimated throughput and returns the plan
    of the best one. The ranking is in tiers - estimates within 5 % of a tier's best (the
    model's error on the published runs) are ties, ordered by the smaller model-parallel
    size TP x PP, as Narayanan et al. 2021 advise. Layouts outside the range of the
    published runs (for example TP 1 for a 70B model, CP at short sequences) are listed
    after the others, marked extrapolated.
  - Pure computation on the controller or the target; changes nothing.
author:
  - gpucluster.training maintainers (@gpucluster)
attributes:
  check_mode:
    description: Can run in check_mode and return the same plan (it changes nothing).
    support: full
  diff_mode:
    description: Has no diff output (it changes nothing).
    support: none
  platform:
    description: Pure Python; runs wherever Ansible runs modules.
    support: full
    platforms: posix
options:
  model:
    description:
      - Model preset. V(llama1-7b), V(llama1-13b), V(llama1-33b), V(llama1-65b) (LLaMA-1),
        V(llama2-7b), V(llama2-13b), V(llama2-70b), V(llama3-8b), V(llama3-70b),
        V(llama3-405b) (Llama 3.1 405B), V(llama3.1-8b), V(llama3.1-70b).
      - Explicit dimensions below override the preset's; without a preset give O(layers),
        O(hidden), O(ffn_hidden), O(heads) and O(vocab).
    type: str
  layers:
    description: Number of transformer layers.
    type: int
  hidden:
    description: Hidden size.
    type: int
  ffn_hidden:
    description: FFN (MLP) hidden size.
    type: int
  heads:
    description: Attention heads.
    type: int
  kv_heads:
    description: KV heads (query groups); defaults to O(heads) without a preset.
    type: int
  vocab:
    description: Vocabulary size (before Megatron's padding to a multiple of 128 x TP).
    type: int
  max_position_embeddings:
    description: Longest sequence the model takes; defaults to the preset's context length.
    type: int
  tie_embeddings:
    description: Input embedding and output layer share weights (all Llama presets are untied).
    type: bool
  nodes:
    description: Number of nodes.
    type: int
    default: 1
  gpus_per_node:
    description:
      - GPUs per node. Defaults to C(count) of gpu_info facts given as O(gpu).
    type: int
  gpu:
    description:
      - A preset name (V(mi300x), V(mi325x), V(mi250x) (one GCD), V(mi210), V(mi100),
        V(a100-40gb), V(a100-80gb), V(h100), V(h200)),
      - or a dict of explicit figures (C(memory_gib) or C(memory_mib), C(bf16_tflops),
        optional C(fp8_tflops), C(fp8), C(interconnect_gbs), C(name), and C(preset) to start
        from a preset),
      - or the C(gpucluster_gpus) facts of C(gpucluster.training.gpu_info) (C(vendor),
        C(count), C(model), C(arch), C(memory_mib), C(slurm_type)), mapped to a preset by
        C(slurm_type) and model name, with the probed memory used as the GPU memory.
    type: raw
    required: true
  tp:
    description: Tensor-parallel size.
    type: int
    default: 1
    aliases: [tensor_model_parallel_size]
  pp:
    description: Pipeline-parallel size.
    type: int
    default: 1
    aliases: [pipeline_model_parallel_size]
  cp:
    description: Context-parallel size.
    type: int
    default: 1
    aliases: [context_parallel_size]
  vpp:
    description: Virtual pipeline stages per pipeline rank (1 = no interleaving).
    type: int
    default: 1
    aliases: [virtual_pipeline_model_parallel_size]
  micro_batch_size:
    description: Micro batch size.
    type: int
    default: 1
    aliases: [mbs]
  global_batch_size:
    description:
      - Global batch size. Defaults to micro batch size x DP, as Megatron does; required
        with O(search=true).
    type: int
    aliases: [gbs]
  seq_length:
    description: Sequence length; defaults to the model's context length.
    type: int
  precision:
    description: Training precision (V(fp8) through Transformer Engine, with bf16 weights).
    type: str
    choices: [bf16, fp8]
    default: bf16
  distributed_optimizer:
    description:
      - Megatron distributed optimizer (optimizer state sharded over DP x CP).
      - Defaults to V(true) unless O(fsdp=true).
    type: bool
  fsdp:
    description: FSDP full_shard (C(--use-torch-fsdp2)); needs PP 1 and no distributed optimizer.
    type: bool
    default: false
  recompute:
    description: Activation recomputation.
    type: str
    choices: [none, selective, full]
    default: none
  sequence_parallel:
    description: Sequence parallelism (used when TP > 1).
    type: bool
    default: true
  flash_attention:
    description:
      - Flash/fused attention, which never stores the attention-score matrix (then
        V(none) and V(selective) recomputation need the same activation memory).
    type: bool
    default: true
  allow_tp_across_nodes:
    description: Accept TP groups that span nodes.
    type: bool
    default: false
  overlap_p2p_comm:
    description: C(--overlap-p2p-comm) (lets the interleaved schedule run with PP 2).
    type: bool
    default: false
  overlap_param_gather:
    description: C(--overlap-param-gather) (needs the distributed optimizer or FSDP).
    type: bool
    default: false
  fp8_param_gather:
    description: C(--fp8-param-gather) (FP8 weights, one byte less per parameter).
    type: bool
    default: false
  tp_comm_overlap:
    description: C(--tp-comm-overlap) (needs sequence parallel; 80% of TP traffic counted as hidden).
    type: bool
    default: false
  overlap_grad_reduce:
    description:
      - C(--overlap-grad-reduce). The DP gradient reduce-scatter then only costs what the last
        micro batch's backward cannot hide; without it the whole reduce-scatter is on the step.
    type: bool
    default: false
  headroom:
    description: Fraction of GPU memory kept free (allocator fragmentation, RCCL/NCCL buffers).
    type: float
    default: 0.1
  mfu:
    description:
      - Override of the calibrated efficiency a large GEMM reaches, as a fraction of the dense
        peak of O(precision) (FP8 peak for V(fp8)). Everything else in the throughput model
        (thin-GEMM penalty, attention, communication, bubble) still applies.
      - Unset (default) uses the calibrated value. Before version 0.2.0 this was a fixed
        model FLOPs utilisation (0.40 bf16, 0.25 fp8) applied to every layout; the MFU an
        estimate implies is now returned as RV(model_flops_utilization).
    type: float
  internode_link:
    description:
      - Link name from the hardware data (for example V(ndr), V(hdr), V(roce-400g)), the
        per-GPU network link for DP, PP and CP traffic between nodes (and TP traffic that
        leaves a node).
    type: str
    default: ib-ndr
  require_fit:
    description: Treat a layout that does not fit the GPU memory as invalid.
    type: bool
    default: true
  search:
    description: Rank all valid layouts that fit by estimated throughput and plan the best.
    type: bool
    default: false
  max_suggestions:
    description: How many nearest valid layouts an invalid layout reports (or layouts a search returns).
    type: int
    default: 5
notes:
  - The memory and throughput figures are estimates with the assumptions returned in RV(assumptions),
    including C(throughput_confidence) (V(medium) inside the calibrated range on a calibrated GPU, else
    V(low)) and its reasons. On the published runs of docs/planner-calibration.md the estimate is within
    9% on the calibration cases and 19% on the hold-out cases.
  - Only H100 is calibrated on published Megatron runs; MI300X uses the H100 constants scaled by measured
    GEMM, attention and HBM ratios, other GPUs the H100 constants unscaled.
  - Hardware figures and their sources live in the collection's C(_hardware.py) module_utils.
seealso:
  - name: Megatron-LM arguments.py
    description: The start-up checks this module mirrors.
    link: https://github.com/NVIDIA/Megatron-LM/blob/main/megatron/training/arguments.py
  - name: Reducing Activation Recomputation in Large Transformer Models
    description: Korthikanti et al. 2022, the activation memory formulas.
    link: https://arxiv.org/abs/2205.05198
  - name: NeMo Framework performance summary (24.12)
    description: Published H100 throughput and layouts the throughput model is calibrated on.
    link: https://docs.nvidia.com/nemo-framework/user-guide/24.12/nemotoolkit/performance/performance_summary.html
"""

EXAMPLES = r"""
- name: Check the ROCm tutorial's layout (fails, TP x PP = 32 > 16 GPUs)
  gpucluster.training.parallel_plan:
    model: llama2-70b
    nodes: 2
    gpus_per_node: 8
    gpu: mi300x
    tp: 8
    pp: 4
    micro_batch_size: 4
    global_batch_size: 64
    seq_length: 4096
    precision: fp8

- name: Plan a valid layout from probed GPU facts
  gpucluster.training.parallel_plan:
    model: llama2-70b
    nodes: "{{ groups['slurm_compute'] | length }}"
    gpu: "{{ ansible_facts.gpucluster_gpus }}"
    tp: 8
    pp: 2
    micro_batch_size: 4
    global_batch_size: 64
    seq_length: 4096
  register: plan

- name: Find the best layout for a custom model on 4 x 8 H100
  gpucluster.training.parallel_plan:
    layers: 48
    hidden: 6144
    ffn_hidden: 16384
    heads: 48
    kv_heads: 8
    vocab: 128256
    max_position_embeddings: 8192
    nodes: 4
    gpus_per_node: 8
    gpu: h100
    global_batch_size: 512
    seq_length: 8192
    search: true
  register: best
"""

RETURN = r"""
valid:
  description: Whether the layout passes every rule (including the memory fit with O(require_fit)).
  returned: always
  type: bool
  sample: true
violations:
  description: One line per broken rule, naming the rule and the numbers.
  returned: always
  type: list
  elements: str
  sample: ["world_size: world size 16 (2 nodes x 8 GPUs) is not divisible by TP x PP x CP = 8 x 4 x 1 = 32"]
plan_warnings:
  description:
    - Things that are allowed but worth knowing (pipeline never fills, partitioned GPU...).
    - Also emitted as Ansible warnings.
  returned: always
  type: list
  elements: str
  sample: []
suggestions:
  description: Nearest valid layouts for the same cluster (only when the layout is invalid).
  returned: always
  type: list
  elements: dict
  sample:
    - {tp: 8, pp: 2, cp: 1, vpp: 1, dp: 1, micro_batch_size: 4, global_batch_size: 64, micro_batches: 16,
       recompute: none, memory_total_gib: 112.31, fits: true, tokens_per_s_per_gpu: 1203.1, extrapolated: [],
       summary: "TP8 PP2 CP1 DP1 MBS4 GBS64 recompute none: 112.3 GiB/GPU (weights+optimizer 72.3, activations 40.0),
         fits, ~1203 tokens/s/GPU"}
layouts:
  description:
    - With O(search=true), the valid layouts that fit, one per TP x PP x CP with its best VPP, micro batch and
      recomputation (same keys as RV(suggestions), plus C(tier) and C(tied)).
    - In tiers of estimated throughput, C(tier) 1 first. A tier holds the best remaining estimate and every layout
      within 5 % of it (C(tied) true when it holds more than one); inside a tier the smaller TP x PP comes first.
    - Layouts outside the range of the published runs the throughput model is calibrated on come last; their
      C(extrapolated) list says why.
  returned: when search is true
  type: list
  elements: dict
  sample: []
model:
  description: The model dimensions used.
  returned: always
  type: dict
  sample: {name: Llama 2 70B, preset: llama2-70b, layers: 80, hidden: 8192, ffn_hidden: 28672, heads: 64,
           kv_heads: 8, vocab: 32000, padded_vocab: 32768, max_position_embeddings: 4096}
gpu:
  description: The GPU figures used and where they came from (preset, gpu_info, explicit).
  returned: always
  type: dict
  sample: {preset: mi300x, name: AMD Instinct MI300X, memory_gib: 192, bf16_tflops: 1307.4, fp8_tflops: 2614.9,
           fp8: true, interconnect_gbs: 896, from: preset}
cluster:
  description: Nodes, GPUs per node and world size.
  returned: always
  type: dict
  sample: {nodes: 2, gpus_per_node: 8, world_size: 16}
layout:
  description: The layout checked (TP, PP, CP, VPP, DP, batch sizes, precision, recompute, optimizer).
  returned: always
  type: dict
  sample: {tp: 8, pp: 2, cp: 1, vpp: 1, dp: 1, micro_batch_size: 4, global_batch_size: 64, seq_length: 4096,
           precision: fp8, recompute: none, sequence_parallel: true, distributed_optimizer: true, fsdp: false}
data_parallel:
  description: Data-parallel size, world size / (TP x PP x CP); null when that does not divide.
  returned: always
  type: int
  sample: 1
micro_batches:
  description: Micro batches per step per pipeline, global batch / (micro batch x DP).
  returned: always
  type: int
  sample: 16
global_batch_size:
  description: Global batch size used.
  returned: always
  type: int
  sample: 64
tokens_per_step:
  description: Global batch x sequence length.
  returned: always
  type: int
  sample: 262144
parameters:
  description: Parameters by the Llama formula (unpadded vocabulary).
  returned: always
  type: int
  sample: 68976648192
parameters_per_gpu:
  description: Parameters on the most loaded GPU, as Megatron's theoretical memory report counts them.
  returned: always
  type: int
  sample: 4311826944
bubble_fraction:
  description: Pipeline bubble, (PP - 1) / (VPP x micro batches).
  returned: always
  type: float
  sample: 0.0625
memory:
  description: Memory estimate of the most loaded GPU; null when the layout's arithmetic is undefined.
  returned: always
  type: dict
  contains:
    weights_and_optimizer_gib:
      description: Weights, gradients and optimizer state (Megatron 18 bytes/param, 6 + 12/d with the distributed optimizer).
      type: float
      sample: 72.283
    activations_gib:
      description: Activations of the first pipeline stage (Korthikanti et al. 2022 Table 2).
      type: float
      sample: 40.031
    total_gib:
      description: Sum of the two.
      type: float
      sample: 112.314
    gpu_memory_gib:
      description: GPU memory used for the comparison.
      type: float
      sample: 192
    usable_gib:
      description: GPU memory less the headroom.
      type: float
      sample: 172.8
    headroom_fraction:
      description: Headroom kept free.
      type: float
      sample: 0.1
    fits:
      description: Whether total_gib <= usable_gib.
      type: bool
      sample: true
    bytes_per_parameter:
      description: Bytes per parameter of weights, gradients and optimizer state.
      type: float
      sample: 18.0
    activations_per_layer_gib:
      description: Activations of one layer for one micro batch.
      type: float
      sample: 0.5
flops_per_step:
  description: Model FLOPs of one step as Megatron-LM counts them (no recompute).
  returned: always
  type: float
  sample: 1.1653064035821158e+17
step_time_s:
  description: Estimated step time (calibrated throughput model); null without peak TFLOP/s.
  returned: always
  type: float
  sample: 13.6177
tokens_per_s_per_gpu:
  description: Global batch x sequence / (step time x GPUs), as ROCm's train_llama2.sh reports it.
  returned: always
  type: float
  sample: 1203.1
tflops_per_gpu:
  description: Model TFLOP/s per GPU at the estimated step time, as Megatron-LM logs it.
  returned: always
  type: float
  sample: 534.8
model_flops_utilization:
  description: Model TFLOP/s per GPU of the estimate divided by the dense peak of the precision (FP8 peak for fp8).
  returned: always
  type: float
  sample: 0.205
step_time_parts_s:
  description:
    - Where the estimated step time goes, seconds (gemm, attention, elementwise, layer_overhead, tp_communication,
      cp_communication, recompute, output_layer, pp_p2p, pipeline_bubble, dp_communication, optimizer).
  returned: always
  type: dict
  sample: {gemm: 7.11, attention: 0.67, elementwise: 1.17, tp_communication: 3.58, pipeline_bubble: 0.8}
assumptions:
  description:
    - The assumptions behind the estimates (mfu override, peak, headroom, flash attention, link), the calibrated
      constants, and C(throughput_confidence) (V(medium) or V(low)) with C(throughput_confidence_reasons).
  returned: always
  type: dict
  sample: {mfu: null, peak_tflops: 2614.9, headroom_fraction: 0.1, flash_attention: true, internode_link: ib-ndr,
           throughput_confidence: low, throughput_confidence_reasons: ["GPU mi300x has no published Megatron run ..."]}
summary:
  description: One line on the layout checked (as in RV(suggestions)); null when its arithmetic is undefined.
  returned: always
  type: str
  sample: "TP8 PP2 CP1 DP1 MBS4 GBS64 recompute none: 112.3 GiB/GPU (weights+optimizer 72.3, activations 40.0), fits, ~1203 tokens/s/GPU"
megatron_args:
  description: Megatron-LM arguments for a valid layout (empty when invalid).
  returned: always
  type: list
  elements: str
  sample: ["--tensor-model-parallel-size", "8", "--pipeline-model-parallel-size", "2"]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpucluster.training.plugins.module_utils import _planner

_PLANNER_KEYS = (
    "model", "layers", "hidden", "ffn_hidden", "heads", "kv_heads", "vocab",
    "max_position_embeddings", "tie_embeddings", "nodes", "gpus_per_node", "gpu", "tp", "pp",
    "cp", "vpp", "micro_batch_size", "global_batch_size", "seq_length", "precision",
    "distributed_optimizer", "fsdp", "recompute", "sequence_parallel", "flash_attention",
    "allow_tp_across_nodes", "overlap_p2p_comm", "overlap_param_gather", "fp8_param_gather",
    "tp_comm_overlap", "overlap_grad_reduce", "headroom", "mfu", "internode_link", "require_fit",
)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            model=dict(type="str"),
            layers=dict(type="int"),
            hidden=dict(type="int"),
            ffn_hidden=dict(type="int"),
            heads=dict(type="int"),
            kv_heads=dict(type="int"),
            vocab=dict(type="int"),
            max_position_embeddings=dict(type="int"),
            tie_embeddings=dict(type="bool"),
            nodes=dict(type="int", default=1),
            gpus_per_node=dict(type="int"),
            gpu=dict(type="raw", required=True),
            tp=dict(type="int", default=1, aliases=["tensor_model_parallel_size"]),
            pp=dict(type="int", default=1, aliases=["pipeline_model_parallel_size"]),
            cp=dict(type="int", default=1, aliases=["context_parallel_size"]),
            vpp=dict(type="int", default=1, aliases=["virtual_pipeline_model_parallel_size"]),
            micro_batch_size=dict(type="int", default=1, aliases=["mbs"]),
            global_batch_size=dict(type="int", aliases=["gbs"]),
            seq_length=dict(type="int"),
            precision=dict(type="str", default="bf16", choices=["bf16", "fp8"]),
            distributed_optimizer=dict(type="bool"),
            fsdp=dict(type="bool", default=False),
            recompute=dict(type="str", default="none", choices=["none", "selective", "full"]),
            sequence_parallel=dict(type="bool", default=True),
            flash_attention=dict(type="bool", default=True),
            allow_tp_across_nodes=dict(type="bool", default=False),
            overlap_p2p_comm=dict(type="bool", default=False),
            overlap_param_gather=dict(type="bool", default=False),
            fp8_param_gather=dict(type="bool", default=False),
            tp_comm_overlap=dict(type="bool", default=False),
            overlap_grad_reduce=dict(type="bool", default=False),
            headroom=dict(type="float", default=0.1),
            mfu=dict(type="float"),
            internode_link=dict(type="str", default="ib-ndr"),
            require_fit=dict(type="bool", default=True),
            search=dict(type="bool", default=False),
            max_suggestions=dict(type="int", default=5),
        ),
        supports_check_mode=True,
    )
    params = module.params
    spec = dict((key, params[key]) for key in _PLANNER_KEYS)
    if params["max_suggestions"] < 0:
        module.fail_json(msg="max_suggestions must be >= 0, got %d" % params["max_suggestions"])
    try:
        if params["search"]:
            result = _planner.plan_search(spec, max(params["max_suggestions"], 1))
        else:
            result = _planner.plan(spec, params["max_suggestions"])
    except _planner.PlannerError as exc:
        module.fail_json(msg="parallel_plan: %s" % exc)
    # "warnings" is reserved by Ansible for its own warnings: surface them as such and
    # return them under plan_warnings as well.
    result["plan_warnings"] = result.pop("warnings")
    for text in result["plan_warnings"]:
        module.warn(text)
    if not result["valid"]:
        module.fail_json(msg=_planner.format_failure(result), changed=False, **result)
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
