"""The first screen of ``entropylaw report data/real`` as a reader sees it: headless Chromium
at 1280 x 900 px, saved as figures/report_screenshot.png (docs/results.md shows it), with the
layout measured after load: the page's scroll width, every table box that scrolls sideways
inside the page (its own scroll width past its width, which the page's scroll width does not
see), the first table's bottom edge and the number of runs and of trust flags in it.

    .venv/bin/python analysis/report_screenshot.py [--out figures/report_screenshot.png]

Needs Debian's chromium (``apt-get install -y chromium``).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from entropylaw.figure_sets.base import read_tables  # noqa: E402
from entropylaw.page.assemble import report_html  # noqa: E402

LAYOUT = """<script>
window.addEventListener('load', function(){
  var d = document.body.dataset, t = document.querySelector('table.runs');
  d.viewport = window.innerWidth + 'x' + window.innerHeight;
  d.scrollWidth = document.documentElement.scrollWidth;
  var boxes = document.querySelectorAll('.tablebox, .scroll'), over = [];
  for (var k = 0; k < boxes.length; k++) {
    if (boxes[k].scrollWidth > boxes[k].clientWidth) { over.push(boxes[k].scrollWidth + '>' + boxes[k].clientWidth); }
  }
  d.tablesScrolling = over.join(' ') || 'none';
  d.tableBottom = Math.ceil(t.getBoundingClientRect().bottom);
  d.flags = t.querySelectorAll('tbody .flag').length;
  d.runs = t.querySelectorAll('tbody tr').length - t.querySelectorAll('tr.family').length;
});
</script></body>"""


def chromium(*args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        raise SystemExit("report_screenshot: chromium not found (Debian: apt-get install -y chromium)")
    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    return subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync",
                           "--disable-background-networking", "--disable-component-update",
                           f"--user-data-dir={profile}", "--window-size=1280,900", "--hide-scrollbars", *args],
                          capture_output=True, text=True, timeout=180)


def main(argv) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=str(ROOT / "figures" / "report_screenshot.png"))
    args = p.parse_args(argv)
    t0 = time.time()
    t = read_tables(ROOT / "data/real/*.parquet")
    html, built, _ = report_html(t, title="entropylaw report: data/real", sources=["data/real"])
    print(f"report_screenshot: report of {len(set(t['run_id']))} runs with {len(built)} figures, "
          f"{len(html) // 1024} KiB, built in {time.time() - t0:.0f} s")
    with tempfile.TemporaryDirectory() as tmp:
        page, probe = Path(tmp) / "report.html", Path(tmp) / "probe.html"
        page.write_text(html, encoding="utf-8")
        probe.write_text(html.replace("</body>", LAYOUT, 1), encoding="utf-8")
        res = chromium("--dump-dom", probe.as_uri())
        body = re.search(r"<body([^>]*)>", res.stdout)
        print("report_screenshot: layout after load:",
              dict(re.findall(r'data-([a-z-]+)="([^"]*)"', body.group(1))) if body else res.stderr[-500:])
        res = chromium(f"--screenshot={args.out}", page.as_uri())
        if res.returncode != 0:
            print(res.stderr[-1000:], file=sys.stderr)
            return 1
    print(f"report_screenshot: wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
