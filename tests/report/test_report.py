"""The HTML report: self-contained, and rendered by headless Chromium with the
leaderboard table and a candidate tree on screen."""

import json
import re
import shutil
import subprocess

import pytest
from typer.testing import CliRunner

from kstrata.cli.main import app
from kstrata.report.html import _json_script, render_report, write_report
from kstrata.report.plots import tree_layout

NETWORK = re.compile(r"""(?:src|href|action|srcset)\s*=\s*["']?\s*(?:https?:)?//|url\(\s*["']?(?:https?:)?//|@import""", re.I)


def _chromium():
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _chromium_cmd(tmp_path, *args):
    return [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", f"--user-data-dir={tmp_path / 'chromium-profile'}", *args]


def test_report_is_self_contained(report_bench, tmp_path):
    out = write_report(report_bench, tmp_path / "r.html")
    html = out.read_text()
    assert not NETWORK.search(html), NETWORK.search(html).group(0)
    assert "<link" not in html and "<script src" not in html
    assert 'id="leaderboard-table"' in html and 'class="tree"' in html
    assert "pytorch / edits" in html and "pytorch / broken" in html
    assert "compile_error/syntax" in html and "incorrect/tolerance" in html
    data = json.loads(re.search(r'id="node-data">(.*?)</script>', html, re.S).group(1))
    nodes = data["run0"]
    assert len(nodes) == 3 and all("sources" in n and "feedback" in n for n in nodes.values())
    assert any(n["diff"].startswith("--- parent/source") for n in nodes.values())


def test_report_of_a_single_run_and_cli(report_bench, tmp_path):
    run_dir = next((report_bench / "runs" / "pytorch" / "edits").iterdir())
    html = render_report(run_dir)
    assert "kstrata run report" in html and 'class="tree"' in html
    env = re.search(r'<section id="environment">.*?</section>', html, re.S).group(0)
    assert "torch" in env and "versions" in env  # from the stored measurement
    res = CliRunner().invoke(app, ["report", str(run_dir), "--out", str(tmp_path / "one.html")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "one.html").is_file()
    res = CliRunner().invoke(app, ["report", str(tmp_path)])
    assert res.exit_code == 2


def test_json_in_script_cannot_close_it_and_layout():
    text = _json_script({"s": "</script><script>alert(1)</script>&"})
    assert "</script" not in text and json.loads(text)["s"].startswith("</script>")
    pos = tree_layout([("r", None), ("a", "r"), ("b", "r"), ("c", "a")])
    assert pos["r"] == (0.5, 0) and pos["c"] == (0.0, 2) and pos["b"] == (1.0, 1)


def test_report_renders_in_chromium(report_bench, tmp_path, capsys):
    if _chromium() is None:
        pytest.skip("chromium not found: install Debian's chromium (apt-get install -y chromium)")
    page = write_report(report_bench, tmp_path / "report.html")
    url = page.resolve().as_uri()
    dom = subprocess.run(_chromium_cmd(tmp_path, "--dump-dom", url), capture_output=True,
                         text=True, timeout=120).stdout
    assert 'data-ready="1"' in dom  # the page's script ran
    table = re.search(r'<table id="leaderboard-table".*?</table>', dom, re.S).group(0)
    assert table.count("<tr>") >= 3 and "pytorch / edits" in table
    tree = re.search(r'<svg class="tree".*?</svg>', dom, re.S).group(0)
    assert tree.count('class="node') == 3 and 'data-verdict="correct"' in tree
    # the first node was clicked on load: its details (source, feedback) are shown
    detail = re.search(r'<div id="node-detail".*?</div>', dom, re.S).group(0)
    assert "source: source" in detail and "feedback" in detail
    shot = tmp_path / "report.png"
    subprocess.run(_chromium_cmd(tmp_path, f"--screenshot={shot}", "--window-size=1280,2000", url),
                   capture_output=True, timeout=120)
    assert shot.is_file() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 20_000
    with capsys.disabled():
        print(f"\nreport screenshot: {shot}")
