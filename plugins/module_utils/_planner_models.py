# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Model presets of the parallel-layout planner (Llama family), and the planner's error.

PRIVATE to the collection: not a public API, may change without notice.
Dimensions from the model papers and the published config.json files (sources per entry);
the parameter count published with the weights is kept to test the formula against.
"""

from __future__ import annotations


class PlannerError(ValueError):
    """Bad input: unknown preset, wrong type. Rule violations are NOT raised: they are
    returned in ``violations``."""


_LLAMA1 = "Touvron et al. 2023, LLaMA, arXiv:2302.13971 Table 2; HF huggyllama/llama-*/config.json"
_LLAMA2 = "Touvron et al. 2023, Llama 2, arXiv:2307.09288; HF meta-llama/Llama-2-*-hf/config.json"
_LLAMA3 = ("Llama Team 2024, The Llama 3 Herd of Models, arXiv:2407.21783 Table 3; "
           "HF meta-llama/Meta-Llama-3-*/config.json, Llama-3.1-*/config.json")


def _llama(layers, hidden, ffn, heads, kv_heads, vocab, ctx, name, source, published):
    return {
        "name": name,
        "layers": layers,
        "hidden": hidden,
        "ffn_hidden": ffn,
        "heads": heads,
        "kv_heads": kv_heads,
        "vocab": vocab,
        "max_position_embeddings": ctx,
        "swiglu": True,
        "tie_embeddings": False,
        "source": source,
        # Parameter count published with the weights (HF safetensors metadata /
        # planner-reference.md section 4); the unit tests compare the formula against it.
        "published_parameters": published,
    }


# All Llama models: SwiGLU, RMSNorm, untied embeddings, head_dim 128.
MODELS = {
    "llama1-7b": _llama(32, 4096, 11008, 32, 32, 32000, 2048, "LLaMA-1 7B", _LLAMA1,
                        6738415616),
    "llama1-13b": _llama(40, 5120, 13824, 40, 40, 32000, 2048, "LLaMA-1 13B", _LLAMA1,
                         13015864320),
    "llama1-33b": _llama(60, 6656, 17920, 52, 52, 32000, 2048, "LLaMA-1 33B", _LLAMA1,
                         32528943616),
    "llama1-65b": _llama(80, 8192, 22016, 64, 64, 32000, 2048, "LLaMA-1 65B", _LLAMA1,
                         65285660672),
    "llama2-7b": _llama(32, 4096, 11008, 32, 32, 32000, 4096, "Llama 2 7B", _LLAMA2,
                        6738415616),
    "llama2-13b": _llama(40, 5120, 13824, 40, 40, 32000, 4096, "Llama 2 13B", _LLAMA2,
                         13015864320),
    "llama2-70b": _llama(80, 8192, 28672, 64, 8, 32000, 4096, "Llama 2 70B", _LLAMA2,
                         68976648192),
    "llama3-8b": _llama(32, 4096, 14336, 32, 8, 128256, 8192, "Llama 3 8B", _LLAMA3,
                        8030261248),
    "llama3-70b": _llama(80, 8192, 28672, 64, 8, 128256, 8192, "Llama 3 70B", _LLAMA3,
                         70553706496),
    # 405B was only released as Llama 3.1 (128K context).
    "llama3-405b": _llama(126, 16384, 53248, 128, 8, 128256, 131072, "Llama 3.1 405B",
                          _LLAMA3, 405853388800),
    "llama3.1-8b": _llama(32, 4096, 14336, 32, 8, 128256, 131072, "Llama 3.1 8B", _LLAMA3,
                          8030261248),
    "llama3.1-70b": _llama(80, 8192, 28672, 64, 8, 128256, 131072, "Llama 3.1 70B", _LLAMA3,
                           70553706496),
}

MODEL_ALIASES = {
    "llama-7b": "llama1-7b",
    "llama-13b": "llama1-13b",
    "llama-33b": "llama1-33b",
    "llama-30b": "llama1-33b",
    "llama-65b": "llama1-65b",
    "llama3.1-405b": "llama3-405b",
}


def model_names():
    return sorted(MODELS)


def preset_key(name):
    """The MODELS key of a preset name as people write it (case, ``_``, aliases,
    ``llama-2-70b``), or None when there is no such preset."""
    key = name.strip().lower().replace("_", "-").replace(" ", "-")
    key = MODEL_ALIASES.get(key, key)
    if key.startswith("llama-2-") or key.startswith("llama-3-"):
        key = "llama" + key[6:]
    return key if key in MODELS else None
