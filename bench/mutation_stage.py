"""Rewrite a copy's ``[tool.mutmut]`` for one stage of ``bench/mutation.sh --stage``: mutate
the modules given only, against the tests given (each a list of TOML array items).

Usage: python bench/mutation_stage.py PYPROJECT MODULES TESTS
"""

from __future__ import annotations

import re
import sys
from pathlib import Path


def main(path: Path, modules: str, tests: str) -> None:
    text = path.read_text(encoding="utf-8")
    selection = (
        f"pytest_add_cli_args_test_selection = [\n    {tests},\n]\nonly_mutate = [{modules}]\n"
    )
    text, n = re.subn(
        r"pytest_add_cli_args_test_selection = \[.*?\n\]\n", selection, text, flags=re.S
    )
    if n != 1:
        raise SystemExit(f"{path}: [tool.mutmut]'s test selection not found")
    text, n = re.subn(r"\nonly_mutate = \[.*?\n\]\n", "\n", text, count=1, flags=re.S)
    if n != 1:
        raise SystemExit(f"{path}: [tool.mutmut]'s only_mutate not found")
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2], sys.argv[3])
