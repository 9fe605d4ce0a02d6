#!/bin/sh
# Mutation run over the Scrapy side, the config and the CLI ([tool.mutmut] in pyproject.toml;
# docs/mutation.md has the figures and the review of the survivors).
#   .venv/bin/pip install mutmut==3.8.1     # a dev tool: not in the package's extras
#   sh bench/mutation.sh [--fresh] [mutmut run options and mutant names]
#   sh bench/mutation.sh --core [--fresh] [mutmut run options]
# Writes mutants/ (ignored by git) and keeps it: a run stopped part way, or a run after a
# change, goes on from the verdicts already there (mutmut tests again only the mutants of
# functions whose code changed). --fresh deletes mutants/ first. `.venv/bin/mutmut results`
# lists the survivors and `.venv/bin/mutmut show NAME` shows one.
#
# --core: the config's and the service's mutants, against the crawl tests only
# (test_config, test_redis_config, test_promises, test_drops, test_scrapy_crawl and
# test_redis_crawl, less its `scrapy crawl` processes, which cannot import the mutated copy
# of the package; the LMDB fault tests, which crawl in processes too, are left out). Every test
# reads the config and runs the service, so against the whole selection each of their
# survivors costs minutes; here it costs one run of these tests. It runs on a copy of the
# committed tree in mutants-core/ (ignored by git), whose pyproject.toml has that selection;
# results with `cd mutants-core && ../.venv/bin/mutmut results`.
set -e
cd "$(dirname "$0")/.."
root=$PWD
if [ "$1" = "--core" ]; then
    shift
    if [ "$1" = "--fresh" ]; then
        shift
        rm -rf mutants-core
    fi
    mkdir -p mutants-core
    git archive HEAD | tar -x -C mutants-core
    "$root/.venv/bin/python" - mutants-core/pyproject.toml <<'EOF'
import re
import sys

path = sys.argv[1]
text = open(path, encoding="utf-8").read()
selection = '''pytest_add_cli_args_test_selection = [
    "tests/test_config.py",
    "tests/test_redis_config.py",
    "tests/test_promises.py",
    "tests/test_drops.py",
    "tests/test_scrapy_crawl.py",
    "tests/test_redis_crawl.py",
    "-k",
    "not two_scrapy_crawl_processes",
]
only_mutate = ["scrapy_simhash/crawl/config.py", "scrapy_simhash/crawl/service.py"]
'''
text, n = re.subn(r"pytest_add_cli_args_test_selection = \[.*?\n\]\n", selection, text, flags=re.S)
assert n == 1, "pyproject.toml: [tool.mutmut]'s test selection not found"
text, n = re.subn(r"\nonly_mutate = \[.*?\n\]\n", "\n", text, count=1, flags=re.S)
assert n == 1, "pyproject.toml: [tool.mutmut]'s only_mutate not found"
open(path, "w", encoding="utf-8").write(text)
EOF
    ln -sfn "$root/.venv" mutants-core/.venv
    cd mutants-core
fi
if [ $# -eq 0 ]; then
    set -- --max-children=2
fi
exec nice .venv/bin/mutmut run "$@"
