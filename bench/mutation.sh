#!/bin/sh
# Mutation run over the Scrapy side, the config and the CLI ([tool.mutmut] in pyproject.toml;
# docs/mutation.md has the figures and the review of the survivors).
#   .venv/bin/pip install mutmut==3.8.1     # a dev tool: not in the package's extras
#   sh bench/mutation.sh [--fresh] [mutmut run options and mutant names]
#   sh bench/mutation.sh --stage config|service [--fresh] [mutmut run options]
# Writes mutants/ (ignored by git) and keeps it: a run stopped part way, or a run after a
# change, goes on from the verdicts already there (mutmut tests again only the mutants of
# functions whose code changed). --fresh deletes mutants/ first. `.venv/bin/mutmut results`
# lists the survivors and `.venv/bin/mutmut show NAME` shows one.
#
# Every crawl test reads the config and runs the service, so against the whole selection
# each survivor of theirs costs minutes (a few mutants a minute here). --stage runs them
# apart, each on a copy of the committed tree in mutants-<stage>/ (ignored by git) whose
# pyproject.toml mutates that one module against the tests that speak to it:
#   config:  test_config, test_redis_config (settings read, checked, named in errors);
#   service: test_promises, test_drops, test_scrapy_crawl, test_redis_crawl and
#            test_faults, less the tests that run `scrapy crawl` or `scrapy-simhash verify`
#            in processes of their own, which cannot import the mutated copy of the package
#            (test_faults' full disks need root, as in CI: without it they skip).
# Results: `cd mutants-<stage> && ../.venv/bin/mutmut results`.
set -e
cd "$(dirname "$0")/.."
root=$PWD
if [ "$1" = "--stage" ]; then
    stage=$2
    shift 2
    case $stage in
        config) tests='"tests/test_config.py", "tests/test_redis_config.py"' ;;
        service) tests='"tests/test_promises.py", "tests/test_drops.py",
    "tests/test_scrapy_crawl.py", "tests/test_redis_crawl.py", "tests/test_faults.py",
    "-k", "not two_scrapy_crawl_processes and not verify and not injected_io_error"' ;;
        *) echo "--stage config or --stage service" >&2; exit 2 ;;
    esac
    if [ "$1" = "--fresh" ]; then
        shift
        rm -rf "mutants-$stage"
    fi
    mkdir -p "mutants-$stage"
    git archive HEAD | tar -x -C "mutants-$stage"
    "$root/.venv/bin/python" bench/mutation_stage.py "mutants-$stage/pyproject.toml" "$stage" "$tests"
    ln -sfn "$root/.venv" "mutants-$stage/.venv"
    cd "mutants-$stage"
fi
if [ $# -eq 0 ]; then
    set -- --max-children=2
fi
exec nice .venv/bin/mutmut run "$@"
