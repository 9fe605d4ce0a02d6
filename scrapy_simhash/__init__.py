"""Near-duplicate page detection for Scrapy crawls: main text, simhash, LMDB index."""

from .extract import extract_text
from .fingerprint import FINGERPRINT_VERSION, Fingerprinter, hamming, simhash, text_signature

__version__ = "0.1.0"

__all__ = [
    "FINGERPRINT_VERSION",
    "Fingerprinter",
    "extract_text",
    "hamming",
    "simhash",
    "text_signature",
]
