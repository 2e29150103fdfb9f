"""The `similarity` command against Dolos, on the tests' classes of known ground truth.

    .venv/bin/python benchmarks/similarity_vs_dolos.py [--dolos-dir benchmarks/.dolos]

Builds the classes tests/test_similarity.py and tests/test_similarity_rewrites.py
use (tests/similarity_class.py: six independent hands, and in one class per
disguise a copy of each under that disguise: the text's disguises, and the
rewrites that keep the computation; eleven classes of twelve), then scores every
pair of every section twice: with `python -m autograder similarity CLASS --out
DIR`, run as an instructor runs it (its similarity.json read, each view's
figure and the pair's similarity; 0 for a pair it does not list), and with Dolos (@dodona/dolos-lib, DOLOS_VERSION, its default settings,
the language set to Python), given the same code cells (core.extract) of each
notebook, one file per student, and the released notebook's code as its
template to ignore. Prints, for every disguise, each section's AUC (the chance
that a copied pair outscores an independent one, in that disguise's class) and
the whole-course separation (a pair's similarities summed over the sections:
the lowest copied pair and the highest independent pair), for `similarity`,
each of its two views alone, and Dolos; then the same over all the classes.
`--no-dolos` leaves Dolos out (no Node.js needed).

Dolos is installed from npm into --dolos-dir on the first run (Node.js and npm
needed: `npm install @dodona/dolos-lib@DOLOS_VERSION`; the folder is ignored by
git). Only this benchmark needs Node; the grader never does.
"""
import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the classes the tests build

from similarity_class import (HOWS, REWRITTEN, SECTIONS, auc, disguise_classes, every_pair,  # noqa: E402
                              separation, write_class)

from autograder.core.extract import extract  # noqa: E402

DOLOS_VERSION = "3.5.1"
DOLOS_DIR = ROOT / "benchmarks" / ".dolos"
# Dolos's own library, driven as its documentation shows: one analysis per job, every pair it finds
RUNNER = """
import { Dolos } from "@dodona/dolos-lib";
import { readFileSync } from "node:fs";

const jobs = JSON.parse(readFileSync(process.argv[2], "utf8"));
const found = [];
for (const job of jobs) {
  const report = await new Dolos({ language: "python" }).analyzePaths(job.files, job.template);
  found.push(report.allPairs().map(pair => [pair.leftFile.path, pair.rightFile.path, pair.similarity]));
}
console.log(JSON.stringify(found));
"""


def installed(folder: Path) -> bool:
    """Whether Dolos and its parsers' native code are there (an install whose build step did not run has the
    packages and no tree-sitter binding)."""
    modules = folder / "node_modules"
    return (modules / "@dodona" / "dolos-lib").is_dir() and any((modules / "tree-sitter").glob("build/Release/*.node"))


def install_dolos(folder: Path) -> None:
    if installed(folder):
        return
    if not shutil.which("npm") or not shutil.which("node"):
        sys.exit("similarity_vs_dolos: Node.js and npm are needed to install Dolos (apt-get install nodejs npm)")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "package.json").write_text('{"private": true}\n')
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", f"@dodona/dolos-lib@{DOLOS_VERSION}"],
                   cwd=folder, check=True, stdout=subprocess.DEVNULL)
    if not installed(folder):  # npm 11 leaves dependencies' build scripts unrun unless asked: build the parsers
        subprocess.run(["npm", "rebuild", "--foreground-scripts"], cwd=folder, check=True, stdout=subprocess.DEVNULL)
    if not installed(folder):
        sys.exit(f"similarity_vs_dolos: Dolos's parsers were not built in {folder} (node-gyp needs make and a C++ "
                 "compiler); run `npm rebuild` there and see why")


def code_of(notebook: Path) -> str:
    """A notebook's code cells as the grader extracts them, one after another."""
    return "\n\n".join(cell["source"] for cell in extract(notebook.name, notebook.read_bytes()).cells)


VIEWS = ("similarity", "text", "computation")  # the pair's figure, and each view's alone


def ours(folder: Path, out: Path) -> dict[str, dict[str, dict[tuple[str, str], float]]]:
    """view -> section id -> (student a, student b) -> its figure, from the command's similarity.json."""
    subprocess.run([sys.executable, "-m", "autograder", "similarity", str(folder), "--out", str(out)],
                   cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    record = json.loads((out / "similarity.json").read_text(encoding="utf-8"))["sections"]
    return {view: {section.id: {tuple(sorted((p["student_a"], p["student_b"]))): p[view] or 0.0  # None: no evidence
                                for p in record.get(section.id, {}).get("pairs", [])} for section in SECTIONS}
            for view in VIEWS}


def dolos_jobs(classes: dict[str, Path], work: Path) -> list[dict]:
    """One Dolos analysis per class and section: each student's code as a file, the template to ignore."""
    jobs = []
    for how, folder in classes.items():
        for section in SECTIONS:
            where = work / how.replace(" ", "-") / section.id
            where.mkdir(parents=True)
            template = where / "template.py.txt"
            template.write_text(code_of(ROOT / "student_template" / section.notebook))
            files = []
            for student in sorted(p.name for p in folder.iterdir()):
                path = where / f"{student}.py"
                path.write_text(code_of(folder / student / section.notebook))
                files.append(str(path))
            jobs.append({"how": how, "section": section.id, "files": files, "template": str(template)})
    return jobs


def dolos(classes: dict[str, Path], work: Path, dolos_dir: Path) -> dict[str, dict[str, dict]]:
    """how -> section id -> (student a, student b) -> Dolos's similarity."""
    jobs = dolos_jobs(classes, work)
    (work / "jobs.json").write_text(json.dumps([{"files": j["files"], "template": j["template"]} for j in jobs]))
    (dolos_dir / "run.mjs").write_text(RUNNER)
    ran = subprocess.run(["node", str(dolos_dir / "run.mjs"), str(work / "jobs.json")], cwd=dolos_dir,
                         check=True, capture_output=True, text=True)
    found: dict[str, dict[str, dict]] = {}
    for job, pairs in zip(jobs, json.loads(ran.stdout.strip().splitlines()[-1])):
        scores = {tuple(sorted((Path(a).stem, Path(b).stem))): value for a, b, value in pairs}
        found.setdefault(job["how"], {})[job["section"]] = scores
    return found


def summary(scores: dict[str, dict[str, dict]], students: dict[str, list[str]]) -> tuple[list[float], tuple]:
    """(each section's AUC over the pairs of every class in `scores`, the whole-course separation over them)."""
    aucs = []
    for section in SECTIONS:
        pooled = {(*pair, how): value for how in scores
                  for pair, value in every_pair(students[how], scores[how][section.id]).items()}
        aucs.append(auc(pooled))
    lows, highs = [], []
    for how in scores:
        totals: dict[tuple[str, str], float] = {}
        for section in SECTIONS:
            for pair, value in every_pair(students[how], scores[how][section.id]).items():
                totals[pair] = totals.get(pair, 0.0) + value
        low, high = separation(totals)
        lows.append(low)
        highs.append(high)
    return aucs, (min(lows), max(highs))


def table(title: str, rows: dict[str, tuple[list[float], tuple]]) -> None:
    print(f"\n{title}")
    print(f"{'AUC':<26}" + "".join(f"{tool:>14}" for tool in rows))
    for index, section in enumerate(SECTIONS):
        print(f"{section.id:<26}" + "".join(f"{aucs[index]:>14.3f}" for aucs, _ in rows.values()))
    print(f"{'whole course: lowest copy':<26}" + "".join(f"{low:>14.3f}" for _, (low, _) in rows.values()))
    print(f"{'  highest independent':<26}" + "".join(f"{high:>14.3f}" for _, (_, high) in rows.values()))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dolos-dir", type=Path, default=DOLOS_DIR, help="where Dolos is (or is installed)")
    parser.add_argument("--no-dolos", action="store_true", help="score with `similarity` only")
    args = parser.parse_args()
    if not args.no_dolos:
        install_dolos(args.dolos_dir)
    hows = [*HOWS, *REWRITTEN]
    with tempfile.TemporaryDirectory(prefix="similarity-vs-dolos-") as tmp:
        work = Path(tmp)
        classes = {how: write_class(work / "classes" / how.replace(" ", "-"), plan)
                   for how, plan in disguise_classes(hows).items()}
        students = {how: sorted(p.name for p in folder.iterdir()) for how, folder in classes.items()}
        started = time.perf_counter()
        mine = {how: ours(folder, work / "out" / how.replace(" ", "-")) for how, folder in classes.items()}
        ours_seconds = time.perf_counter() - started
        started = time.perf_counter()
        theirs = {} if args.no_dolos else dolos(classes, work / "dolos", args.dolos_dir.resolve())
        dolos_seconds = time.perf_counter() - started
    tools = {view: {how: mine[how][view] for how in hows} for view in VIEWS}
    if theirs:
        tools[f"Dolos {DOLOS_VERSION}"] = theirs
    print(f"{len(classes)} classes of {len(students[hows[0]])} students, {len(SECTIONS)} sections")
    for how in hows:
        table(f"{how}: the six hands and a copy of each ({how})",
              {tool: summary({how: scores[how]}, students) for tool, scores in tools.items()})
    table(f"all {len(hows)} classes", {tool: summary(scores, students) for tool, scores in tools.items()})
    print(f"\ntime: similarity {ours_seconds:.1f} s ({len(classes)} runs of the command)"
          + (f", Dolos {dolos_seconds:.1f} s" if theirs else ""))


if __name__ == "__main__":
    main()
