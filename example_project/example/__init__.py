"""An example Scrapy project using scrapy-simhash."""
