#!/bin/sh
# Mutation run over the Scrapy side, the config and the CLI ([tool.mutmut] in pyproject.toml;
# docs/mutation.md has the figures and the review of the survivors).
#   .venv/bin/pip install mutmut==3.8.1     # a dev tool: not in the package's extras
#   sh bench/mutation.sh [--fresh] [mutmut run options and mutant names]
#   sh bench/mutation.sh --stage config|service|scrapy|cli [--fresh|--resume] [mutmut run options]
#   sh bench/mutation.sh --stage config|service|scrapy|cli --save
# Writes mutants/ (ignored by git) and keeps it: a run stopped part way, or a run after a
# change, goes on from the verdicts already there (mutmut tests again only the mutants of
# functions whose code changed). --fresh deletes mutants/ first. `.venv/bin/mutmut results`
# lists the survivors and `.venv/bin/mutmut show NAME` shows one.
#
# Every crawl test reads the config and runs the service, so against the whole selection
# each survivor of theirs costs minutes (a few mutants a minute here). --stage runs a part
# apart, on a copy of the committed tree in mutants-<stage>/ (ignored by git) whose
# pyproject.toml mutates those modules against the tests that speak to them:
#   config:  crawl/config.py against test_config, test_redis_config (settings read, checked,
#            named in errors);
#   service: crawl/service.py against test_promises, test_drops, test_scrapy_crawl,
#            test_redis_crawl, test_faults and test_signature (its crawl of product pages
#            with and without SIMHASH_NUMBERS), less the tests that run `scrapy crawl` or
#            `scrapy-simhash verify` in processes of their own, which cannot import the
#            mutated copy of the package (test_faults' full disks need root, as in CI: without
#            it they skip);
#   scrapy:  the middleware, pipeline, add-on, writes and pages, against the same tests;
#   cli:     cli/ against test_cli, test_report, test_redis_cli, test_drops (explain,
#            clusters, remove of drop records) and test_signature (explain by the sentence
#            rule), less the Chromium rendering and the `scrapy simhash` runs in a project
#            folder of their own.
# Results: `cd mutants-<stage> && ../.venv/bin/mutmut results`.
# --save writes the stage's verdicts to bench/mutation-verdicts/<stage>.json.gz (tracked by
# git); --resume starts a new mutants-<stage>/ from them, so a run goes on in a new checkout
# (mutmut checks again the mutants of every function changed since; bench/mutation_verdicts.py).
# Resume without mutant names: mutmut runs every mutant a name matches again, whatever its verdict.
set -e
cd "$(dirname "$0")/.."
root=$PWD
if [ "$1" = "--stage" ]; then
    stage=$2
    shift 2
    crawl_tests='"tests/test_promises.py", "tests/test_drops.py",
    "tests/test_scrapy_crawl.py", "tests/test_redis_crawl.py", "tests/test_faults.py",
    "tests/test_signature.py",
    "-k", "not two_scrapy_crawl_processes and not verify and not injected_io_error"'
    case $stage in
        config) modules='"scrapy_simhash/crawl/config.py"'
            tests='"tests/test_config.py", "tests/test_redis_config.py"' ;;
        service) modules='"scrapy_simhash/crawl/service.py"'
            tests=$crawl_tests ;;
        scrapy) modules='"scrapy_simhash/crawl/middleware.py", "scrapy_simhash/crawl/pipeline.py",
    "scrapy_simhash/crawl/addon.py", "scrapy_simhash/crawl/writes.py",
    "scrapy_simhash/crawl/pages.py"'
            tests=$crawl_tests ;;
        cli) modules='"scrapy_simhash/cli/*"'
            tests='"tests/test_cli.py", "tests/test_report.py", "tests/test_redis_cli.py",
    "tests/test_drops.py", "tests/test_signature.py",
    "--deselect", "tests/test_report.py::test_the_report_renders_in_headless_chromium",
    "-k", "not scrapy_command and not spider_name_for_its_redis_index"' ;;
        *) echo "--stage config, service, scrapy or cli" >&2; exit 2 ;;
    esac
    saved="bench/mutation-verdicts/$stage.json.gz"
    resume=
    case $1 in
        --fresh) shift; rm -rf "mutants-$stage" ;;
        --resume) shift; rm -rf "mutants-$stage"; resume=1 ;;
        --save) exec "$root/.venv/bin/python" bench/mutation_verdicts.py save "mutants-$stage" "$saved" ;;
    esac
    mkdir -p "mutants-$stage"
    git archive HEAD | tar -x -C "mutants-$stage"
    "$root/.venv/bin/python" bench/mutation_stage.py "mutants-$stage/pyproject.toml" "$modules" "$tests"
    if [ -n "$resume" ]; then
        "$root/.venv/bin/python" bench/mutation_verdicts.py restore "$saved" "mutants-$stage"
    fi
    ln -sfn "$root/.venv" "mutants-$stage/.venv"
    cd "mutants-$stage"
fi
if [ $# -eq 0 ]; then
    set -- --max-children=2
fi
exec nice .venv/bin/mutmut run "$@"
