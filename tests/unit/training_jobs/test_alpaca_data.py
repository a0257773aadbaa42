# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The pure part of the fine-tuning job (roles/training_jobs/files/alpaca_data.py), no torch."""
import importlib.util
import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

FILES = Path(__file__).resolve().parents[3] / "roles" / "training_jobs" / "files"
_spec = importlib.util.spec_from_file_location("alpaca_data", FILES / "alpaca_data.py")
ad = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ad)

# The instruction format shown in the RDMA tutorial (004), an Alpaca record.
TUTORIAL_RECORD = {"instruction": "Given the following input, find the missing number", "input": "10, 12, 14, __, 18", "output": "16"}


def test_json_array_and_jsonl_give_the_same_records():
    records = [TUTORIAL_RECORD, {"instruction": "Name a colour.", "output": "blue"}]
    as_array = ad.parse_dataset(json.dumps(records, indent=2))
    as_lines = ad.parse_dataset("\n".join(json.dumps(r) for r in records) + "\n")
    assert as_array == as_lines
    assert as_array[1] == {"instruction": "Name a colour.", "input": "", "output": "blue"}


@pytest.mark.parametrize("text, message", [
    ('[\n  {"instruction": "a", "output": "b"},\n  {"instruction": "c" "output": "d"}\n]', "record 2: line 3 column 23: Expecting ',' delimiter"),
    ('[\n  {"instruction": "a", "output": "b"},\n  {"instruction": "c"}\n]', "record 2 (line 3): missing field 'output'"),
    ('[\n  {"instruction": "a", "output": 16}\n]', "record 1 (line 2): field 'output' must be a string, got int"),
    ('[\n  {"instruction": "a", "output": "b", "answer": "c"}\n]', "record 1 (line 2): unknown field 'answer'"),
    ('[\n  ["a", "b"]\n]', "record 1 (line 2): expected an object"),
    ('[\n  {"instruction": " ", "output": "b"}\n]', "record 1 (line 2): field 'instruction' is empty"),
    ('[\n  {"instruction": "a", "output": "b"}\n  {"instruction": "c", "output": "d"}\n]', "line 3: expected ',' or ']' after record 1"),
    ('[\n  {"instruction": "a", "output": "b"}\n]\n]', "line 4: text after the closing ']'"),
    ('{"instruction": "a", "output": "b"}\n\n{"instruction": "a", output: "b"}\n', "record 2: line 3 column 22: Expecting property name"),
    ("", "line 1: the dataset file is empty"),
    ("[]", "line 1: the dataset has no records"),
])
def test_malformed_files_name_line_and_record(text, message):
    with pytest.raises(ad.DatasetError) as err:
        ad.parse_dataset(text)
    assert message in str(err.value)


@settings(max_examples=60)
@given(st.text(max_size=80))
def test_any_text_gives_records_or_dataset_error(text):
    try:
        records = ad.parse_dataset(text)
    except ad.DatasetError as exc:
        assert "line " in str(exc)
    else:
        assert records and all(set(r) == set(ad.FIELDS) for r in records)


def test_prompt_templates_with_and_without_input():
    with_input = ad.format_prompt(TUTORIAL_RECORD)
    assert with_input.startswith("Below is an instruction that describes a task, paired with an input")
    assert with_input.endswith("### Instruction:\nGiven the following input, find the missing number\n\n### Input:\n10, 12, 14, __, 18\n\n### Response:")
    no_input = ad.format_prompt({"instruction": "Name a colour.", "input": "", "output": "blue"})
    assert "### Input:" not in no_input and no_input.endswith("### Instruction:\nName a colour.\n\n### Response:")


@settings(max_examples=50)
@given(st.text(max_size=60))
def test_byte_tokenizer_round_trips_any_text(text):
    tok = ad.ByteTokenizer()
    ids = tok.encode(text)
    assert all(0 <= i < 256 for i in ids)
    assert tok.decode(ids + [tok.eos_token_id]) == text


def test_only_the_answer_is_learned_and_batches_are_padded():
    tok = ad.ByteTokenizer()
    ids, labels = ad.encode_example(tok, TUTORIAL_RECORD, 512)
    prompt_len = 1 + len(ad.format_prompt(TUTORIAL_RECORD).encode())
    assert ids[0] == tok.bos_token_id and ids[-1] == tok.eos_token_id
    assert labels[:prompt_len] == [ad.IGNORE_INDEX] * prompt_len and labels[prompt_len:] == ids[prompt_len:]
    assert tok.decode(labels[prompt_len:]) == "16"
    short = ad.encode_example(tok, TUTORIAL_RECORD, 20)
    assert len(short[0]) == len(short[1]) == 20
    input_ids, labs, mask = ad.collate([short, (ids, labels)], tok.pad_token_id)
    assert len(input_ids[0]) == len(ids) and input_ids[0][20:] == [tok.pad_token_id] * (len(ids) - 20)
    assert labs[0][20:] == [ad.IGNORE_INDEX] * (len(ids) - 20) and mask[0] == [1] * 20 + [0] * (len(ids) - 20)


def test_batches_cover_each_epoch_once_and_resume_sees_the_same_data():
    n, world, bsz = 10, 2, 1
    first_epoch = [i for step in range(5) for rank in range(world) for i in ad.batch_indices(n, world, rank, bsz, step, 7)]
    assert sorted(first_epoch) == list(range(n))
    # a "resumed" computation of step 3 equals the uninterrupted one (pure function of the step)
    assert ad.batch_indices(n, world, 1, 3, 3, 7) == ad.batch_indices(n, world, 1, 3, 3, 7)
    assert ad.batch_indices(n, world, 0, 2, 0, 7) != ad.batch_indices(n, world, 1, 2, 0, 7)
    with pytest.raises(ValueError):
        ad.batch_indices(n, world, 2, 1, 0, 7)


def test_learning_rate_warms_up_then_decays_to_zero():
    lrs = [ad.lr_at(s, 20, 1e-3, 0.1) for s in range(1, 21)]
    assert lrs[0] == pytest.approx(5e-4) and lrs[1] == pytest.approx(1e-3)
    assert all(a >= b for a, b in zip(lrs[1:], lrs[2:])) and lrs[-1] == pytest.approx(0.0)


def test_latest_complete_checkpoint_and_pruning(tmp_path):
    assert ad.latest_checkpoint(str(tmp_path / "missing")) == (0, None)
    for step, done in ((5, True), (10, True), (15, False)):
        d = tmp_path / ad.checkpoint_name(step)
        d.mkdir()
        if done:
            (d / ad.CHECKPOINT_DONE).write_text("%d\n" % step)
    (tmp_path / "step-abc").mkdir()
    assert ad.latest_checkpoint(str(tmp_path)) == (10, os.path.join(str(tmp_path), "step-00000010"))
    assert ad.checkpoints_to_prune([5, 10, 20], 2) == [5]
    assert ad.checkpoints_to_prune([5, 10], 0) == []


def test_shipped_lab_dataset_is_the_generator_output():
    shipped = (FILES / "alpaca_lab.json").read_text(encoding="utf-8")
    assert shipped == ad.dump_dataset(ad.make_lab_dataset())
    records = ad.parse_dataset(shipped)
    assert len(records) == 64 and 0 < sum(1 for r in records if not r["input"]) < 64
