"""``python -m scrapy_simhash``: the ``scrapy-simhash`` command."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
