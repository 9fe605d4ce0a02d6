"""Which tests speak to each setting, stat, meta key and CLI command and option the README
names.

    .venv/bin/python bench/readme_surface.py            # a Markdown table
    .venv/bin/python bench/readme_surface.py --missing  # only the names no test speaks to

A test "speaks to" a name when its function's source (or a helper's, for names read through
a module-level constant) holds it as a string: a setting it sets, a stat it reads, a command
it runs. It lists where to look, not whether the test checks the promise well: the mutation
stages (docs/mutation.md) answer that. Exit status 1 when a name has no test.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

from scrapy_simhash.cli.main import build_parser

ROOT = Path(__file__).resolve().parent.parent

#: Names the README shows as examples of a pattern, or for the benches and the test suite,
#: not as settings of a crawl.
EXAMPLES = {"simhash/duplicate/distance/17", "SIMHASH_CORPUS", "SIMHASH_TEST_REDIS_SERVER"}


def readme_names(text: str) -> dict[str, list[str]]:
    settings = sorted(set(re.findall(r"\bSIMHASH_[A-Z_]+[A-Z]\b", text)) - EXAMPLES)
    stats = sorted(
        {
            s
            for s in re.findall(r"\bsimhash/(?:[a-z_]+/)*[a-z_0-9]+\b(?!/)", text)
            if s.split("/")[1] in {"checked", "unique", "duplicate", "skipped", "index", "workers"}
        }
        - EXAMPLES
    )
    # the keys of the README's sample of response.meta["simhash"]
    sample = re.search(r'response\.meta\["simhash"\] == \{(.*?)\}', text, re.S)
    meta = re.findall(r'"(\w+)":', sample.group(1)) if sample else []
    commands, options = [], []
    cli = build_parser()
    for command, parser in _subcommands(cli).items():
        # named in a command line, or in the README's table of commands
        if re.search(rf"(\bscrapy-simhash |^\| `){command}\b", text, re.M):
            commands.append(command)
            options += [
                f"{command} {option}"
                for option in sorted(_options(parser))
                if re.search(rf"(?<![\w-]){option}\b", text)
            ]
    options += [o for o in sorted(_options(cli)) if o in text]
    return {
        "setting": settings,
        "stat": stats,
        "meta key": meta,
        "command": commands,
        "option": options,
    }


def _subcommands(cli: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in cli._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _options(parser: argparse.ArgumentParser) -> set[str]:
    return {
        option
        for action in parser._actions
        if not isinstance(action, argparse._SubParsersAction)
        for option in action.option_strings
        if option not in {"-h", "--help"}
    }


def test_functions(tests: Path) -> list[tuple[str, str]]:
    """(``file::function``, source) of every test function, with the module's constants."""
    found = []
    for path in sorted(tests.glob("test_*.py")):
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        constants = "\n".join(
            ast.get_source_segment(source, node) or ""
            for node in tree.body
            if isinstance(node, (ast.Assign, ast.AnnAssign))
        )
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith(
                "test_"
            ):
                body = ast.get_source_segment(source, node) or ""
                decorators = "\n".join(
                    ast.get_source_segment(source, d) or "" for d in node.decorator_list
                )
                used = [line for line in constants.splitlines() if _name_used(line, body)]
                found.append((f"{path.name}::{node.name}", "\n".join([decorators, body, *used])))
    return found


def _name_used(constant_line: str, body: str) -> bool:
    match = re.match(r"([A-Z_][A-Z_0-9]*)\s*[:=]", constant_line)
    return bool(match) and re.search(rf"\b{match.group(1)}\b", body) is not None


def speaks_to(name: str, kind: str, source: str) -> bool:
    if kind == "command":
        return re.search(rf"""["'](?:scrapy-simhash )?{name}["' ]""", source) is not None
    if kind == "option":
        *command, option = name.split()
        if command and not speaks_to(command[0], "command", source):
            return False
        return re.search(rf"""["']{option}["'=]""", source) is not None
    if kind == "meta key":
        return re.search(rf"""["']{name}["']""", source) is not None and "simhash" in source
    return re.search(rf"""(?<![\w/]){re.escape(name)}(?![\w/])""", source) is not None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--missing", action="store_true", help="only the names without a test")
    args = parser.parse_args()
    names = readme_names((ROOT / "README.md").read_text(encoding="utf-8"))
    tests = test_functions(ROOT / "tests")
    missing = 0
    if not args.missing:
        print("| kind | README name | tests | for example |")
        print("| --- | --- | ---: | --- |")
    for kind, items in names.items():
        for name in items:
            hits = [t for t, source in tests if speaks_to(name, kind, source)]
            # a test of what the setting or stat does, before one that only parses it
            hits.sort(key=lambda t: t.startswith(("test_config.py", "test_redis_config.py")))
            missing += not hits
            if args.missing and not hits:
                print(f"{kind}: {name}")
            elif not args.missing:
                example = f"`{hits[0]}`" if hits else "**none**"
                print(f"| {kind} | `{name}` | {len(hits)} | {example} |")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
