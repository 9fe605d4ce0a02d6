#!/bin/sh
# Mutation run over the Scrapy side, the config and the CLI ([tool.mutmut] in pyproject.toml;
# docs/mutation.md has the figures and the review of the survivors).
#   .venv/bin/pip install mutmut==3.8.1     # a dev tool: not in the package's extras
#   sh bench/mutation.sh [--fresh] [mutmut run options and mutant names]
# Writes mutants/ (ignored by git) and keeps it: a run stopped part way, or a run after a
# change, goes on from the verdicts already there (mutmut tests again only the mutants of
# functions whose code changed). --fresh deletes mutants/ first. `.venv/bin/mutmut results`
# lists the survivors and `.venv/bin/mutmut show NAME` shows one.
set -e
cd "$(dirname "$0")/.."
if [ "$1" = "--fresh" ]; then
    shift
    rm -rf mutants
fi
if [ $# -eq 0 ]; then
    set -- --max-children=2
fi
exec nice .venv/bin/mutmut run "$@"
