"""The text side: a page's main text, its words, and its 64-bit fingerprint.

* :mod:`.extract`: the main text of an HTML page (trafilatura);
* :mod:`.decode` and :mod:`.charset`: a body's bytes read as text, in the encoding it names or
  the one found for it;
* :mod:`.headings`: a page's title, and an extracted first line that only repeats it;
* :mod:`.hidden`: what a page's markup hides from a reader (a closed banner or pop-up, a
  sign-in form kept in the footer), left out of the tree before extraction;
* :mod:`.layout_tables`: tables that lay a page out (a menu in one cell, the article in
  another), read as the blocks they frame before extraction;
* :mod:`.listing`: pages that show several posts whole (a blog's home, label and archive
  pages), which a crawl neither checks nor stores;
* :mod:`.segment` and :mod:`.lexicon`: words, jieba's dictionary words for Chinese, stop words;
* :mod:`.chrome`: the lines of a text that site chrome forms, left out before the words;
* :mod:`.wrap`: hard-wrapped lines, and a paragraph's lines broken in its HTML source, read
  joined, as a browser shows them;
* :mod:`.numbers`: which numbers are features (not dates, times or counters);
* :mod:`.fingerprint`: weighted word features and the fingerprint (a storage format);
* :mod:`.sentences`: a text's longest sentences, what each is known by, and their hashes;
* :mod:`.signature`: a page's signature (fingerprint, longest sentences, sketches of its
  numbers and of its runs of words), its stored form;
* :mod:`.rule`: the rule that decides, from two signatures, whether two pages are near
  duplicates;
* :mod:`.caches`: how a bounded memo cache makes room (the feature hashes').

Imports nothing of the index, of Scrapy or of the command line.
"""

from .extract import PageText, extract_page, extract_text
from .fingerprint import FINGERPRINT_VERSION, Fingerprinter, hamming, simhash, text_signature
from .rule import Rule
from .signature import PageSignature, page_signature

__all__ = [
    "FINGERPRINT_VERSION",
    "Fingerprinter",
    "PageSignature",
    "PageText",
    "Rule",
    "extract_page",
    "extract_text",
    "hamming",
    "page_signature",
    "simhash",
    "text_signature",
]
