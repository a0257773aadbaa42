# Copyright: contributors to gpucluster.training
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""validate_plot: the report's PNG from the plot data of a judged run of real fixtures."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest

from ansible_collections.gpucluster.training.plugins.module_utils._collective_perf import parse_collective_perf
from ansible_collections.gpucluster.training.plugins.module_utils._validate_judge import judge_run
from ansible_collections.gpucluster.training.plugins.module_utils._validate_plot import PlotError, render_png
from ansible_collections.gpucluster.training.plugins.modules import validate_plot
from ansible_collections.gpucluster.training.tests.unit.plugins.modules.module_harness import Exit, Fail, exits, run_main  # noqa: F401  pylint: disable=unused-import

FIX = Path(__file__).resolve().parents[3] / "fixtures" / "nccl-tests"


def _report():
    # The OCI H100 run attributed to gpu1+gpu2 with its published hardware (16 x 200G RoCE).
    text = (FIX / "nccl_all_reduce_perf_2node_16xH100_OCI_RoCE_ocitutorials.txt").read_text(encoding="utf-8")
    hw = {"gpu": "h100", "gpu_count": 8, "ports": 16, "rate_gbps": 200, "link_layer": "Ethernet"}
    return judge_run([{"node": ["gpu1", "gpu2"], "test": "all_reduce_multi", "hardware": hw,
                       "result": parse_collective_perf(text)}], {"gpu1": None, "gpu2": None})


def _size(png):
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    return width, height


def test_plot_data_and_png():
    report = _report()
    (series,) = report["plot"]["series"]
    assert series["nodes"] == ["gpu1", "gpu2"] and series["limit"] == 418.31 and series["reference_gbs"] == 464.79
    assert series["verdict"] == "pass"
    assert series["points"][-1] == [17179869184, 464.79]
    png = render_png(report["plot"])
    assert _size(png) == (960, 540) and render_png(report["plot"]) == png
    # The PNG is well formed: its IDAT inflates to height rows of 1 + width x 3 bytes.
    start = png.index(b"IDAT") + 4
    length = struct.unpack(">I", png[start - 8:start - 4])[0]
    assert len(zlib.decompress(png[start:start + length])) == 540 * (1 + 960 * 3)
    assert "![bus bandwidth against message size](report.png)" in report["markdown"]


@pytest.mark.parametrize("plot", [None, {"series": "x"}, {"series": [{"points": [[1024, float("nan")]]}]},
                                  {"series": [{"points": [[1024, 10]], "limit": -1}]}])
def test_bad_plot_data(plot):
    with pytest.raises(PlotError):
        render_png(plot)


def test_module_writes_once_then_reports_no_change(tmp_path):
    plot = _report()["plot"]
    dest = tmp_path / "report.png"
    first = run_main(validate_plot.main, {"plot": plot, "dest": str(dest)})
    assert first["changed"] and dest.read_bytes()[:4] == b"\x89PNG" and first["series"] == 1
    assert not run_main(validate_plot.main, {"plot": plot, "dest": str(dest)})["changed"]


def test_module_check_mode_writes_nothing(tmp_path):
    dest = tmp_path / "report.png"
    out = run_main(validate_plot.main, {"plot": _report()["plot"], "dest": str(dest), "_ansible_check_mode": True})
    assert out["changed"] and not dest.exists()


def test_module_fails_clearly(tmp_path):
    out = run_main(validate_plot.main, {"plot": {"series": 3}, "dest": str(tmp_path / "x.png")}, expect=Fail)
    assert out["msg"].startswith("validate_plot:")
