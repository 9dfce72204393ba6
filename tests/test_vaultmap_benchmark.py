"""The vault map's benchmark commands that docs/map.md cites still run, on a small vault (their
figures are not asserted: speed lives in the benchmark, not in timed tests)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import REPO, SHARED_DATA


def test_the_map_speed_and_methods_benchmarks_run(tmp_path: Path) -> None:
    out = tmp_path / "map.json"
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.vaultmap", "speed", "methods", "--files", "300",
         "--methods", "layout:ours,layout:pca,cluster:ours", "--data", str(SHARED_DATA),
         "--workdir", str(tmp_path / "work"), "--json", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    figures = json.loads(out.read_text("utf-8"))
    speed = figures["speed"]
    assert speed["full"]["notes"] > speed["quarter"]["notes"] >= 3
    assert set(speed["full"]["steps"]) >= {"gather", "kNN", "layout", "clusters", "names", "regions", "save", "total"}
    assert speed["full"]["update_how"] == "updated"
    methods = figures["methods"]
    assert 0.0 <= methods["layout:ours"]["preserved"] <= 1.0 and methods["cluster:ours"]["clusters"] >= 2
    assert "## speed" in result.stdout and "## methods" in result.stdout
