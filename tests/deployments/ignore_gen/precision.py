"""Precision and recall of generated ignore files on the corpus, judged by real git.

* Tracked files ignored: for each repository, the file generated from its own tracked
  file list is written to a scratch git repository and `git check-ignore --no-index`
  says which of those tracked files it ignores (every match counts, secrets included).
  The repository's own `.gitignore` files are judged the same way, as the reference.
* Recall: each repository's toolchains (the corpus' `ecosystems` field, recorded when
  the corpus was collected, not our fingerprint) produce the build outputs listed in
  `OUTPUTS`; recall is the share of those paths the generated file ignores.

The corpus is split once into development and held-out repositories
(`tests/data/ignore_gen/split.json`, made before any precision tuning); tuning looks
at the development figures only.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from deployments.ignore_gen.engine import Engine, Options
from tests.deployments.ignore_gen import gitcheck
from tests.deployments.ignore_gen.corpus import records

SPLIT = Path(__file__).resolve().parents[2] / "data" / "ignore_gen" / "split.json"

# What each toolchain writes into a working tree (written with the split, before tuning).
OUTPUTS: dict[str, list[str]] = {
    "python": [
        "__pycache__/m.cpython-311.pyc",
        "pkg/__pycache__/mod.cpython-312.pyc",
        ".venv/bin/python",
        "venv/lib/python3.11/site-packages/x.py",
        "dist/pkg-1.0.tar.gz",
        "pkg.egg-info/PKG-INFO",
        ".pytest_cache/v/cache/nodeids",
        ".mypy_cache/3.11/x.json",
        ".ruff_cache/0.4.0/123",
        ".coverage",
        "htmlcov/index.html",
        ".tox/py311/log/1.log",
    ],
    "node": [
        "node_modules/left-pad/index.js",
        "node_modules/.package-lock.json",
        "npm-debug.log",
        "yarn-error.log",
        "coverage/lcov.info",
        ".eslintcache",
    ],
    "typescript": ["tsconfig.tsbuildinfo"],
    "nextjs": [".next/cache/webpack/x.pack", ".next/server/app.js"],
    "react": ["node_modules/react/index.js"],
    "rust": ["target/debug/app", "target/release/build/x/out/y.rs", "src/main.rs.bk"],
    "go": ["pkg.test", "coverage.out"],
    "gradle": [".gradle/8.5/checksums/x.bin", "build/libs/app.jar", "build/classes/kotlin/main/A.class"],
    "java": ["Foo.class", "hs_err_pid4242.log"],
    "maven": ["target/classes/org/A.class", "target/surefire-reports/x.txt"],
    "kotlin": ["build/classes/kotlin/main/A.class"],
    "dotnet": ["bin/Debug/net8.0/app.dll", "obj/project.assets.json", "App.csproj.user", ".vs/App/v17/x.suo"],
    "php": ["vendor/autoload.php", ".phpunit.result.cache"],
    "laravel": ["vendor/autoload.php", ".phpunit.result.cache"],
    "cpp": ["main.o", "lib.obj", "cmake-build-debug/CMakeCache.txt"],
    "c": ["main.o"],
    "make": ["main.o"],
    "cmake": ["cmake-build-debug/CMakeCache.txt", "CMakeFiles/x.dir/main.o"],
    "swift": [".build/debug/App", ".build/checkouts/x/Package.swift"],
    "swiftpm": [".build/debug/App"],
    "xcode": ["DerivedData/App/Build/x", "App.xcodeproj/xcuserdata/me.xcuserdatad/x.plist"],
    "cocoapods": [],
    "dart": [".dart_tool/package_config.json", "build/app/outputs/app.apk"],
    "flutter": [".dart_tool/package_config.json", ".flutter-plugins", "build/ios/x"],
    "django": ["__pycache__/views.cpython-311.pyc"],
    "fastapi": ["__pycache__/main.cpython-311.pyc"],
    "jupyter": [".ipynb_checkpoints/x-checkpoint.ipynb"],
    "haskell": ["dist-newstyle/cache/plan.json", ".stack-work/x"],
    "elixir": ["_build/dev/lib/x.beam", "deps/x/mix.exs", "erl_crash.dump"],
    "ruby": [".bundle/config", "pkg/x-1.0.gem"],
    "terraform": [".terraform/providers/x", "terraform.tfstate", "terraform.tfstate.backup"],
    "r": [".Rhistory", ".Rproj.user/x"],
    "scala": ["target/scala-3.3.1/classes/A.class", "project/target/x"],
    "sbt": ["target/streams/x", ".bsp/sbt.json"],
}


@dataclass
class Figures:
    repos: int = 0
    tracked: int = 0
    ignored: int = 0
    own_ignored: int = 0
    outputs: int = 0
    caught: int = 0
    examples: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)

    @property
    def ignored_share(self) -> float:
        return self.ignored / self.tracked if self.tracked else 0.0

    @property
    def own_share(self) -> float:
        return self.own_ignored / self.tracked if self.tracked else 0.0

    @property
    def recall(self) -> float:
        return self.caught / self.outputs if self.outputs else 1.0

    def line(self, label: str) -> str:
        return (
            f"{label:<10} repos {self.repos:>3}  tracked {self.tracked:>6}  ignored by ours {self.ignored:>4} "
            f"({100 * self.ignored_share:.3f} %)  by their own {self.own_ignored:>3} ({100 * self.own_share:.3f} %)  "
            f"recall {self.caught}/{self.outputs} = {self.recall:.4f}"
        )


def split() -> dict[str, list[str]]:
    data = json.loads(SPLIT.read_text(encoding="utf-8"))
    return {"development": data["development"], "held_out": data["held_out"]}


def outputs_for(rec: dict) -> list[str]:
    return sorted({p for eco in rec["ecosystems"] for p in OUTPUTS.get(eco, [])})


def measure(engine: Engine, repos: list[str]) -> Figures:
    wanted = set(repos)
    figures = Figures()
    with tempfile.TemporaryDirectory(prefix="ignore-precision-") as tmp:
        for index, rec in enumerate(r for r in records() if r["repo"] in wanted):
            figures.repos += 1
            root = Path(tmp) / str(index)
            gen, own = root / "gen", root / "own"
            gitcheck.init_repo(gen)
            gitcheck.init_repo(own)
            content = engine.generate(rec["files"], None, Options(include_comments=False)).content
            (gen / ".gitignore").write_text(content, encoding="utf-8")
            gitcheck.write_ignores(own, rec["gitignores"])
            hits = gitcheck.ignored(gen, rec["files"])
            figures.tracked += len(rec["files"])
            figures.ignored += len(hits)
            figures.own_ignored += len(gitcheck.ignored(own, rec["files"]))
            figures.examples += [f"{rec['repo']}: {p} ({m.pattern})" for p, m in sorted(hits.items())]
            outputs = outputs_for(rec)
            caught = gitcheck.ignored(gen, outputs)
            figures.outputs += len(outputs)
            figures.caught += len(caught)
            figures.missed += [f"{rec['repo']}: {p}" for p in outputs if p not in caught]
    return figures


def git_available() -> bool:
    return subprocess.run(["git", "--version"], capture_output=True).returncode == 0
