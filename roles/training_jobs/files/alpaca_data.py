# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Pure parts of the Alpaca fine-tuning job (finetune_alpaca.py): no torch, no transformers.

Shipped next to finetune_alpaca.py by role gpucluster.training.training_jobs and unit-tested
on the controller (tests/unit/training_jobs/test_alpaca_data.py):

- parse_dataset: an Alpaca-format dataset (a JSON array, as Stanford Alpaca's alpaca_data.json,
  or JSON Lines) -> records; a malformed file raises DatasetError naming the line and record.
- format_prompt: the Stanford Alpaca prompt template (with-input and no-input variants).
- ByteTokenizer: a byte-level tokenizer (256 byte ids + pad/bos/eos) that needs no download.
- encode_example / collate: token ids with the prompt masked out of the labels, padded batches.
- batch_indices: which records each rank trains on at each global step (deterministic, so a
  resumed job sees the same data a job that was never interrupted would have seen).
- lr_at: warmup then cosine learning rate, a function of the step (nothing to checkpoint).
- latest_checkpoint / checkpoints_to_prune: the step directories a job left behind.
- make_lab_dataset: the small generated dataset of the lab (files/alpaca_lab.json).
"""

from __future__ import annotations

import json
import math
import os
import random
import re

# Stanford Alpaca's prompt templates (train.py, PROMPT_DICT), the format the RDMA tutorial's
# job fine-tunes on; the response (output) follows "### Response:".
PROMPT_INPUT = (
    "Below is an instruction that describes a task, paired with an input that provides further context. "
    "Write a response that appropriately completes the request.\n\n"
    "### Instruction:\n{instruction}\n\n### Input:\n{input}\n\n### Response:"
)
PROMPT_NO_INPUT = (
    "Below is an instruction that describes a task. "
    "Write a response that appropriately completes the request.\n\n"
    "### Instruction:\n{instruction}\n\n### Response:"
)
FIELDS = ("instruction", "input", "output")
REQUIRED = ("instruction", "output")
IGNORE_INDEX = -100  # label of prompt and padding tokens (PyTorch's cross-entropy ignore_index)
CHECKPOINT_RE = re.compile(r"^step-(\d+)$")
CHECKPOINT_DONE = "DONE"  # written last, after every rank's shard: a checkpoint without it is incomplete


class DatasetError(ValueError):
    """The dataset file is not valid Alpaca-format data; the message names line and record."""


def _line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def _check_record(obj, number, line):
    where = "record %d (line %d)" % (number, line)
    if not isinstance(obj, dict):
        raise DatasetError("%s: expected an object with instruction/input/output, got %s" % (where, type(obj).__name__))
    missing = [k for k in REQUIRED if k not in obj]
    if missing:
        raise DatasetError("%s: missing field %s" % (where, ", ".join(repr(k) for k in missing)))
    unknown = sorted(set(obj) - set(FIELDS))
    if unknown:
        raise DatasetError("%s: unknown field %s (Alpaca records have %s)" % (where, ", ".join(repr(k) for k in unknown), ", ".join(FIELDS)))
    for key in FIELDS:
        if key in obj and not isinstance(obj[key], str):
            raise DatasetError("%s: field %r must be a string, got %s" % (where, key, type(obj[key]).__name__))
    if not obj["instruction"].strip():
        raise DatasetError("%s: field 'instruction' is empty" % where)
    return {"instruction": obj["instruction"], "input": obj.get("input", ""), "output": obj["output"]}


def _json_error(exc, text, base=0):
    line = _line_of(text, base + exc.pos)
    column = base + exc.pos - (text.rfind("\n", 0, base + exc.pos) + 1) + 1
    return "line %d column %d: %s" % (line, column, exc.msg)


def parse_dataset(text):
    """Alpaca records from a JSON array or from JSON Lines; raises DatasetError."""
    decoder = json.JSONDecoder()
    stripped = text.lstrip()
    if not stripped:
        raise DatasetError("line 1: the dataset file is empty")
    records = []
    if stripped[0] == "[":
        pos = len(text) - len(stripped) + 1
        while True:
            while pos < len(text) and text[pos] in " \t\r\n":
                pos += 1
            if pos < len(text) and text[pos] == "]" and not records:
                pos += 1
                break
            try:
                obj, end = decoder.raw_decode(text, pos)
            except json.JSONDecodeError as exc:
                raise DatasetError("record %d: %s" % (len(records) + 1, _json_error(exc, text))) from None
            records.append(_check_record(obj, len(records) + 1, _line_of(text, pos)))
            pos = end
            while pos < len(text) and text[pos] in " \t\r\n":
                pos += 1
            if pos < len(text) and text[pos] == ",":
                pos += 1
                continue
            if pos < len(text) and text[pos] == "]":
                pos += 1
                break
            raise DatasetError("line %d: expected ',' or ']' after record %d" % (_line_of(text, pos), len(records)))
        if text[pos:].strip():
            raise DatasetError("line %d: text after the closing ']'" % _line_of(text, pos + len(text[pos:]) - len(text[pos:].lstrip())))
    else:
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError("record %d: line %d column %d: %s" % (len(records) + 1, number, exc.colno, exc.msg)) from None
            records.append(_check_record(obj, len(records) + 1, number))
    if not records:
        raise DatasetError("line 1: the dataset has no records")
    return records


def format_prompt(record):
    """The Alpaca prompt of a record (no-input variant when input is empty)."""
    if record.get("input", "").strip():
        return PROMPT_INPUT.format(instruction=record["instruction"], input=record["input"])
    return PROMPT_NO_INPUT.format(instruction=record["instruction"])


class ByteTokenizer:
    """UTF-8 bytes as token ids 0-255, then pad, bos and eos: nothing to download or train.

    Every text has an encoding (no unknown tokens), at the price of longer sequences than a
    subword tokenizer's; for a real model name its tokenizer (--tokenizer <path>) instead.
    """

    pad_token_id = 256
    bos_token_id = 257
    eos_token_id = 258
    vocab_size = 259

    def encode(self, text):
        return list(text.encode("utf-8"))

    def decode(self, ids):
        return bytes(i for i in ids if 0 <= i < 256).decode("utf-8", errors="replace")


def encode_example(tokenizer, record, max_length):
    """(input_ids, labels): bos + prompt + output + eos, truncated; the prompt is not learned."""
    prompt = [tokenizer.bos_token_id] + list(tokenizer.encode(format_prompt(record)))
    answer = list(tokenizer.encode(record["output"])) + [tokenizer.eos_token_id]
    ids = (prompt + answer)[:max_length]
    labels = ([IGNORE_INDEX] * len(prompt) + answer)[:max_length]
    return ids, labels


def collate(examples, pad_token_id):
    """Pad a batch of (ids, labels) to its longest: (input_ids, labels, attention_mask) lists."""
    width = max(len(example[0]) for example in examples)
    input_ids, labels, mask = [], [], []
    for ids, lab in examples:
        pad = width - len(ids)
        input_ids.append(list(ids) + [pad_token_id] * pad)
        labels.append(list(lab) + [IGNORE_INDEX] * pad)
        mask.append([1] * len(ids) + [0] * pad)
    return input_ids, labels, mask


def batch_indices(num_records, world_size, rank, batch_size, step, seed):
    """Record indices of `rank`'s micro batch at global step `step` (0-based).

    Each epoch is a permutation of the records seeded by (seed, epoch); the global batch of a
    step is world_size * batch_size consecutive entries of the concatenated epochs, and rank r
    takes its r-th slice. It depends on nothing but its arguments, so a job resumed at step N
    trains on exactly what an uninterrupted job would have trained on.
    """
    if num_records < 1 or world_size < 1 or batch_size < 1 or not 0 <= rank < world_size or step < 0:
        raise ValueError("batch_indices: bad arguments")
    start = (step * world_size + rank) * batch_size
    out = []
    cache = {}
    for position in range(start, start + batch_size):
        epoch, offset = divmod(position, num_records)
        if epoch not in cache:
            order = list(range(num_records))
            random.Random("%d/%d" % (seed, epoch)).shuffle(order)
            cache[epoch] = order
        out.append(cache[epoch][offset])
    return out


def lr_at(step, total_steps, base_lr, warmup_ratio):
    """Learning rate of optimizer step `step` (1-based): linear warmup, then cosine to 0."""
    warmup = int(math.ceil(total_steps * warmup_ratio))
    if warmup and step <= warmup:
        return base_lr * step / warmup
    span = max(total_steps - warmup, 1)
    progress = min(max(step - warmup, 0) / span, 1.0)
    return base_lr * 0.5 * (1.0 + math.cos(math.pi * progress))


def checkpoint_name(step):
    return "step-%08d" % step


def checkpoint_steps(names, complete):
    """Steps of the complete checkpoints among directory names; complete(name) tells."""
    steps = []
    for name in names:
        match = CHECKPOINT_RE.match(name)
        if match and complete(name):
            steps.append(int(match.group(1)))
    return sorted(steps)


def latest_checkpoint(directory):
    """(step, path) of the newest complete checkpoint under directory, or (0, None)."""
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return 0, None
    steps = checkpoint_steps(names, lambda n: os.path.isfile(os.path.join(directory, n, CHECKPOINT_DONE)))
    if not steps:
        return 0, None
    return steps[-1], os.path.join(directory, checkpoint_name(steps[-1]))


def checkpoints_to_prune(steps, keep):
    """Steps of the checkpoints to delete so that the newest `keep` remain (keep <= 0: none)."""
    steps = sorted(steps)
    return steps[:-keep] if keep > 0 and len(steps) > keep else []


def throughput(samples, tokens, seconds):
    """'samples/s' and 'tokens/s' figures of one step."""
    seconds = max(seconds, 1e-9)
    return samples / seconds, tokens / seconds


_WORDS = ("apple", "river", "stone", "cloud", "tiger", "piano", "lemon", "forest", "candle", "rocket", "garden", "silver")


def make_lab_dataset(count=64, seed=0):
    """A small Alpaca-format dataset for the lab, generated (not downloaded): arithmetic,
    word reversal, sorting and counting tasks with exact answers, about a third without input.
    """
    rng = random.Random(seed)
    records = []
    for i in range(count):
        kind = i % 6
        if kind == 0:
            a, b = rng.randint(2, 99), rng.randint(2, 99)
            records.append({"instruction": "Add the two numbers.", "input": "%d, %d" % (a, b), "output": str(a + b)})
        elif kind == 1:
            word = rng.choice(_WORDS)
            records.append({"instruction": "Reverse the letters of the word.", "input": word, "output": word[::-1]})
        elif kind == 2:
            words = rng.sample(_WORDS, 4)
            records.append({"instruction": "Sort the words alphabetically.", "input": ", ".join(words), "output": ", ".join(sorted(words))})
        elif kind == 3:
            start = rng.randint(1, 40)
            step = rng.randint(2, 5)
            seq = [start + step * k for k in range(5)]
            shown = ", ".join(str(n) for n in seq[:3]) + ", __, " + str(seq[4])
            records.append({"instruction": "Given the following input, find the missing number", "input": shown, "output": str(seq[3])})
        elif kind == 4:
            word = rng.choice(_WORDS)
            records.append({"instruction": "How many letters are in the word %s?" % word, "input": "", "output": str(len(word))})
        else:
            a, b = rng.randint(2, 12), rng.randint(2, 12)
            records.append({"instruction": "What is %d times %d?" % (a, b), "input": "", "output": str(a * b)})
    return records


def dump_dataset(records):
    """The dataset as alpaca_data.json lays it out: a JSON array, one record per line group."""
    return json.dumps(records, indent=4, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    # python3 alpaca_data.py > alpaca_lab.json  (how files/alpaca_lab.json was made)
    import sys

    sys.stdout.write(dump_dataset(make_lab_dataset()))
