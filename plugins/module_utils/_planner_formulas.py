# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Closed-form formulas of the parallel-layout planner: parameters, Megatron vocabulary
padding, optimizer-state and activation memory, pipeline bubble, model FLOPs.

PRIVATE to the collection: not a public API, may change without notice.

Sources (checked at their source before tests relied on them):
- Weights and optimizer: Megatron-LM ``megatron/training/theoretical_memory_usage.py``
  (18 bytes/param, 6 + 12/d with the distributed optimizer); ZeRO (Rajbhandari et al.
  2020, arXiv:1910.02054, section 3.1, Fig. 1).
- Activations: Korthikanti et al. 2022, arXiv:2205.05198, section 4, Table 2, with the MLP
  term written for any ffn_hidden as Megatron's theoretical memory report does.
- FLOPs: Megatron-LM ``num_floating_point_operations`` (v0.9 training.py; Narayanan et al.
  2021, arXiv:2104.04473, appendix).
- Bubble: Narayanan et al. 2021 section 2.2: (p-1)/m, interleaved (p-1)/(v*m).
- Parameters: the Llama formula P = L*(2h^2 + 2h*kv*d + 3h*ffn + 2h) + 2Vh + h.
"""

from __future__ import annotations

from ansible_collections.gpucluster.training.plugins.module_utils._planner_models import (
    PlannerError,
)

GIB = 1024 ** 3

# Megatron-LM default --make-vocab-size-divisible-by (arguments.py).
VOCAB_DIVISIBLE_BY = 128


def parameter_count(layers, hidden, ffn_hidden, heads, kv_heads, vocab, tie_embeddings=False):
    """Llama parameter count P = L*(2h^2 + 2h*kv*d + 3h*ffn + 2h) + 2Vh + h, exact.

    (d = h/heads; q and o projections are h x heads*d = h x h; k and v are h x kv*d;
    SwiGLU has three h x ffn matrices; two RMSNorm weights per layer, one final norm;
    untied input embedding and output layer, V x h each.)
    """
    d = hidden // heads
    per_layer = (2 * hidden * heads * d + 2 * hidden * kv_heads * d + 3 * hidden * ffn_hidden
                 + 2 * hidden)
    embeddings = (1 if tie_embeddings else 2) * vocab * hidden
    return layers * per_layer + embeddings + hidden


def padded_vocab(vocab, tp, divisible_by=VOCAB_DIVISIBLE_BY):
    """Megatron's ``_vocab_size_with_padding``: round V up to a multiple of 128*TP."""
    multiple = divisible_by * tp
    return -(-vocab // multiple) * multiple


def zero_model_state_bytes(params, stage, n_d, k=12):
    """ZeRO (Rajbhandari et al. 2020 section 3.1): mixed-precision Adam model states per
    GPU, 2+2+K bytes per parameter. stage 0: (4+K)P; 1 (P_os): 4P + KP/N_d;
    2 (P_os+g): 2P + (2+K)P/N_d; 3 (P_os+g+p): (4+K)P/N_d."""
    if stage == 0:
        return (4 + k) * params
    if stage == 1:
        return 4 * params + k * params / n_d
    if stage == 2:
        return 2 * params + (2 + k) * params / n_d
    if stage == 3:
        return (4 + k) * params / n_d
    raise PlannerError("ZeRO stage must be 0, 1, 2 or 3, got %r" % (stage,))


def megatron_bytes_per_parameter(distributed_optimizer, d, param_dtype="bf16"):
    """Bytes per parameter in Megatron (docs/user-guide/features/dist_optimizer.md):
    bf16 params + fp32 grads 18 -> 6 + 12/d; fp16 20 -> 4 + 16/d; fp32 16 -> 8 + 8/d."""
    table = {"bf16": (18.0, 6.0, 12.0), "fp16": (20.0, 4.0, 16.0), "fp32": (16.0, 8.0, 8.0)}
    if param_dtype not in table:
        raise PlannerError("param dtype must be one of bf16, fp16, fp32, got %r" % (param_dtype,))
    full, kept, sharded = table[param_dtype]
    if not distributed_optimizer:
        return full
    return kept + sharded / d


def activation_bytes_per_layer(s, b, h, a, t=1, recompute="none", sequence_parallel=True,
                               ffn_hidden=None, flash_attention=False, fp8=False):
    """Korthikanti et al. 2022 Table 2, bytes of activations of one transformer layer.

    With ffn_hidden = 4h (the paper's case):
      none:                sbh(10 + 24/t + 5as/(ht));   with SP: sbh/t (34 + 5as/h)
      selective:           sbh(10 + 24/t);              with SP: 34 sbh/t
      full:                2sbh                         with SP: 2sbh/t (sharded input)
    Any other ffn_hidden: 24 -> 8 + 4*ffn/h and 34 -> 18 + 4*ffn/h, as Megatron's
    theoretical_memory_usage.py writes it. flash_attention: the 5as^2b attention-score term
    is never stored (fused/flash attention recomputes it), so none == selective.
    fp8: Transformer Engine keeps the input of each FP8 linear layer for its weight
    gradient as FP8 (1 byte, not 2: TransformerEngine issue #1764, "we cache the FP8 data
    (on Blackwell) or the FP8 transpose data (on Hopper)"): the QKV, projection, FC1 and
    FC2 inputs (2 + 2 + 2 + 2 ffn/h bytes per sbh) halve, 3 + ffn/h bytes per sbh less.
    """
    f = 4.0 if ffn_hidden is None else float(ffn_hidden) / h
    sp = sequence_parallel and t > 1
    sbh = float(s) * b * h
    if recompute == "full":
        return 2.0 * sbh / (t if sp else 1)
    score = 0.0 if (recompute == "selective" or flash_attention) else 5.0 * a * s / h
    # FP8 linear inputs: QKV and FC1 inputs (replicated without SP), projection and FC2
    # inputs (split by TP).
    replicated_fp8, split_fp8 = (2.0, 1.0 + f) if fp8 else (0.0, 0.0)
    if sp:
        return sbh / t * (18.0 + 4.0 * f + score - replicated_fp8 - split_fp8)
    return sbh * (10.0 - replicated_fp8 + (8.0 + 4.0 * f - split_fp8) / t + score / t)


def bubble_fraction(pp, micro_batches, vpp=1):
    """Pipeline bubble (Narayanan et al. 2021 section 2.2): (p-1)/(v*m)."""
    return (pp - 1) / float(vpp * micro_batches)


def megatron_flops(gbs, seq, layers, hidden, ffn_hidden, heads, kv_heads, vocab, swiglu=True):
    """Model FLOPs of one training step as Megatron-LM counts them (v0.9
    ``num_floating_point_operations``; forward + backward, no recompute)."""
    d = hidden // heads
    ratio = heads * d / float(hidden)
    gated = 1.5 if swiglu else 1.0
    return (12.0 * gbs * seq * layers * hidden * hidden * (
        (1.0 + kv_heads / float(heads) + seq / float(hidden)) * ratio
        + (ffn_hidden / float(hidden)) * gated
        + vocab / (2.0 * layers * hidden)))
