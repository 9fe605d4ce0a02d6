"""Keep a stage's mutation verdicts in the repository, so a run goes on in a new checkout.

mutmut keeps its verdicts in ``mutants/**/*.meta``, beside the mutated copies: a new
checkout has none, and a stage's run (hours on 2 cores) would start over. ``save`` writes
the verdicts of ``mutants-<stage>/`` to ``bench/mutation-verdicts/<stage>.json.gz``;
``restore`` writes them back into an empty ``mutants-<stage>/mutants/`` before mutmut makes
its mutants. mutmut then keeps the verdict of every mutant whose function has the hash it
had when the verdict was given, and checks again the mutants of functions that changed (its
own rule for a run after an edit). Timeouts are not restored: on a loaded machine a slow
survivor can be stopped as one, so they are checked again. A survivor keeps its verdict, as
in mutmut; name it to test it again after a test is added (``mutmut run NAME``).

Usage (``bench/mutation.sh --stage STAGE --save`` and ``--resume`` call it):
    python bench/mutation_verdicts.py save mutants-cli bench/mutation-verdicts/cli.json.gz
    python bench/mutation_verdicts.py restore bench/mutation-verdicts/cli.json.gz mutants-cli
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

# mutmut's exit codes of a mutant stopped for time (mutmut.stats.status_by_exit_code)
TIMEOUTS = {36, 24, -24, 152, 255}


def save(stage: Path, out: Path) -> None:
    files = {}
    checked = 0
    for meta_path in sorted((stage / "mutants").rglob("*.meta")):
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        verdicts = {k: v for k, v in meta["exit_code_by_key"].items() if v is not None}
        if not verdicts:
            continue
        source = meta_path.relative_to(stage / "mutants").as_posix().removesuffix(".meta")
        files[source] = {
            "hash_by_function_name": meta.get("hash_by_function_name", {}),
            "exit_code_by_key": dict(sorted(verdicts.items())),
        }
        checked += len(verdicts)
    out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(out, "wt", encoding="utf-8") as f:
        json.dump(files, f, indent=0, sort_keys=True)
    print(f"{out}: {checked} verdicts of {len(files)} files")


def restore(saved: Path, stage: Path) -> None:
    if not saved.exists():
        print(f"{saved}: no verdicts saved; the run starts from none")
        return
    with gzip.open(saved, "rt", encoding="utf-8") as f:
        files = json.load(f)
    restored = 0
    for source, kept in files.items():
        meta_path = stage / "mutants" / f"{source}.meta"
        if (stage / "mutants" / source).exists():
            raise SystemExit(f"{stage}/mutants/{source} exists: restore only into a new stage")
        verdicts = {k: v for k, v in kept["exit_code_by_key"].items() if v not in TIMEOUTS}
        meta_path.parent.mkdir(parents=True, exist_ok=True)
        meta = {
            "exit_code_by_key": verdicts,
            "hash_by_function_name": kept["hash_by_function_name"],
            "type_check_error_by_key": {},
            "durations_by_key": {},
            "estimated_durations_by_key": {},
        }
        meta_path.write_text(json.dumps(meta, indent=4), encoding="utf-8")
        restored += len(verdicts)
    print(f"{saved}: {restored} verdicts restored into {stage} (timeouts left to check again)")


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("save", "restore"):
        raise SystemExit(__doc__)
    if sys.argv[1] == "save":
        save(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        restore(Path(sys.argv[2]), Path(sys.argv[3]))
