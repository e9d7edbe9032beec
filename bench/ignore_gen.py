"""Ignore-file generation time for 1k, 10k and 100k-path trees: in-process and through Serve.

Peer, measured in the same run: BASELINE = the original project's fingerprinting
as its reference note describes it (occam-gitignore 0.3.0, re-implemented here,
not its code): for every marker and extension, a scan over all paths with
`p == name or p.endswith("/" + name)` / `p.endswith(ext)`. Both sides then
render with the same engine, so the ratio isolates fingerprinting strategy
(ours also runs the kept-fixture pass, which the peer does not have).

Trees: `corpus` (realistic: the 40 corpus repositories side by side as one monorepo,
each in `git ls-files` order, repeated under other folder names past 28,760 paths) and
`synthetic` (a shuffled monorepo of random folders, where most folders hold one file).
Ours runs twice: with the compiled per-path passes (`_fastpaths.c`, built by `pip install -e .`
or `python scripts/build_ext.py`) and with their pure-Python twins (`passes.py`), in the same run.
The garbage collector stays on; the engine is loaded and `gc.freeze()`d first, as the
service's replica does at start (deployment.py). Wall-clock percentiles, plus our CPU-time
percentiles from the same calls (less sensitive to other processes on the machine), and the
garbage collections the compiled runs started (per 100 generations, generation 0/1/2, with the
collector's time per generation: a count that the machine's load does not change); the load average is printed with
each row. `--sizes` picks the tree sizes.

Usage:
    python bench/ignore_gen.py                 # in-process, then starts its own `rayfleet up --only ignore_gen`
    RAYFLEET_URL=http://127.0.0.1:8000 python bench/ignore_gen.py   # use a running cluster
    python bench/ignore_gen.py --no-serve
    python bench/ignore_gen.py --instructions  # instructions per generation under callgrind (load-independent)
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from deployments.ignore_gen import passes  # noqa: E402
from deployments.ignore_gen.engine import Engine, Options  # noqa: E402
from deployments.ignore_gen.fingerprint import ALWAYS, Fingerprint, normalise  # noqa: E402
from deployments.ignore_gen.rules_table import load_rules_table  # noqa: E402
from deployments.ignore_gen.templates import load_templates  # noqa: E402
from rayfleet.launcher import launch  # noqa: E402
from tests.deployments.ignore_gen.trees import make_tree, tree_of  # noqa: E402

SIZES = (1_000, 10_000, 100_000)
RUNS = {1_000: 1000, 10_000: 300, 100_000: 30}  # ours: p99 from >= 300 samples at 1k and 10k
PEER_RUNS = {1_000: 300, 10_000: 60, 100_000: 5}  # the peer is 5-20x slower: fewer samples
TREES = ("corpus", "synthetic")
SERVE_RUNS = {1_000: 100, 10_000: 40, 100_000: 10}

# The original's table (reference note): markers matched by equality or "/"+name
# suffix, case-sensitive; extensions by endswith.
BASELINE_RULES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "python": (("pyproject.toml", "requirements.txt", "setup.py", "setup.cfg"), (".py",)),
    "node": (("package.json",), (".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx")),
    "go": (("go.mod",), (".go",)),
    "rust": (("Cargo.toml",), (".rs",)),
    "docker": (("Dockerfile", "docker-compose.yml", "docker-compose.yaml"), ()),
    "terraform": ((), (".tf", ".tfvars")),
    "jupyter": ((), (".ipynb",)),
    "java": (
        ("pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts"),
        (".java", ".kt", ".kts", ".gradle"),
    ),
    "ruby": (("Gemfile", "Rakefile"), (".rb", ".gemspec")),
    "csharp": ((), (".csproj", ".sln", ".cs", ".fsproj", ".vbproj")),
    "swift": (("Package.swift",), (".swift",)),
    "ml": ((), (".pt", ".onnx", ".gguf", ".safetensors")),
}


def baseline_fingerprint(tree: Sequence[str]) -> Fingerprint:
    """Linear scan per rule (the peer). Paths normalised like ours so outputs compare."""
    paths = [normalise(p) for p in tree]
    found: dict[str, str] = {}
    for feature, (markers, exts) in BASELINE_RULES.items():
        hits = [p for p in paths for m in markers if p == m or p.endswith("/" + m)]
        hits += [p for p in paths for e in exts if p.endswith(e)]
        if hits:
            found[feature] = min(hits)
    for feature in ALWAYS:
        found.setdefault(feature, "(implicit)")
    return Fingerprint(found)


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p50 = statistics.median(ordered)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return p50 * 1000, p99 * 1000


class Collections:
    """The garbage collections of each generation (0, 1, 2) while in use, and their wall time
    (`gc.callbacks`): the counts do not depend on the machine's load, the time does."""

    def __init__(self) -> None:
        self.counts = [0, 0, 0]
        self.seconds = 0.0
        self._started = 0.0

    def __enter__(self) -> Collections:
        gc.callbacks.append(self._note)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._note)

    def _note(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.counts[info["generation"]] += 1
            self.seconds += time.perf_counter() - self._started

    def per(self, runs: int) -> str:
        """Collections per 100 calls, generation 0/1/2, and the collector's ms per call."""
        counts = "/".join(f"{100 * n / runs:.3g}" for n in self.counts)
        return f"{counts} {1000 * self.seconds / runs:.2f}ms"


def timed(fn: Callable[[], object], runs: int) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU (this thread's) seconds of each of `runs` calls, after one warm-up."""
    fn()
    wall, cpu = [], []
    for _ in range(runs):
        start, used = time.perf_counter(), time.thread_time()
        fn()
        cpu.append(time.thread_time() - used)
        wall.append(time.perf_counter() - start)
    return wall, cpu


def generators(engine: Engine, tree: list[str]) -> dict[str, Callable[[], object]]:
    options = Options()

    def ours() -> None:
        if not engine.generate(tree, None, options).content:
            raise RuntimeError("empty output")  # count only successful answers

    def peer() -> None:
        fp = baseline_fingerprint(tree)
        if not engine.render(engine.select(fp, ()), fp.features, options):
            raise RuntimeError("empty output")

    return {"ours": ours, "peer": peer}


def in_process(engine: Engine, kind: str, sizes: Sequence[int] = SIZES) -> None:
    """Ours with the compiled per-path passes (C) and with their pure-Python twins (py), and the
    peer, one size after the other in the same run."""
    print(
        f"{'paths':>8} {'C p50':>9} {'C p99':>9} {'C cpu50':>8} {'C cpu99':>8} {'n':>5}"
        f" {'py p50':>9} {'py p99':>9} {'py cpu50':>8} {'n':>4}"
        f" {'base p50':>9} {'base p99':>9} {'n':>4} {'py/C cpu':>8} {'base/C p50':>10}"
        f" {'C gc/100 0/1/2, ms/call':>24}  load avg"
    )
    for size in sizes:
        run = generators(engine, tree_of(kind, size))
        if not passes.use_compiled(True):
            raise SystemExit("the C extension is not built: python scripts/build_ext.py")
        with Collections() as collected:
            ours, cpu = timed(run["ours"], RUNS[size])
        passes.use_compiled(False)
        twin, twin_cpu = timed(run["ours"], PEER_RUNS[size])
        passes.use_compiled(True)
        theirs, _ = timed(run["peer"], PEER_RUNS[size])
        (o50, o99), (c50, c99) = percentiles(ours), percentiles(cpu)
        (t50, t99), (tc50, _) = percentiles(twin), percentiles(twin_cpu)
        b50, b99 = percentiles(theirs)
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
        print(
            f"{size:>8} {o50:>7.2f}ms {o99:>7.2f}ms {c50:>6.2f}ms {c99:>6.2f}ms {len(ours):>5}"
            f" {t50:>7.2f}ms {t99:>7.2f}ms {tc50:>6.2f}ms {len(twin):>4}"
            f" {b50:>7.2f}ms {b99:>7.2f}ms {len(theirs):>4} {tc50 / c50:>7.1f}x {b50 / o50:>9.1f}x"
            f" {collected.per(len(ours)):>24}  {load}"
        )


def repeat(engine: Engine, kind: str, size: int, who: str, times: int) -> None:
    """Run one side `times` times after one warm-up (the --instructions child)."""
    passes.use_compiled(who != "ours-py")
    fn = generators(engine, tree_of(kind, size))["peer" if who == "peer" else "ours"]
    fn()
    for _ in range(times):
        fn()


def instructions(kind: str, size: int, times: int) -> None:
    """Instructions per generation, ours and the peer's, under callgrind: a run with `times`
    generations minus a run with none. Load-independent, but valgrind replaces the C
    library's string functions (memchr, memcmp, ...) with plain loops, so C-level string
    passes count more instructions than they cost on the CPU."""
    counts: dict[str, float] = {}
    for who in ("ours", "ours-py", "peer"):
        totals = []
        for n in (0, times):
            with tempfile.TemporaryDirectory() as tmp:
                out = subprocess.run(
                    [
                        "valgrind",
                        "--tool=callgrind",
                        f"--callgrind-out-file={tmp}/out",
                        sys.executable,
                        __file__,
                        "--repeat",
                        kind,
                        str(size),
                        who,
                        str(n),
                    ],
                    capture_output=True,
                    text=True,
                    check=True,
                )
            found = re.search(r"Collected : ([\d,]+)", out.stderr)
            if found is None:
                raise RuntimeError(out.stderr[-2000:])
            totals.append(int(found.group(1).replace(",", "")))
        counts[who] = (totals[1] - totals[0]) / times
    print(
        f"{kind} {size} paths: ours {counts['ours'] / 1e6:.1f} M instructions per generation (C passes), "
        f"{counts['ours-py'] / 1e6:.1f} M with the Python twins ({counts['ours-py'] / counts['ours']:.1f}x), "
        f"peer {counts['peer'] / 1e6:.1f} M ({counts['peer'] / counts['ours']:.1f}x)"
    )


def through_serve(base_url: str) -> list[tuple[int, tuple[float, float], tuple[float, float]]]:
    import httpx

    rows = []
    with httpx.Client(base_url=base_url, timeout=120.0, trust_env=False) as client:
        for size in SIZES:
            body = json.dumps({"tree": make_tree(size)}).encode()
            headers = {"content-type": "application/json"}

            def generate() -> None:
                r = client.post("/ignore/generate", content=body, headers=headers)
                r.raise_for_status()

            def health() -> None:
                client.get("/ignore/healthz").raise_for_status()

            rows.append(
                (
                    size,
                    percentiles(timed(generate, SERVE_RUNS[size])[0]),
                    percentiles(timed(health, SERVE_RUNS[size])[0]),
                )
            )
    return rows


def precision(engine: Engine, show: int) -> None:
    """Tracked files ignored and build-output recall, development vs held-out repositories."""
    from tests.deployments.ignore_gen.precision import measure, split

    print("precision (real git check-ignore on each repository's tracked files) and recall of build outputs")
    for label, repos in split().items():
        figures = measure(engine, repos)
        print(figures.line(label))
        for line in figures.examples[:show]:
            print("   ignored:", line)
        for line in figures.missed[:show]:
            print("   missed: ", line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-serve", action="store_true")
    parser.add_argument("--precision", action="store_true", help="only the precision/recall figures per split")
    parser.add_argument("--show", type=int, default=0, help="with --precision: list this many ignored/missed paths")
    parser.add_argument("--trees", default=",".join(TREES), help="comma-separated: corpus, synthetic")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="in-process tree sizes, comma-separated")
    parser.add_argument("--instructions", action="store_true", help="instructions per generation under callgrind")
    parser.add_argument("--repeat", nargs=4, metavar=("TREE", "SIZE", "WHO", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    engine = Engine(load_templates(), load_rules_table())
    gc.freeze()  # as the service's replica does once it is loaded
    if args.repeat:
        kind, size, who, n = args.repeat
        repeat(engine, kind, int(size), who, int(n))
        return
    if args.instructions:
        for kind in args.trees.split(","):
            for size, times in ((1_000, 5), (10_000, 3)):
                instructions(kind, size, times)
        return
    if args.precision:
        precision(engine, args.show)
        return
    print("in-process: generate (ours) vs BASELINE (original's linear-scan fingerprinting, re-implemented)")
    for kind in args.trees.split(","):
        print(f"\n{kind} tree")
        in_process(engine, kind, [int(size) for size in args.sizes.split(",")])
    if args.no_serve:
        return
    url = os.environ.get("RAYFLEET_URL")
    launched = None
    tmp = tempfile.TemporaryDirectory()
    if not url:
        launched = launch(Path(tmp.name), ["ignore_gen"], cwd=ROOT)
        url = launched.base_url
    try:
        print(f"\nthrough Serve at {url}: POST /ignore/generate (tree as JSON) vs GET /ignore/healthz (HTTP floor)")
        print(f"{'paths':>8} {'gen p50':>10} {'gen p99':>10} {'floor p50':>10} {'floor p99':>10} {'gen/floor':>10}")
        for size, (g50, g99), (h50, h99) in through_serve(url):
            print(f"{size:>8} {g50:>9.2f}ms {g99:>9.2f}ms {h50:>9.2f}ms {h99:>9.2f}ms {g50 / h50:>9.1f}x")
    finally:
        if launched is not None:
            launched.stop()
        tmp.cleanup()


if __name__ == "__main__":
    main()
