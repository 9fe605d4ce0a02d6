"""Settings of the example project: scrapy-simhash turned on by its add-on."""

BOT_NAME = "example"
SPIDER_MODULES = ["example.spiders"]
NEWSPIDER_MODULE = "example.spiders"

ROBOTSTXT_OBEY = True
USER_AGENT = "scrapy-simhash-example (+https://github.com/scrapy-simhash)"
CONCURRENT_REQUESTS_PER_DOMAIN = 4
DOWNLOAD_DELAY = 0
FEED_EXPORT_ENCODING = "utf-8"

# Near-duplicate detection: the add-on adds SimhashMiddleware (543) and SimhashPipeline (200).
ADDONS = {"scrapy_simhash.Addon": 300}
# The index lives in .scrapy/simhash/<spider name>; the README's Settings section has
# every setting.
SIMHASH_MAX_DISTANCE = 3
SIMHASH_EXPECTED_SIZE = 100_000
