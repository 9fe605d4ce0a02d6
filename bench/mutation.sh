#!/bin/sh
# Mutation run over the Scrapy side, the config and the CLI ([tool.mutmut] in pyproject.toml;
# docs/mutation.md has the figures and the review of the survivors).
#   .venv/bin/pip install mutmut==3.8.1     # a dev tool: not in the package's extras
#   sh bench/mutation.sh [--max-children N]
# Writes mutants/ (ignored by git); `.venv/bin/mutmut results` lists the survivors and
# `.venv/bin/mutmut show NAME` shows one.
set -e
cd "$(dirname "$0")/.."
rm -rf mutants
exec nice .venv/bin/mutmut run "${@:---max-children=2}"
