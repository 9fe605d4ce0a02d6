"""Scrapy commands: ``scrapy simhash ...`` (see :mod:`scrapy_simhash.commands.simhash`)."""
