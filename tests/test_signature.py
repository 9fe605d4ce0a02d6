"""Page signatures and the two-rule decision: golden values, the number parts, the rule on
pages that went through extraction, and the index applying it (a text's long sentences alone:
test_sentences.py)."""

from __future__ import annotations

import pickle
import random
from collections import Counter
from dataclasses import replace

import numpy as np
import pytest
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_simhash import (
    Fingerprinter,
    IndexMismatchError,
    PageSignature,
    SimhashIndex,
    extract_text,
    hamming,
    page_signature,
)
from scrapy_simhash.text.rule import DEFAULT_RULE, RULES, Rule
from scrapy_simhash.text.sentences import (
    SENTENCES,
    longest_sentences,
)
from scrapy_simhash.text.signature import shingles_sketch

from .test_fingerprint import CELL_LINES, DATA_TABLE_ROWS, PAGE_DATA_TABLE, TEXTS
from .test_scrapy_crawl import SiteSpider

# A signature is a storage format: these values change only with FINGERPRINT_VERSION
# (version 16 pinned "page_spec_table", whose spec table's five numbers are content numbers
# since then, and changed no other value; version 15 pinned "page_data_table", whose words
# count its data table's 106 words beside its prose's 32, and changed no other value;
# version 14 pinned "page_source_wrapped", EN as
# a fallback extractor returns a paragraph wrapped in its HTML source: its signature is
# EN's, and changed no other value; version 13
# pinned "page_priced_teasers", whose headlines with their dates are chrome
# although they hold a price and a spec: its signature is its article's, and changed no
# other value; version 12 pinned "page_teasers", whose headlines and their date stamps are
# chrome since then: its signature is its article's, "page_zh", and changed no other value;
# version 11 pinned "page_footer", whose footer's postal code and registration numbers are
# no content numbers since then, and changed no other value. Before it: 9; 8's for every
# text without a space before a paragraph's symbol within CJK text or a run of tildes; 7's
# for every text without a list of other articles under its heading; 6's for every text
# whose long sentences hold no content numbers: "en", "zh" and the hard-wrapped ones; since
# version 7 a sentence is known by its letters and its content numbers).
GOLDEN = {
    "en": "e0517daad2885954000000000000000073f77ddb4f45dc94280000000000036297a4b48c4521a294632dd4"
    "059e08057f518333d10eb1a4",
    "zh": "1c27b718da86c8de00000000000000009cc238fff68cd7ed2e000000000003483cd4abdcff774fc6e8b857"
    "70a97eb9484889dc37e33182",
    "mix": "ea2febda7d49dcb9400000000002000028044ff3cc51fb76200000000200034ecf559dcbad6d6c4c7caf0"
    "b2697304096feb96eed959650",
    "page_en": "e0716dba738859540c0040000000040053ff4db60f15dca4360000000400056297a4b48c4521a2946"
    "32dd4059e08057f518333d10eb1a4b41a96a85c2633ccbd60712abc64b2ae",
    "page_zh": "3c27f730dac488de40102000000000009cca7fdfd60dc5dc490000000300049fb055079158277d483"
    "cd4abdcff774fc6e8b85770a97eb9484889dc37e33182",
    "wrapped_en": "a05379a8d28b597400000000000000005af7fd894f45dc743e0000000000042137e09ebabab27c"
    "6297a4b48c4521a294632dd4059e08057f518333d10eb1a4",
    "wrapped_zh": "dca7b32ad29ac8d60000000000000000844ca857fab540fd840000000000086abfd95ab827ec84"
    "c6e8b85770a97eb92345b127db8b0522cbfc4950cc15a984d336adb7ed7e4adaf7ff3e6a8a4df2786e3e3214063a"
    "546fd92573e984268dc7",
    "page_contact": "e0716fba338859540c00400000000400535f4d760f15dc843d0000000400066297a4b48c4521"
    "a294632dd4059e08057f518333d10eb1a4b41a96a85c2633ccb0893f9dfd41aa53bd60712abc64b2ae",
    "page_related": "3ca7f53adac488de40102000000000009c887edfde05c5dc5c0000000300059fb05507915827"
    "7d00a2940264872e88483cd4abdcff774fc6e8b85770a97eb9484889dc37e33182",
    "page_cell": "c7f7b12b5a90c8d20000000000000000ad2fc803af848dd150000000000005731fc32304f5331de"
    "1bb8411bc022698c0963782dcda31b7d70f6510056150bbba5927100d7c1920",
    "page_footer": "3cb5f731ca428adc40102000000000009c7a7fdfda0fc7dc5e0000000300049fb05507915827"
    "7d483cd4abdcff774fc6e8b85770a97eb9484889dc37e33182",
    # the article's own ("page_zh"); version 11 read the headlines and their dates:
    # 58b3f730da9498ded6a9dd37f6e3c225944a3cd64e0167d9970000000300079fb0550791582...
    "page_teasers": "3c27f730dac488de40102000000000009cca7fdfd60dc5dc490000000300049fb05507915827"
    "7d483cd4abdcff774fc6e8b85770a97eb9484889dc37e33182",
    # the article's own too; version 12 kept the headlines for their numbers:
    # fca3f731db84c8def6c1cd3e52eac6059dda7adfdc05c1dd700000000500069fb055079158277d30d8...
    "page_priced_teasers": "3c27f730dac488de40102000000000009cca7fdfd60dc5dc4900000003000"
    "49fb055079158277d483cd4abdcff774fc6e8b85770a97eb9484889dc37e33182",
    # EN's; version 13 read the source's lines apart:
    # e0517daed3884954000000000000000073f73df11f5dd4b4240000000000055f20f622f26123c318...
    "page_source_wrapped": "e0517daad2885954000000000000000073f77ddb4f45dc94280000000000036"
    "297a4b48c4521a294632dd4059e08057f518333d10eb1a4",
    "page_data_table": "6b094c240d3a08e3000000000000000092c9d399fcbf40c38a000000000002ddd120"
    "70bdd656a8a882f2179c628a41",
    "page_spec_table": "4b4dce40a9cb439b000504004000800098ba1e497790793d2c000000050002329a32a1"
    "e289658a4343dee98529d754",
}

PARAGRAPHS = [
    "The harbour authority confirmed on Thursday that the old grain terminal will be turned into "
    "a public market hall, ending a decade of arguments about the future of the waterfront.",
    "Engineers who surveyed the building last winter found that its concrete frame is sound, "
    "although the roof and most of the windows will have to be replaced before anyone moves in.",
    "Local traders have been asking for a covered market since the square was closed for "
    "repairs, and many of them say the new hall could double the number of stalls in the town.",
    "The plan keeps the two loading cranes in front of the terminal as a reminder of the port's "
    "history, and a small museum about the grain trade will take over the former weighing room.",
    "Residents of the streets behind the harbour worry about delivery lorries arriving early in "
    "the morning, and the council has promised a traffic study before the building work begins.",
    "Architects chosen through an open competition want to keep the long halls of the building "
    "bright and open, with glass doors along the quay that can be folded back in the summer.",
    "A cooperative of fishing families hopes to sell the morning catch directly from the hall, "
    "which would let them keep a larger share of the price than they get at the auction.",
    "Work on the roof is expected to start in the spring, and the authority hopes the first "
    "traders will open their stalls before the end of next year if the weather is kind.",
    "Several cafes along the quay have already asked about space inside the hall, and the "
    "authority says it will keep a third of the stalls for young businesses with low rents.",
    "Opponents of the project had wanted the terminal demolished to make room for housing, but "
    "the heritage board ruled last year that the building must be kept and put to public use.",
]
OTHER = [
    "Volunteers spent the weekend clearing the footpath that runs along the old railway line, "
    "removing fallen branches and rebuilding two wooden bridges that had rotted over the years.",
    "The walking club that organised the work says the path is now open from the station to the "
    "reservoir, a distance of almost eight kilometres through woods and open farmland.",
    "Families with pushchairs and cyclists can use the whole route again, although the steep "
    "section near the quarry is still closed until the council repairs the retaining wall.",
    "The club plans guided walks every Sunday morning during the summer, and it hopes that more "
    "people will join its monthly working days to keep the path clear of brambles and mud.",
    "Rangers have counted several rare orchids along the cutting, and they ask visitors to stay "
    "on the path and keep dogs on a lead between the old signal box and the picnic meadow.",
    "A local bakery has offered to sponsor new benches along the route, and schoolchildren will "
    "paint the signs that mark the distance to the station and to the reservoir gates.",
]


def _plain_layout(title: str, paragraphs: list[str]) -> str:
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (
        f"<html><head><title>{title}</title></head><body><header><a href='/'>Home</a></header>"
        f"<article><h1>{title}</h1>{body}</article><footer>Contact us</footer></body></html>"
    )


def _busy_layout(title: str, paragraphs: list[str]) -> str:
    """Another site's layout: a section menu, a standfirst and byline, captions, a newsletter
    box and a list of its own headlines around the article."""
    body = "".join(f"<p>{p}</p>" for p in paragraphs[:4])
    caption = "<figcaption>The terminal seen from the quay.</figcaption>"
    body += f"<figure><img src='a.jpg'>{caption}</figure>"
    body += "".join(f"<p>{p}</p>" for p in paragraphs[4:])
    return (
        f"<html><head><title>{title} | Coast Gazette</title></head><body>"
        "<nav><ul><li><a href='/n'>News</a></li><li><a href='/s'>Sport</a></li>"
        "<li><a href='/b'>Business</a></li><li><a href='/c'>Culture</a></li></ul></nav>"
        f"<main><article><h1>{title}</h1>"
        "<p class='standfirst'>A decade of arguments ends as the authority chooses a market.</p>"
        "<p class='byline'>By our harbour reporter, with agencies</p>"
        f"{body}"
        "<div class='newsletter'><p>Sign up for our morning newsletter to get the coast's news "
        "in your inbox before breakfast every weekday.</p></div>"
        "</article><aside><h2>Most read</h2><ul><li><a href='/1'>Ferry timetable changes "
        "from Monday</a></li><li><a href='/2'>Lifeboat crew rescues two kayakers</a></li>"
        "<li><a href='/3'>New bus route to the hospital</a></li></ul></aside></main>"
        "<footer><p>Copyright Coast Gazette. All rights reserved.</p></footer></body></html>"
    )


def _signature(html: str) -> PageSignature:
    text = extract_text(html, "https://example.com/a")
    assert text is not None
    signature = page_signature(text)
    assert signature is not None
    return signature


def test_signatures_are_pinned():
    for name, value in GOLDEN.items():
        signature = page_signature(TEXTS[name])
        assert signature is not None and signature.pack().hex() == value, name
        assert PageSignature.unpack(bytes.fromhex(value)) == signature
    # version 4 cut the sentences of hard-wrapped texts at their line breaks, and took the
    # short last lines of paragraphs for chrome
    for name in ("wrapped_en", "wrapped_zh"):
        version_4 = page_signature(TEXTS[name], Fingerprinter(unwrap=False))
        assert version_4 is not None and version_4.pack().hex() != GOLDEN[name]
    version_4 = page_signature(TEXTS["wrapped_en"], Fingerprinter(unwrap=False))
    assert not set(version_4.sentences) & set(page_signature(TEXTS["wrapped_en"]).sentences)
    # since version 6 a Chinese text's sentences end at the spaces that join its wrapped lines,
    # as at the line breaks themselves: most are the same, read with or without joining (the
    # others are the paragraphs' short last lines, chrome when read line by line)
    version_4 = page_signature(TEXTS["wrapped_zh"], Fingerprinter(unwrap=False))
    joined = page_signature(TEXTS["wrapped_zh"])
    assert len(set(version_4.sentences) & set(joined.sentences)) >= 5


def test_signature_round_trips_pickles_and_rejects_bad_bytes():
    signature = page_signature(TEXTS["page_en"])
    assert pickle.loads(pickle.dumps(signature)) == signature
    packed = signature.pack()
    for bad in (packed[:-1], packed + b"\0", packed[:10]):
        with pytest.raises(ValueError, match="signature"):
            PageSignature.unpack(bad)


def test_a_page_of_more_numbers_than_are_stored_is_signed_as_stored():
    """A page of 70,000 distinct numbers, read by a fingerprinter that reads them all: its
    count is the one its stored form keeps (16 bits), so an index decides it alike before and
    after storing it, on LMDB (which decided with the count in memory) and on Redis (whose
    script reads the stored one)."""
    rows = "\n".join(
        "The depot took crates at the gates "
        + " ".join(str(100_000 + i * 50 + j) for j in range(50))
        + " of the harbour today."
        for i in range(1_400)
    )
    reader = Fingerprinter(max_words=500_000)  # the default reads 20,000 words: no more
    signature = page_signature(f"{TEXTS['page_en']}\n{rows}", reader)
    assert signature is not None and signature.number_count == 0xFFFF
    assert PageSignature.unpack(signature.pack()) == signature


def test_too_short_texts_have_no_signature():
    assert page_signature("A few words only.") is None


def test_a_page_signature_of_bytes_says_it_takes_the_extracted_text():
    body = ("<html><body><p>" + " ".join(TEXTS["en"].split()[:80]) + "</p></body></html>").encode()
    with pytest.raises(TypeError, match=r"extracted text \(str\), not bytes: extract_text"):
        page_signature(body)


def test_match_reports_of_one_league_are_not_one_page_by_their_sentences():
    """A league's match reports (a product's variants) say the same sentences with other
    numbers. The sentence rule reads a sentence's words; before version 7 it took such pages
    for one whenever their numbers overlapped enough to keep the numbers veto quiet (the
    numbers of a site's template, shared by both)."""
    # the site's own lines around every report: standings and fixtures (their numbers are
    # the same on every page of the round)
    template = [
        "Standings after this round: Harbour City 26 points, Eastport 24 points, Northfield 21 "
        "points, Riverside 19 points, Westbay 17 points, Old Mill 15 points, Kingsbridge 14 "
        "points, Lakeside 11 points, Stonegate 8 points and Fairhaven 5 points, while the top "
        "scorers are Daniel Moreau with 11 goals, Chris Walker with 9, Ali Demir with 7 and "
        "Tom Reyes with 6.",
        "Next fixtures: Harbour City against Westbay at 19:30, Eastport against Northfield.",
    ]
    manager = (
        "The manager praised his players for their patience and their discipline in "
        "the second half, when the visitors pushed forward in numbers."
    )

    def report(goals: tuple[int, int], minutes: tuple[int, int], shots: int, crowd: str) -> str:
        return " ".join(
            [
                f"Harbour City beat Eastport {goals[0]}-{goals[1]} at the old ground, where "
                f"{crowd} supporters watched the home side take control early.",
                f"Daniel Moreau opened the scoring in the {minutes[0]}th minute from a corner, "
                "and the visitors' defence never recovered from the shock.",
                f"Chris Walker added a second from {shots} metres in the {minutes[1]}th "
                "minute with a shot that the goalkeeper could only watch.",
                f"The home side had {shots + 6} shots to the visitors' {shots - 3}, and "
                f"kept the ball for {40 + shots}% of the afternoon.",
                f"Eastport's goalkeeper made {shots - 5} saves before the break and "
                f"{shots - 7} after it, and was named the visitors' player of the match.",
                manager,
            ]
        )

    first = _signature(
        _plain_layout("Match report", [report((4, 2), (19, 56), 12, "25,074"), *template])
    )
    second = _signature(
        _plain_layout("Match report", [report((3, 1), (12, 71), 9, "18,310"), *template])
    )
    # the sentences whose numbers are the same on both pages are shared; those that hold the
    # score, the minutes or the crowd are not
    shared = set(first.sentences) & set(second.sentences)
    assert shared == set(longest_sentences("\n".join([manager, *template])))
    # the numbers of the template make the two pages' numbers overlap, but each report holds
    # numbers the other does not: the numbers veto tells them apart (version 17)...
    assert DEFAULT_RULE.numbers_differ(first, second)
    assert not first.is_near_duplicate(second)
    # ... and so do their sentences, without it
    assert Rule(numbers_min=10**9).decide(second, first, 3) is None
    # the same report on another day, with other dates and counters: one page
    redated = _signature(
        _plain_layout(
            "Match report",
            [
                report((4, 2), (19, 56), 12, "25,074"),
                *template,
                "Published 3 May 2024, 2,345 views",
            ],
        )
    )
    assert first.sentences == redated.sentences
    assert first.is_near_duplicate(redated)


def test_the_numbers_bits_ignore_dates_and_counters_but_not_prices():
    base = " ".join(PARAGRAPHS[:3])
    a = page_signature(f"{base}\nThe hall will cost 4.5 million and hold 120 stalls of 9 m2.")
    dated = page_signature(
        f"{base}\nThe hall will cost 4.5 million and hold 120 stalls of 9 m2.\n"
        "Published 3 March 2021, 10:45. 2,345 views."
    )
    priced = page_signature(f"{base}\nThe hall will cost 7.2 million and hold 95 stalls of 12 m2.")
    assert (a.number_count, a.numbers) == (dated.number_count, dated.numbers)
    assert a.number_count == 3 and hamming(a.numbers, priced.numbers) > 0


def test_rule_guards_and_vetoes():
    rule = Rule()
    sentences = tuple(range(1, 9))
    page = PageSignature(0, sentences, 1000, 0, 0)
    assert rule.decide(page, page, 3) == "hamming"
    # the first 30% of a long article: same fingerprint, too short for the Hamming rule
    assert rule.decide(PageSignature(0, sentences[:3], 300, 0, 0), page, 3) is None
    # near fingerprints but none of 8 long sentences shared: a heavily edited page
    edited = PageSignature(0b11, tuple(range(20, 28)), 1000, 0, 0)
    assert rule.decide(edited, page, 3) is None
    assert Rule(sentences_veto=99).decide(edited, page, 3) == "hamming"
    # ... unless the fingerprints are 0 or 1 bit apart (a lightly edited copy)
    assert rule.decide(PageSignature(1, edited.sentences, 1000, 0, 0), page, 3) == "hamming"
    # far fingerprints, three long sentences shared: the sentence rule
    moved = PageSignature((1 << 64) - 1, (1, 2, 3, 40, 41), 900, 0, 0)
    assert rule.decide(moved, page, 3) == "sentences"
    assert rule.decide(moved, page, 3, counted=2) is None  # the index's guard left one out
    assert rule.decide(PageSignature(moved.fingerprint, (1, 2, 40), 900, 0, 0), page, 3) is None
    assert (
        rule.decide(PageSignature(moved.fingerprint, moved.sentences, 400, 0, 0), page, 3) is None
    )
    # near fingerprints and 2 long sentences shared, but the shingles sketches 23 bits apart:
    # the words are alike, their runs are not (a rewritten page); 22 bits apart, a copy
    shingled = PageSignature(0, sentences, 1000, shingles=1 << 63)
    rewritten = PageSignature(0b11, (1, 2, *range(20, 26)), 1000, shingles=1 << 63 | _bits(23))
    assert rule.decide(rewritten, shingled, 3) is None
    assert Rule(shingles_distance=23).decide(rewritten, shingled, 3) == "hamming"
    copy = PageSignature(0b11, rewritten.sentences, 1000, shingles=1 << 63 | _bits(22))
    assert rule.decide(copy, shingled, 3) == "hamming"
    # a signature without the sketch (made by hand, or pickled by version 9) is not vetoed
    assert rule.decide(PageSignature(0b11, rewritten.sentences, 1000), shingled, 3) == "hamming"
    assert rule.decide(rewritten, PageSignature(0, sentences, 1000), 3) == "hamming"
    # the same prose with other numbers (a product variant): vetoed
    numbered = PageSignature(0, sentences, 1000, NUMBERS, 10)
    other = PageSignature((1 << 64) - 1, sentences, 1000, OTHER_NUMBERS, 10)
    assert rule.decide(other, numbered, 3) is None
    assert rule.decide(
        PageSignature(other.fingerprint, sentences, 1000, NUMBERS, 10), numbered, 3
    ) == ("sentences")


def test_a_rewrite_sharing_one_long_sentence_is_not_a_copy_at_any_distance():
    """Both pages with 6 long sentences or more, at most one shared, of like length, and
    their shingles sketches 18 bits apart or more (under about half their runs of words the
    same): a rewrite, even with its fingerprint within a bit. A copy keeps more runs, or more
    of its sentences, or is inside a longer text (whose other runs it cannot share)."""
    rule = Rule()
    whole = PageSignature(0, tuple(range(1, 9)), 1000, shingles=1 << 63)
    one = (1, *range(20, 27))  # one of the 8 long sentences kept
    rewrite = PageSignature(1, one, 980, shingles=1 << 63 | _bits(18))
    assert rule.decide(rewrite, whole, 3) is None
    assert rule.decide(whole, rewrite, 3) is None
    assert rule.decide(PageSignature(0, one, 980, shingles=rewrite.shingles), whole, 3) is None
    assert Rule(veto_runs=19).decide(rewrite, whole, 3) == "hamming"
    # a copy whose edits broke 7 of its 8 long sentences but kept more of its runs
    assert rule.decide(PageSignature(1, one, 980, shingles=1 << 63 | _bits(17)), whole, 3) == (
        "hamming"
    )
    # two long sentences kept
    two = (1, 2, *range(20, 26))
    assert rule.decide(PageSignature(1, two, 980, shingles=rewrite.shingles), whole, 3) == (
        "hamming"
    )
    # a text inside one a fifth longer or more: its runs are a part of the longer's
    assert rule.decide(PageSignature(1, one, 790, shingles=rewrite.shingles), whole, 3) == (
        "hamming"
    )
    assert rule.decide(PageSignature(1, one, 800, shingles=rewrite.shingles), whole, 3) is None
    # six long sentences each are enough to say; five are too few
    six = PageSignature(0, tuple(range(1, 7)), 1000, shingles=1 << 63)
    assert (
        rule.decide(PageSignature(1, (1, *range(20, 25)), 980, shingles=rewrite.shingles), six, 3)
        is None
    )
    five = PageSignature(0, tuple(range(1, 6)), 1000, shingles=1 << 63)
    assert (
        rule.decide(PageSignature(1, (1, 20, 21, 22, 23), 980, shingles=rewrite.shingles), five, 3)
        == "hamming"
    )
    # a signature without the sketch has no say
    assert rule.decide(PageSignature(1, one, 980), whole, 3) == "hamming"


def test_a_page_contained_in_a_longer_one_needs_less_than_half_its_words():
    """All but one of the long sentences of the page that has fewer shared, and 5 at least:
    the shorter is contained in the longer, whose extra words are not the article's prose
    (which would have taken places among its longest sentences), and the sentence rule asks
    0.3 of its words instead of half."""
    rule = Rule()
    far = (1 << 64) - 1  # fingerprints 64 bits apart
    article = PageSignature(0, tuple(range(1, 9)), 300, 0, 0)
    copy = PageSignature(far, (*range(1, 8), 99), 900, 0, 0)  # 7 of 8 shared, 0.33
    assert rule.decide(copy, article, 3) == rule.decide(article, copy, 3) == "sentences"
    assert Rule(contained=99).decide(copy, article, 3) is None  # the length guard (0.5)
    assert rule.decide(PageSignature(far, (*range(1, 7), 98, 99), 900, 0, 0), article, 3) is None
    assert rule.decide(PageSignature(far, copy.sentences, 1100, 0, 0), article, 3) is None
    assert rule.decide(copy, article, 3, counted=6) is None  # the index's guard left one out
    # a page of 6 long sentences, 5 of them in the other: contained; of 5, 4 are too few
    six = PageSignature(0, tuple(range(1, 7)), 300, 0, 0)
    assert rule.decide(PageSignature(far, (1, 2, 3, 4, 5, 50, 51, 52), 900, 0, 0), six, 3) == (
        "sentences"
    )
    five = PageSignature(0, tuple(range(1, 6)), 300, 0, 0)
    assert rule.decide(PageSignature(far, (1, 2, 3, 4, 50, 51, 52), 900, 0, 0), five, 3) is None
    # the numbers veto does not speak for pages of unlike length (the longer's own text
    # brings numbers of its own); with numbers_length 0 it would
    numbered = PageSignature(0, article.sentences, 300, NUMBERS, 10)
    numbered_copy = PageSignature(far, copy.sentences, 900, OTHER_NUMBERS, 10)
    assert rule.decide(numbered_copy, numbered, 3) == "sentences"
    assert Rule(numbers_length=0).decide(numbered_copy, numbered, 3) is None


def test_a_contained_page_has_its_runs_of_words_among_the_longers():
    """A page of 375 words sharing all but one of its long sentences with a page of 1,000 is
    inside it only while their shingles sketches are about as far apart as that makes them:
    its runs of words all among the longer's give a Jaccard of 0.375, some 32 x 0.625 = 20
    bits apart; ``Rule.contained_runs`` (6) more is the bound. Further apart, most of its
    own runs of words are not in the longer, and what the two share is a part of each (two
    front pages of one blog, each with its own newest post over the same older ones)."""
    rule = Rule()
    sketch = 0x0F1E_2D3C_4B5A_6978
    longer = PageSignature(0, tuple(range(1, 9)), 1000, 0, 0, sketch)

    def page(runs_apart: int) -> PageSignature:
        far = (1 << 30) - 1  # fingerprints 30 bits apart
        return PageSignature(far, (*range(1, 8), 99), 375, 0, 0, sketch ^ _bits(runs_apart))

    for runs_apart, want in ((12, "sentences"), (20, "sentences"), (26, "sentences"), (27, None)):
        assert rule.decide(page(runs_apart), longer, 3) == want, runs_apart
        assert rule.decide(longer, page(runs_apart), 3) == want, runs_apart
    assert Rule(contained_runs=65).decide(page(27), longer, 3) == "sentences"
    assert Rule(contained_runs=0).decide(page(21), longer, 3) is None
    # a signature without the sketch (0) has no say
    unsketched = PageSignature((1 << 30) - 1, page(27).sentences, 375, 0, 0, 0)
    assert rule.decide(unsketched, longer, 3) == "sentences"


_WHO = ["My neighbour", "Our club", "The baker", "A friend of mine", "My sister", "The skipper"]
_SAID = ["always wanted", "never liked", "still remembers", "keeps talking about", "visited"]
_WHAT = ["the terminal at night", "the cranes by the quay", "the weekly fish auction",
         "the ferry to the island", "the cafes along the harbour"]  # fmt: skip


def _board_layout(title: str, paragraphs: list[str]) -> str:
    """A message board's layout: the article as a post, then thirty short replies."""
    said = [f"{w} {s} {t}, and says so every day." for w in _WHO for s in _SAID for t in _WHAT]
    posts = "".join(f"<p>{reply}</p>" for reply in said[::5])
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (
        f"<html><head><title>{title} | Harbour Board</title></head><body>"
        f"<div class='post'><h1>{title}</h1>{body}</div>"
        f"<div class='board'><h4>Replies</h4>{posts}</div></body></html>"
    )


def test_an_article_among_replies_is_contained_in_its_page():
    """The article posted on a message board, with thirty short replies under it: the page
    has more than twice the article's words, and shares every long sentence with it (the
    replies are shorter). Version 7's rule refused it by the length guard."""
    title = "Grain terminal to become a market hall"
    article = _signature(_plain_layout(title, PARAGRAPHS))
    text = extract_text(_board_layout(title, PARAGRAPHS))
    assert text is not None and "says so every day" in text  # the replies came back
    board = page_signature(text)
    assert board is not None and board.words > 2 * article.words
    assert set(board.sentences) == set(article.sentences)
    assert board.is_near_duplicate(article) and article.is_near_duplicate(board)
    assert DEFAULT_RULE.decide(board, article, 3) == "sentences"
    assert Rule(contained=99).decide(board, article, 3) is None


def _bits(n: int) -> int:
    return (1 << n) - 1


#: Two pages' numbers as :func:`numbers_bits` gives them, neither holding any of the other's
#: (16 numbers each): what the numbers veto asks of pages whose numbers disagree.
NUMBERS = _bits(16)
OTHER_NUMBERS = _bits(16) << 48


def test_a_copy_whose_edits_broke_every_long_sentence_is_a_copy_while_its_runs_agree():
    """None of 8 long sentences shared and the fingerprints 2 bits apart or more say a
    rewrite; but a 2%-edited copy can break each of its longest sentences with one word,
    and keeps most of its runs of words. Within ``runs_near`` bits of shingles sketch, the
    sentences veto does not hold; a bit further, or without the sketch, it does."""
    rule = Rule()
    whole = PageSignature(0, tuple(range(1, 9)), 1000, shingles=1 << 63)
    broken = tuple(range(20, 28))  # each long sentence edited
    copy = PageSignature(_bits(3), broken, 995, shingles=1 << 63 | _bits(10))
    assert rule.decide(copy, whole, 3) == "hamming"
    assert rule.decide(whole, copy, 3) == "hamming"
    assert Rule(runs_near=9).decide(copy, whole, 3) is None
    further = PageSignature(_bits(3), broken, 995, shingles=1 << 63 | _bits(11))
    assert rule.decide(further, whole, 3) is None
    assert rule.decide(PageSignature(_bits(3), broken, 995), whole, 3) is None  # no sketch


def _one_word_edited(paragraphs: list[str], sentences: list[tuple[int, str]], seed: int):
    """``paragraphs`` with one word of each of ``sentences`` (paragraph, sentence) replaced."""
    rng = random.Random(seed)
    edited = list(paragraphs)
    for at, sentence in sentences:
        words = sentence.split(" ")
        words[rng.randrange(1, len(words))] = rng.choice(["harbour", "quietly", "granite"])
        edited[at] = edited[at].replace(sentence, " ".join(words))
    return edited


def test_a_copy_with_one_word_edited_in_each_long_sentence_is_a_near_duplicate():
    """Through trafilatura: one word edited in each of the 8 longest sentences (under 2% of
    the words). Every copy within k bits is a near duplicate. Half of them land 2 or 3 bits
    apart sharing none of the long sentences, which the sentences veto took for rewrites
    until it asked the runs of words too."""
    paragraphs = PARAGRAPHS + OTHER
    sentences = [(at, s) for at, p in enumerate(paragraphs) for s in p.split(". ")]
    longest = sorted(sentences, key=lambda item: len(item[1]), reverse=True)[:SENTENCES]
    whole = _signature(_plain_layout("Grain terminal", paragraphs))
    broken = 0
    for seed in range(16):
        edited = _one_word_edited(paragraphs, longest, seed)
        copy = _signature(_plain_layout("Grain terminal", edited))
        distance = hamming(copy.fingerprint, whole.fingerprint)
        if distance > 3:
            continue  # beyond k, and no long sentence left to say otherwise
        assert whole.is_near_duplicate(copy) and copy.is_near_duplicate(whole), seed
        if distance >= Rule.veto_distance and not set(copy.sentences) & set(whole.sentences):
            assert hamming(copy.shingles, whole.shingles) <= Rule.runs_near, seed
            broken += 1
    assert broken >= 5


def test_three_shared_sentences_are_enough_one_bit_past_k(tmp_path):
    """A 2%-edited copy can land one bit past k with most of its long sentences broken by the
    edits: 3 of 8 shared, under half. The two weak signals agree, so the sentence rule asks
    for 3 sentences alone there; two bits past k, or with 2 shared, it asks for half."""
    rule = Rule()
    stored = PageSignature(0, tuple(range(1, 9)), 1000, 0, 0)
    near = PageSignature(_bits(4), (1, 2, 3, 20, 21, 22, 23, 24), 990, 0, 0)
    assert rule.decide(near, stored, 3) == "sentences"
    assert stored.is_near_duplicate(near)
    assert rule.decide(near, stored, 3, counted=2) is None  # the guard left one out
    assert rule.decide(near, stored, 2) is None  # k=2: two bits past k
    assert Rule(near=0).decide(near, stored, 3) is None  # half asked at every distance
    farther = PageSignature(_bits(5), near.sentences, 990, 0, 0)
    assert rule.decide(farther, stored, 3) is None
    two = PageSignature(near.fingerprint, (1, 2, 20, 21, 22, 23, 24, 25), 990, 0, 0)
    assert rule.decide(two, stored, 3) is None
    # one bit past k but the runs of words mostly differ (a rewritten page): half asked
    sketched = PageSignature(0, stored.sentences, 1000, shingles=1 << 63)
    rewritten = PageSignature(near.fingerprint, near.sentences, 990, shingles=1 << 63 | _bits(23))
    assert rule.decide(rewritten, sketched, 3) is None
    # (so do runs that far apart with under 5 shared, unless a text reads as inside the other)
    assert Rule(shingles_distance=23).decide(rewritten, sketched, 3) is None
    loose = Rule(shingles_distance=23, block_far_runs=65)
    assert loose.decide(rewritten, sketched, 3) == "sentences"
    # (the probe reaches k bits only: the index finds it through the sentences' postings)
    _guards_hold_and_an_index_decides_alike(tmp_path, stored, near, farther, 4)


def _guards_hold_and_an_index_decides_alike(
    tmp_path, stored: PageSignature, copy: PageSignature, other: PageSignature, distance: int
) -> None:
    """The length guard and the numbers veto still refuse ``copy``; an index holding
    ``stored`` finds ``copy`` through the sentences' postings and decides as the rule does
    (``distance`` bits apart; ``other`` is no duplicate)."""
    rule = Rule()
    assert rule.decide(replace(copy, words=400), stored, 3) is None
    numbered = replace(stored, numbers=NUMBERS, number_count=10)
    variant = replace(copy, numbers=OTHER_NUMBERS, number_count=10)
    assert rule.decide(variant, numbered, 3) is None
    with SimhashIndex(tmp_path / "ix") as ix:
        ix.insert(stored, "https://a.example/story")
        match = ix.decide(copy, "https://b.example/copy")
        assert match is not None and (match.rule, match.distance) == ("sentences", distance)
        assert ix.decide(other, "https://b.example/other") is None


def test_three_shared_sentences_are_enough_when_the_runs_of_words_agree(tmp_path):
    """A copy whose fingerprint the edits (or a layout's lead) moved far past k, with 3 of 8
    long sentences left whole, is still one article when most of its runs of words are the
    same: shingles sketches within ``Rule.runs_near`` bits (a Jaccard of about 0.7 or more).
    Sketches farther apart, or one side without a sketch, ask for half the sentences."""
    rule = Rule()
    base = 1 << 62
    stored = PageSignature(0, tuple(range(1, 9)), 1000, shingles=base)
    copy = PageSignature(_bits(12), (1, 2, 3, 20, 21, 22, 23, 24), 980, shingles=base ^ _bits(10))
    assert rule.decide(copy, stored, 3) == "sentences"
    assert stored.is_near_duplicate(copy)
    assert Rule(runs_near=9).decide(copy, stored, 3) is None
    assert rule.decide(copy, stored, 3, counted=2) is None  # the guard left one out
    apart = PageSignature(copy.fingerprint, copy.sentences, 980, shingles=base ^ _bits(11))
    assert rule.decide(apart, stored, 3) is None
    unsketched = PageSignature(copy.fingerprint, copy.sentences, 980)
    assert rule.decide(unsketched, stored, 3) is None
    _guards_hold_and_an_index_decides_alike(tmp_path, stored, copy, apart, 12)


def test_one_shared_sentence_is_enough_when_nearly_all_runs_of_words_agree(tmp_path):
    """An ad or a list put into an article, or a few edits near its top, can move its
    fingerprint past k and break all but one of its long sentences, while nearly all its
    runs of words stay: shingles sketches within ``Rule.runs_same`` bits (a Jaccard of
    about 0.85 or more). One shared sentence is then enough, and an index finds the stored
    page through it. A bit farther, no sentence shared, or no sketch: not enough."""
    rule = Rule()
    assert (rule.fewest_shared, Rule(runs_same=-1).fewest_shared) == (1, rule.shared)
    assert Rule(runs_same=-1, contained=2).fewest_shared == 2
    base = 1 << 62
    stored = PageSignature(0, tuple(range(1, 9)), 1000, shingles=base)
    copy = PageSignature(_bits(5), (1, *range(20, 27)), 990, shingles=base ^ _bits(5))
    assert rule.decide(copy, stored, 3) == "sentences"
    assert stored.is_near_duplicate(copy)
    assert Rule(runs_same=4).decide(copy, stored, 3) is None
    assert Rule(runs_same=-1).decide(copy, stored, 3) is None
    assert rule.decide(copy, stored, 3, counted=0) is None  # the guard left it out
    unshared = replace(copy, sentences=tuple(range(20, 28)))
    assert rule.decide(unshared, stored, 3) is None
    assert rule.decide(replace(copy, shingles=0), stored, 3) is None
    apart = replace(copy, shingles=base ^ _bits(6))
    assert rule.decide(apart, stored, 3) is None
    _guards_hold_and_an_index_decides_alike(tmp_path, stored, copy, apart, 5)
    # the index looks at a stored page's fingerprint and sketch alone before decoding it
    packed = copy.pack()
    assert PageSignature.sketches_of(packed) == (copy.fingerprint, copy.shingles)
    assert PageSignature.sketches_of(packed + b"\x00\x01\x02\x03") == (
        copy.fingerprint,
        copy.shingles,
    )
    assert PageSignature.sketches_of(packed[:30]) == (0, 0)


def test_one_shared_sentence_is_enough_one_bit_past_k_when_most_runs_agree(tmp_path):
    """A 2%-edited copy one bit past k whose edits broke all but one or two of its long
    sentences, with most of its runs of words the same (sketches within ``Rule.runs_near``):
    the two signals agree a step further, and one shared sentence is enough. Two bits past
    k, or the runs a bit farther apart, it is not."""
    rule = Rule()
    base = 1 << 62
    stored = PageSignature(0, tuple(range(1, 9)), 1000, shingles=base)
    copy = PageSignature(_bits(4), (1, *range(20, 27)), 990, shingles=base ^ _bits(10))
    assert rule.takes_one(copy, stored.fingerprint, stored.shingles, 3)
    assert rule.decide(copy, stored, 3) == "sentences"
    assert Rule(near=0).decide(copy, stored, 3) is None
    assert Rule(runs_same=-1).decide(copy, stored, 3) is None
    assert rule.decide(replace(copy, fingerprint=_bits(5)), stored, 3) is None
    apart = replace(copy, shingles=base ^ _bits(11))
    assert not rule.takes_one(apart, stored.fingerprint, stored.shingles, 3)
    assert rule.decide(apart, stored, 3) is None
    _guards_hold_and_an_index_decides_alike(tmp_path, stored, copy, apart, 4)


def test_an_article_in_another_sites_layout_shares_its_sentences():
    plain = _signature(_plain_layout("Grain terminal to become a market hall", PARAGRAPHS))
    busy = _signature(_busy_layout("Grain terminal to become a market hall", PARAGRAPHS))
    assert plain.is_near_duplicate(busy) and busy.is_near_duplicate(plain)
    # by the sentence rule alone (no Hamming distance is small enough)
    assert DEFAULT_RULE.decide(busy, plain, -1) == "sentences"


# Two press releases of one company: different news, each closed by the company's boilerplate,
# whose sentences are longer than the releases' own and take half their eight longest.
RELEASE_BOILERPLATE = [
    "About Northwind Turbines: Northwind Turbines designs, builds and services onshore wind "
    "turbines for utilities and independent power producers across fourteen countries, and "
    "employs more than four thousand people in its factories and service centres.",
    "This press release contains forward-looking statements about the company's expected "
    "orders, revenues, margins and plans, which are based on current expectations and involve "
    "risks and uncertainties that could cause actual results to differ materially.",
    "Factors that could cause such differences include changes in energy policy and subsidies, "
    "the prices of steel and other raw materials, supply chain disruptions, currency movements "
    "and the outcome of pending permits and legal proceedings.",
    "The company undertakes no obligation to update or revise any forward-looking statement, "
    "whether as a result of new information, future events or otherwise, except as required "
    "by applicable securities laws and stock exchange regulations.",
]
RELEASE_ORDER = [
    "Northwind Turbines has won an order for forty turbines from a utility in the north.",
    "The turbines will be installed on a ridge above the river valley next summer.",
    "Each machine has a rotor of one hundred and fifty metres and a tower of steel.",
    "The utility said the wind farm will supply the homes of two nearby towns.",
    "Construction of the access roads starts in the spring, after the snow melts.",
    "The order is the largest the company has won in the region so far.",
    "Local contractors will pour the foundations and lay the cables to the grid.",
    "The chief executive called the order a sign of confidence in the new design.",
    "Service engineers from the regional centre will maintain the machines for ten years.",
    "Shares of the company rose slightly in early trading after the announcement.",
]
RELEASE_FACTORY = [
    "Northwind Turbines will open a blade factory in the harbour town next autumn.",
    "The plant will employ three hundred people once it runs at full capacity.",
    "Blades up to eighty metres long will leave the quay on special barges.",
    "The harbour authority is dredging the channel so that larger ships can berth.",
    "Training for the first workers begins at the technical college in January.",
    "The regional government contributed a grant toward the cost of the new hall.",
    "The mayor said the factory brings back jobs lost when the shipyard closed.",
    "Suppliers of resin and glass fibre are expected to settle near the plant.",
    "The company plans a second production line if demand in Europe keeps growing.",
    "Residents will be invited to an open day before the machines are installed.",
]


def test_different_releases_sharing_their_boilerplate_are_not_one_page():
    """Half of their long sentences are the boilerplate's, but their fingerprints are as far
    apart as unrelated texts and few of their runs of words agree: a shared block of prose,
    not one article (``Rule.block_shared``). The same release in another layout still is."""
    order = _signature(
        _plain_layout("Order for forty turbines", RELEASE_ORDER + RELEASE_BOILERPLATE)
    )
    factory = _signature(
        _plain_layout("A blade factory in the harbour", RELEASE_FACTORY + RELEASE_BOILERPLATE)
    )
    shared = set(order.sentences) & set(factory.sentences)
    assert len(shared) == 4 and len(order.sentences) == len(factory.sentences) == 8
    assert not order.is_near_duplicate(factory) and not factory.is_near_duplicate(order)
    # without the clause (and the one for texts yet further apart), the sentence rule took
    # them for one page
    before = replace(DEFAULT_RULE, block_shared=0, apart_distance=65)
    assert before.decide(factory, order, 3) == "sentences"
    moved = _signature(
        _busy_layout("Order for forty turbines", RELEASE_ORDER + RELEASE_BOILERPLATE)
    )
    assert order.is_near_duplicate(moved) and moved.is_near_duplicate(order)


def test_articles_under_one_box_of_the_sites_prose_are_not_one_page():
    """A site that prints a box of its own prose above each article: the box holds half of
    their long sentences and, as their lead, brings the fingerprints within a few bits, but
    their runs of words are about as far apart as unrelated texts (``Rule.block_far_runs``).
    The box's sentences head both lists of long sentences: not a text inside a longer one."""
    order = _signature(_plain_layout("An order", RELEASE_BOILERPLATE + RELEASE_ORDER))
    factory = _signature(_plain_layout("A factory", RELEASE_BOILERPLATE + RELEASE_FACTORY))
    shared = set(order.sentences) & set(factory.sentences)
    assert len(shared) == 4 and len(order.sentences) == len(factory.sentences) == 8
    assert hamming(order.fingerprint, factory.fingerprint) < DEFAULT_RULE.block_distance
    assert hamming(order.shingles, factory.shingles) >= DEFAULT_RULE.block_far_runs
    assert not order.is_near_duplicate(factory) and not factory.is_near_duplicate(order)
    before = replace(DEFAULT_RULE, block_far_runs=65)  # without the clause: one page
    assert before.decide(factory, order, 3) == "sentences"


def test_a_text_inside_a_longer_one_shares_its_longest_sentences():
    """Pages whose runs of words are far apart and that share 4 of 8 long sentences: one
    article when they are the shorter page's four longest while the longer's list begins
    with text of its own (a copy in a layout that adds longer prose: its own text can only
    push the article's shorter sentences out of its list); two pages when the shared ones
    head both lists or neither, or the pages are of one length. Every sentence of the page
    with fewer shared, or five, is no block's."""
    fp, sk = 0x0123_4567_89AB_CDEF, 0x0F1E_2D3C_4B5A_6978
    near_fp, far_sk = fp ^ 0b1111, sk ^ ((1 << 24) - 1)  # 4 and 24 bits apart
    article = PageSignature(fp, tuple(range(1, 9)), 500, shingles=sk)

    def page(sentences: tuple[int, ...], words: int) -> PageSignature:
        return PageSignature(near_fp, sentences, words, shingles=far_sk)

    copies = {
        "own text first": (page((91, 92, 1, 93, 2, 3, 94, 4), 700), "sentences"),
        "shared first in both": (page((1, 2, 3, 4, 91, 92, 93, 94), 700), None),
        "shared last in the shorter": (page((91, 92, 1, 93, 2, 3, 94, 4), 450), None),
        "of one length": (page((91, 92, 1, 93, 2, 3, 94, 4), 500), None),
        # not a block: every sentence of the page with fewer, or block_shared of them, shared
        "every one of the fewer's": (page((1, 2, 3, 4), 500), "sentences"),
        "five shared": (page((1, 2, 3, 4, 5, 91, 92, 93), 500), "sentences"),
    }
    for name, (copy, rule) in copies.items():
        assert DEFAULT_RULE.decide(copy, article, 3) == rule, name
        assert DEFAULT_RULE.decide(article, copy, 3) == rule, name
    before = replace(DEFAULT_RULE, block_far_runs=65)
    assert all(before.decide(copy, article, 3) == "sentences" for copy, _ in copies.values())


def _listing(posts: list[tuple[str, list[str]]]) -> str:
    """A blog's front page: its posts whole, each under its headline, newest first."""
    body = "".join(
        f"<article><h2>{title}</h2>{''.join(f'<p>{p}</p>' for p in paragraphs)}</article>"
        for title, paragraphs in posts
    )
    return (
        "<html><head><title>Harbour notes</title></head><body><header><a href='/'>Home</a>"
        f"</header><main>{body}</main><footer>Contact us</footer></body></html>"
    )


def test_listings_whose_newest_post_differs_are_not_one_page():
    """Two front pages of one blog, each with another newest post over the same older ones:
    the older posts hold most of their long sentences, but the fingerprints and the runs of
    words are about as far apart as unrelated texts (``Rule.apart_distance``,
    ``Rule.apart_runs``), at like length (``Rule.apart_length``). The page with a new post
    on top is new; the same front page crawled again is not."""
    older = ("The harbour's boilerplate", RELEASE_BOILERPLATE + PARAGRAPHS[:2])
    order = _signature(_listing([("An order", RELEASE_ORDER), older]))
    path = _signature(_listing([("The path", OTHER), older]))
    shared = set(order.sentences) & set(path.sentences)
    assert len(shared) == 6 and len(order.sentences) == len(path.sentences) == 8
    assert hamming(order.fingerprint, path.fingerprint) >= DEFAULT_RULE.apart_distance
    assert hamming(order.shingles, path.shingles) >= DEFAULT_RULE.apart_runs
    assert min(order.words, path.words) >= DEFAULT_RULE.apart_length * max(order.words, path.words)
    assert not order.is_near_duplicate(path) and not path.is_near_duplicate(order)
    # without the clause, the sentence rule took them for one page
    before = replace(DEFAULT_RULE, apart_distance=65)
    assert before.decide(path, order, 3) == "sentences"
    again = _signature(_listing([("An order", RELEASE_ORDER), older]).replace("Home", "Start"))
    assert again.is_near_duplicate(order)


# A Chinese article with a subheading and a quotation: paragraphs that end without a full stop.
ZH_ARTICLE = [
    "山区小镇的老粮站今年春天改建成了图书馆，开馆第一周就接待了三千多名读者，其中一半以上是放学后结伴"
    "而来的中小学生。",
    "老粮站为什么变成了图书馆",
    "镇里的老人说，粮站曾经是全镇最热闹的地方，每到秋收，拖拉机从早到晚排在门口，如今这里又一次聚满了"
    "人，只是大家手里拿的不再是粮袋，而是孩子们的借书卡。",
    "设计图书馆的建筑师保留了粮仓原有的木梁和砖墙，在屋顶开了一排天窗，让阅览室整天都有自然光，改建时"
    "最难的是在不破坏旧墙的前提下加装保温层。",
    "“我们希望孩子们放学以后有一个安静的地方可以看书写作业，不用再在街上跑来跑去”",
    "图书馆的藏书大多来自城里几所大学的捐赠，也有不少是镇上居民自己送来的旧书，馆长介绍，他们每个周末"
    "都会请志愿者给孩子们讲故事。",
    "下一步的打算",
    "镇政府表示，下一步准备把粮站旁边的晒谷场改造成小广场，方便居民晚上散步和跳舞，附近的商户也很期待"
    "图书馆带来的客人。",
]


def _table_layout(title: str, paragraphs: list[str]) -> str:
    """An old site's layout: the article in one cell of a table, between its menu and its
    footer, under a header cell (a table that names one is read as a table, not as the
    blocks of a layout: ``text/layout_tables.py``; extraction runs the cell's paragraphs
    into one line, joined by spaces)."""
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (
        f"<html><head><title>{title}</title></head><body><table width='760'>"
        "<tr><th>山区资讯网</th></tr>"
        "<tr><td><a href='/'>首页</a> | <a href='/n'>新闻</a> | <a href='/b'>论坛</a></td></tr>"
        f"<tr><td>{body}</td></tr><tr><td>版权所有 2005 山区资讯网</td></tr></table></body></html>"
    )


def test_a_chinese_article_run_into_one_table_cell_keeps_its_sentences():
    """Chinese puts no space between words: a space between two CJK characters is where a
    layout ran two of the article's paragraphs together, and ends a sentence (version 6).
    Without that, the subheading and the quotation, which end in no full stop, ran on into
    the next paragraph's first sentence: the copies shared 2 of their 5 and 6 sentences, with
    fingerprints 4 bits apart, and were not near duplicates."""
    text = extract_text(_table_layout("老粮站变成了图书馆", ZH_ARTICLE), "https://example.com/a")
    assert text is not None and "借书卡。 设计" in text  # the cell: one line
    cell = page_signature(text)
    plain = _signature(_plain_layout("老粮站变成了图书馆", ZH_ARTICLE))
    assert cell is not None and len(cell.sentences) >= 6
    assert cell.sentences == plain.sentences
    assert cell.is_near_duplicate(plain) and plain.is_near_duplicate(cell)
    # a space before a Latin word, a space after a full-width comma: one sentence each
    latin = "这一次的更新使用 Python 编程语言重写了整个数据处理系统的核心部分。"
    comma = "二月五日，志愿者餐厅盘活了， 每天能够做出七百份盒饭送到医院里。"
    assert len(longest_sentences(latin)) == len(longest_sentences(comma)) == 1
    two = (
        "二月五日山区小镇的志愿者餐厅在老粮站旁边开始营业了 "
        "每天都能够做出七百多份热腾腾的盒饭送到各个医院里"
    )
    assert len(longest_sentences(two)) == 2


# An article as a phone-first site sets it: captions and subheadings without a full stop,
# and paragraphs opened by a symbol (a triangle, a star, an emoji, a bullet).
ZH_SYMBOLS = [
    *CELL_LINES,  # the pinned page's: a caption, a paragraph, a subheading, a paragraph
    "●交通部门提醒开车出行的司机要提前查看路况遇到结冰路段要减速慢行并保持安全车距",
    "▲供暖公司表示城区各个小区的暖气已经全部开通夜间室内温度能够保持在十八度以上",
    "★养殖户要给牲畜准备足够的饲料和干草，把圈舍的门窗封好，避免冷风直接吹进去。",
    "➨各地农业部门已经派出技术人员下乡帮助农民做好防寒准备并统计各村的受灾情况",
]


def test_paragraphs_opened_by_a_symbol_in_one_table_cell_keep_their_sentences():
    """A space within CJK text before a symbol that opens a paragraph ends a sentence
    (version 9): run into one table cell, a caption or subheading without a full stop no
    longer runs on into the next paragraph's first sentence."""
    text = extract_text(_table_layout("北方迎来降温", ZH_SYMBOLS), "https://example.com/a")
    assert text is not None and "天气过程 ★国家" in text  # the cell: one line
    cell = page_signature(text)
    plain = _signature(_plain_layout("北方迎来降温", ZH_SYMBOLS))
    assert cell is not None and len(cell.sentences) == SENTENCES
    assert cell.sentences == plain.sentences
    assert cell.is_near_duplicate(plain) and plain.is_near_duplicate(cell)
    # a space before a Latin word still ends none
    assert len(longest_sentences("这一次的更新使用 Python 编程语言重写了整个数据处理系统")) == 1


# Readers' replies on a Chinese message board, their sentences ended by tildes.
ZH_REPLIES = [
    ("小鱼儿", "这个图书馆我去过好几次了~~环境真的特别好~~周末带孩子去看书的人特别多~~"),
    (
        "老张头",
        "支持支持~~老粮站那一片以前晚上黑乎乎的~~现在一到晚上灯火通明~~附近的小卖部生意也好了~~",
    ),
    (
        "山里人家",
        "我们村离镇上有二十多里路~~孩子每个星期六都要坐车去借书~~要是村里也有借书点就好了~~",
    ),
    (
        "爱读书的猫",
        "楼上说得对~~借书卡办起来也很简单~~带上户口本就行了~~我上个月刚给女儿办了一张~~",
    ),
    (
        "路过的",
        "图书馆门口那两棵老槐树一定要保留下来啊~~那是我们小时候乘凉的地方~~现在想起来还很亲切~~",
    ),
    (
        "阿强",
        "建议图书馆晚上多开一会儿~~下班以后过去的时候经常已经关门了~~周末能不能开到晚上九点~~",
    ),
    (
        "春天里",
        "今天下午又去了一趟~~二楼新开了一间儿童阅览室~~地上铺着软软的垫子~~小朋友可以坐着看绘本~~",
    ),
    (
        "镇东头的",
        "听说下个月还要办一次旧书交换活动~~家里不看的书可以拿去换别的书~~我已经整理出两大箱了~~",
    ),
    ("小学老师", "我们班的学生现在放学都往图书馆跑~~作业写完了就在那里看书~~家长们也放心多了~~"),
]


def _forum_layout(title: str, paragraphs: list[str], replies: list[tuple[str, str]]) -> str:
    """A message board's layout: a table under its header cells whose first row is the
    article, posted, and whose other rows are the replies (trafilatura returns them with it,
    as rows)."""
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    posts = "".join(f"<tr><td>{who}</td><td>{text}</td></tr>" for who, text in replies)
    return (
        f"<html><head><title>{title} - 小镇论坛</title></head><body><table>"
        "<tr><th>作者</th><th>内容</th></tr>"
        f"<tr><td colspan='2'>{title} &gt; 小镇论坛 &gt; 家长里短</td></tr>"
        f"<tr><td>楼主</td><td>{body}</td></tr>{posts}</table></body></html>"
    )


def test_an_article_among_replies_ended_by_tildes_is_contained_in_its_page():
    """Read as the sentences their writers made, the replies are shorter than the article's
    long sentences: the board's page shares all but one of them and contains the article.
    Read as one sentence each (version 8, as here with commas), they take the article's
    places among the page's longest, and the copy was missed."""
    title = "老粮站变成了图书馆"
    plain = _signature(_plain_layout(title, ZH_ARTICLE))
    text = extract_text(_forum_layout(title, ZH_ARTICLE, ZH_REPLIES), "https://example.com/t")
    assert text is not None and "带上户口本就行了~~" in text  # the replies came back
    board = page_signature(text)
    assert board is not None and board.words > 2 * plain.words
    assert len(set(board.sentences) & set(plain.sentences)) == len(plain.sentences) - 1
    assert board.is_near_duplicate(plain) and plain.is_near_duplicate(board)
    commas = [(who, reply.replace("~~", "，")) for who, reply in ZH_REPLIES]
    run_on = _signature(_forum_layout(title, ZH_ARTICLE, commas))
    assert not run_on.is_near_duplicate(plain) and not plain.is_near_duplicate(run_on)


@deferred_f_from_coro_f
async def test_a_crawl_drops_a_chinese_article_copied_into_a_table_cell(site, routes, tmp_path):
    """The copy of :data:`ZH_ARTICLE` in an old table layout is dropped as a near duplicate
    of the article, by its sentences; another Chinese article in the same layout is kept."""
    from .test_scrapy_crawl import MIDDLEWARE, crawl, paths

    weather = [
        TEXTS["zh"],
        "据介绍，今年冬季全国平均气温预计比常年偏低，北方部分地区降温幅度较大，相关部门已经提前储备"
        "了防寒物资，并安排人员在重点路段值守。",
    ]
    pages = {
        "/zh/library.html": _plain_layout("老粮站变成了图书馆", ZH_ARTICLE),
        "/zh/partner-library.html": _table_layout("老粮站变成了图书馆", ZH_ARTICLE),
        "/zh/partner-weather.html": _table_layout("北方将迎来降温降雪", weather),
    }
    for path, html in pages.items():
        routes[path] = (200, "text/html; charset=utf-8", html.encode())
    links = "".join(f"<li><a href='{p}'>{p}</a></li>" for p in pages)
    index_page = f"<html><body><ul>{links}</ul></body></html>"
    routes["/zh/index.html"] = (200, "text/html; charset=utf-8", index_page.encode())
    result = await crawl(MIDDLEWARE, tmp_path, site, start="/zh/index.html")
    assert paths(site, result.kept) == ["/zh/library.html", "/zh/partner-weather.html"]
    assert result.simhash["simhash/duplicate"] == 1
    assert result.simhash["simhash/duplicate/by/sentences"] == 1
    with SimhashIndex(tmp_path / "simhash" / "site") as index:
        drop = index.dropped(site.url("/zh/partner-library.html"))
        assert (drop.kept, drop.rule) == (site.url("/zh/library.html"), "sentences")


# Another site's lists of its own articles: a headline and the first sentences of each.
TEASERS = {
    "en": [
        ("Railway path reopens after volunteers clear fallen trees", f"{OTHER[0]} {OTHER[1]}"),
        ("Orchids found along the old cutting", f"{OTHER[4]} {OTHER[5]}"),
        ("Walking club plans summer guided walks", f"{OTHER[3]} {OTHER[2]}"),
        (
            "Bus route to link the estate to the hospital",
            "From next month a new bus will run every twenty minutes between the estate and the "
            "hospital, stopping at the station and the market square, after years of complaints "
            "from patients and staff who had to change twice.",
        ),
        (
            "Schools to share a new sports hall",
            "The three primary schools on the hill will share a new sports hall built on the old "
            "playing field, and the council says local clubs will be able to book it in the "
            "evenings and at weekends once it opens.",
        ),
        (
            "Lifeboat crew rescues two kayakers off the point",
            "The crew was called out shortly after dawn when a passing fisherman saw two kayaks "
            "drifting towards the rocks below the lighthouse, and both paddlers were brought "
            "ashore cold but unhurt.",
        ),
    ],
    "zh": [
        (
            "老街夜市重新开张",
            "沿河老街的夜市在停业两年之后重新开张，摊主们说第一个周末的客人比他们想象的多得多，卖小吃"
            "和手工艺品的摊位前一直排着长队，镇里还专门安排了志愿者维持秩序",
        ),
        (
            "山区公路拓宽工程完工",
            "连接小镇和县城的山区公路拓宽工程上个月完工，原来要走一个半小时的路程现在只要四十分钟，附近"
            "村子的果农说今年的水果终于可以赶在新鲜的时候运到城里的批发市场",
        ),
        (
            "中学新建的实验楼投入使用",
            "镇中学新建的实验楼本学期正式投入使用，楼里有物理、化学和生物三个实验室，还有一间可以容纳两百"
            "人的报告厅，学校计划请大学的老师每个月来给学生们上一次科普课",
        ),
        (
            "卫生院开设周末门诊",
            "为了方便外出打工回来的居民看病，镇卫生院从下个月开始在周末增开门诊，内科、儿科和口腔科都会"
            "有医生值班，院长说以后还要请县医院的专家定期来坐诊",
        ),
        (
            "水库周边步道向游客开放",
            "水库周边新修的步道本周起向游客开放，全长八公里，沿途设有三个观景台和两处休息点，管理处提醒"
            "游客注意防火，不要在步道以外的山林里随意走动和生火做饭",
        ),
    ],
}


def _teasers_layout(title: str, paragraphs: list[str], heading: str, language: str) -> str:
    """Another site's layout that sets a list of its own articles, under ``heading``, at the
    end of each article (trafilatura returns it with the article)."""
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    items = "".join(
        f"<li><a href='/more/{i}'>{headline}</a> {summary}</li>"
        for i, (headline, summary) in enumerate(TEASERS[language])
    )
    return (
        f"<html><head><title>{title} | Valley News</title></head><body>"
        "<nav><a href='/'>Home</a> | <a href='/news'>News</a></nav>"
        f"<article><h1>{title}</h1>{body}<div><h3>{heading}</h3><ul>{items}</ul></div>"
        "</article><footer>Valley News</footer></body></html>"
    )


@pytest.mark.parametrize(
    ("language", "title", "paragraphs", "heading", "other_heading"),
    [
        (
            "en",
            "Grain terminal to become a market hall",
            PARAGRAPHS,
            "Related articles",
            "Elsewhere",
        ),
        (
            "en",
            "Grain terminal to become a market hall",
            PARAGRAPHS,
            "More from Valley News",
            "Elsewhere",
        ),
        ("zh", "老粮站变成了图书馆", ZH_ARTICLE, "相关推荐", "本站其他文章"),
        ("zh", "老粮站变成了图书馆", ZH_ARTICLE, "您可能感兴趣的文章：", "本站其他文章"),
    ],
)
def test_a_list_of_other_articles_under_its_heading_is_not_part_of_the_copy(
    language, title, paragraphs, heading, other_heading
):
    """An article copied into a layout that sets a list of its own articles (headlines and
    their first sentences) after it: extraction returns the list with the article, and the
    signature leaves it out under a heading it knows (version 8), so the copy's signature is
    the article's. Under a heading it does not know, the same list is read as text: the copy
    has twice the article's words and is not taken for it."""
    plain = _signature(_plain_layout(title, paragraphs))
    text = extract_text(_teasers_layout(title, paragraphs, heading, language))
    assert text is not None and TEASERS[language][-1][1][:20] in text  # the list came back
    assert page_signature(text) == plain
    other = _signature(_teasers_layout(title, paragraphs, other_heading, language))
    assert other.words > 1.8 * plain.words
    assert not other.is_near_duplicate(plain) and not plain.is_near_duplicate(other)


def test_different_articles_in_one_layout_are_not_near_duplicates():
    a = _signature(_busy_layout("Grain terminal to become a market hall", PARAGRAPHS))
    b = _signature(_busy_layout("Railway path reopens", OTHER))
    assert not a.is_near_duplicate(b) and not b.is_near_duplicate(a)


def test_a_first_part_and_an_edited_copy_are_not_near_duplicates():
    whole = _signature(_plain_layout("Grain terminal", PARAGRAPHS))
    first = _signature(_plain_layout("Grain terminal", PARAGRAPHS[:3]))
    assert not whole.is_near_duplicate(first)
    rng = random.Random(5)
    words = " ".join(PARAGRAPHS).split(" ")
    for i in rng.sample(range(len(words)), len(words) // 5):
        words[i] = rng.choice(["river", "council", "winter", "bridge", "market", "summer"])
    edited = _signature(_plain_layout("Grain terminal", [" ".join(words)]))
    assert not whole.is_near_duplicate(edited)


def _reworded(words: list[str], share: float, seed: int) -> str:
    """The article with ``share`` of its words replaced by others of its own words (its
    vocabulary kept, its runs of words broken), in four paragraphs."""
    rng = random.Random(seed)
    words = list(words)
    for i in rng.sample(range(len(words)), round(share * len(words))):
        words[i] = rng.choice(words)
    n = len(words) // 4
    paragraphs = [" ".join(words[i : i + n]) for i in range(0, len(words), n)]
    return _plain_layout("Grain terminal", paragraphs)


def test_the_shingles_sketch_tells_an_edited_copy_from_a_rewritten_page():
    """Through trafilatura: 2%-edited copies keep most runs of five words and are within the
    Hamming rule's shingles veto, every one a near duplicate; 20%-rewritten pages, their
    words taken from the article itself, keep few runs, and every one is past the veto."""
    words = " ".join(PARAGRAPHS + OTHER).split(" ")
    whole = _signature(_reworded(words, 0.0, 0))
    assert whole.shingles != 0
    for seed in range(12):
        copy = _signature(_reworded(words, 0.02, seed))
        assert hamming(copy.shingles, whole.shingles) <= Rule.shingles_distance, seed
        assert whole.is_near_duplicate(copy), seed
        rewritten = _signature(_reworded(words, 0.2, seed))
        assert hamming(rewritten.shingles, whole.shingles) > Rule.shingles_distance, seed
        assert not whole.is_near_duplicate(rewritten), seed
    # the sketch reads runs of words: the same words in another order are far
    backwards = _signature(_plain_layout("Grain terminal", [" ".join(reversed(words))]))
    assert hamming(backwards.shingles, whole.shingles) > Rule.shingles_distance
    assert shingles_sketch(np.zeros(0, dtype=np.uint64)) == 0


SPECS = ["Weight", "Drop", "Stack height", "Lug depth", "Width"]
SMALL = ("TR-410", "129.90", ["245 g", "6 mm", "28 mm", "4.5 mm", "98 mm"])
LARGE = ("TR-520", "159.90", ["312 g", "8 mm", "33 mm", "5.5 mm", "104 mm"])


def _product_page(model: str, price: str, values: list[str]) -> str:
    """A shop's product page: the same words for every model, other numbers."""
    rows = "".join(
        f"<tr><td>{name}</td><td>{v}</td></tr>" for name, v in zip(SPECS, values, strict=True)
    )
    paragraphs = [*PARAGRAPHS[5:8], f"Model {model} costs {price} in every colour this season."]
    page = _plain_layout("Trail running shoe", paragraphs)
    return page.replace("</article>", f"<table>{rows}</table></article>")


def test_product_pages_that_differ_in_their_numbers_are_told_apart():
    small = _signature(_product_page(*SMALL))
    large = _signature(_product_page(*LARGE))
    assert small.number_count >= 3 and large.number_count >= 3
    assert not small.is_near_duplicate(large)
    # Without number features (SIMHASH_NUMBERS = False), version 2's behaviour: one page.
    words_only = Fingerprinter(numbers=False)
    texts = [extract_text(_product_page(*p)) for p in (SMALL, LARGE)]
    a, b = (page_signature(t, words_only) for t in texts)
    assert a.number_count == b.number_count == 0 and a.is_near_duplicate(b)


def _spec_page(model: str, style: str, values: list[int], views: int = 12) -> str:
    """A product page whose spec table gives its numbers bare: each row's unit in its name
    cell ("header"), or no unit at all ("bare", as many shops list counts and sizes); and a
    table of the page's counters below it."""
    units = ["g", "mm", "mm", "mm", "mm"]
    names = [f"{n} ({u})" if style == "header" else n for n, u in zip(SPECS, units, strict=True)]
    rows = "".join(
        f"<tr><th>{name}</th><td>{v}</td></tr>" for name, v in zip(names, values, strict=True)
    )
    counters = f"<table><tr><td>Views</td><td>{views}</td></tr></table>"
    paragraphs = [*PARAGRAPHS[5:8], f"The {model} comes in every colour this season."]
    page = _plain_layout("Trail running shoe", paragraphs)
    return page.replace("</article>", f"<table>{rows}</table>{counters}</article>")


@pytest.mark.parametrize("style", ["header", "bare"])
def test_products_whose_spec_tables_hold_bare_numbers_are_told_apart(style):
    """Version 16: the rows of a spec table are content lines, whatever their length, and a
    row's number counts though its unit is in the name cell or nowhere. Version 15 left the
    rows out as chrome (short cells), and two products of one description were one page."""
    small = _signature(_spec_page("TR-410", style, [245, 6, 28, 4, 98]))
    large = _signature(_spec_page("TR-410", style, [312, 8, 33, 5, 104]))
    assert small.number_count >= 5 and large.number_count >= 5
    assert not small.is_near_duplicate(large)
    # the same product, crawled again with more views: its counter is no content number
    again = _signature(_spec_page("TR-410", style, [245, 6, 28, 4, 98], views=4321))
    assert again == small
    # without number features (SIMHASH_NUMBERS = False), the rows are chrome as before
    words_only = Fingerprinter(numbers=False)
    texts = [extract_text(_spec_page("TR-410", style, v)) for v in ([245, 6, 28, 4, 98], [312] * 5)]
    a, b = (page_signature(t, words_only) for t in texts)
    assert a.fingerprint == b.fingerprint and a.is_near_duplicate(b)
    assert "Stack height" not in words_only.prose(texts[0])
    assert "Stack height" in Fingerprinter().prose(texts[0])


def _configuration_page(price: str, memory: int, storage: int, stock: int = 23) -> str:
    """A laptop's page: its description, a spec table of eleven rows and a stock line; the
    shop's other configurations of it differ in their price, memory and storage."""
    specs = [
        ("Price", price),
        ("Screen size", "14.2 inches"),
        ("Resolution", "2880 x 1800 pixels"),
        ("Processor", "8 cores at 3.2 GHz"),
        ("Memory", f"{memory} GB"),
        ("Storage", f"{storage} GB"),
        ("Battery", "72 Wh, up to 18 hours"),
        ("Weight", "1.42 kg"),
        ("Dimensions", "312 x 221 x 15.5 mm"),
        ("Ports", "3 USB-C, 1 HDMI"),
        ("Warranty", "2 years"),
    ]
    rows = "".join(f"<tr><th>{name}</th><td>{value}</td></tr>" for name, value in specs)
    paragraphs = [
        *PARAGRAPHS[5:8],
        f"This configuration comes with {memory} GB of memory and {storage} GB of storage.",
        f"In stock: {stock} left. Free delivery within two working days.",
    ]
    page = _plain_layout("Aurora 14 laptop", paragraphs)
    return page.replace("</article>", f"<h2>Specifications</h2><table>{rows}</table></article>")


def test_a_products_other_configuration_is_told_apart():
    """Version 17: a product's other configuration differs in its price and a spec or two, a
    few of its sixteen numbers. The numbers veto asks that each page hold a number that the
    other lacks, and both three (:func:`numbers_bits`), where version 16 asked their
    minhashes to differ in more than 20 of 64 bits (sets overlapping less than about a
    third), and took most such configurations for one page. (In 64 bits a number may fall on
    a bit another number of the other page sets, and some configurations still pass for one
    page: ``bench/product_variants.py`` measures how many.)"""
    base = _signature(_configuration_page("$1,299", 16, 512))
    assert base.number_count >= 15
    for price, memory, storage in (("$1,399", 16, 1024), ("$1,699", 32, 1024)):
        other = _signature(_configuration_page(price, memory, storage))
        assert DEFAULT_RULE.numbers_differ(base, other), (price, memory, storage)
        assert not base.is_near_duplicate(other) and not other.is_near_duplicate(base)
    # a changed number whose bit the other page's numbers set already: two of its own on one
    # side, one on the other, which two on each side (as version 17 first asked) missed
    other = _signature(_configuration_page("$1,399", 16, 2048))
    own = (base.numbers & ~other.numbers).bit_count(), (other.numbers & ~base.numbers).bit_count()
    assert sorted(own) == [1, 2]
    assert DEFAULT_RULE.numbers_differ(base, other) and not base.is_near_duplicate(other)
    assert not replace(DEFAULT_RULE, numbers_own=2).numbers_differ(base, other)
    # one number of its own on each page is not enough (a copy's extraction may lose one and
    # gain another): the same configuration crawled again with less in stock, or at another
    # price, is one page
    for again in (
        _configuration_page("$1,299", 16, 512, stock=4),
        _configuration_page("$1,199", 16, 512),
    ):
        assert not DEFAULT_RULE.numbers_differ(base, _signature(again))
        assert base.is_near_duplicate(_signature(again))


def test_an_index_keeps_whether_numbers_are_features(tmp_path, capsys):
    with SimhashIndex(tmp_path / "ix", numbers=False) as index:
        assert index.numbers is False
    with pytest.raises(IndexMismatchError, match="numbers=False, not True"):
        SimhashIndex(tmp_path / "ix", numbers=True)
    with SimhashIndex(tmp_path / "ix") as index:  # None: as stored
        assert index.numbers is False
    from scrapy_simhash.cli.main import main

    assert main(["info", str(tmp_path / "ix")]) == 0  # says so
    assert "numbers:             left out (SIMHASH_NUMBERS)" in capsys.readouterr().out

    with SimhashIndex(tmp_path / "new") as index:
        assert index.numbers is True


@deferred_f_from_coro_f
async def test_simhash_numbers_decides_whether_product_variants_are_kept(site, routes, tmp_path):
    from .test_scrapy_crawl import MIDDLEWARE, crawl, paths

    pages = {"/shop/tr-410.html": SMALL, "/shop/tr-520.html": LARGE}
    for path, product in pages.items():
        routes[path] = (200, "text/html; charset=utf-8", _product_page(*product).encode())
    links = "".join(f"<li><a href='{p}'>{p}</a></li>" for p in pages)
    routes["/shop/index.html"] = (
        200,
        "text/html; charset=utf-8",
        f"<html><body><ul>{links}</ul></body></html>".encode(),
    )
    start = "/shop/index.html"
    told_apart = await crawl(MIDDLEWARE, tmp_path / "numbers", site, start=start)
    assert paths(site, told_apart.kept) == list(pages)
    settings = {**MIDDLEWARE, "SIMHASH_NUMBERS": False}
    merged = await crawl(settings, tmp_path / "words", site, start=start)
    assert paths(site, merged.kept) == ["/shop/tr-410.html"]
    assert merged.simhash["simhash/duplicate"] == 1
    # The index keeps the setting it was built with: another one stops the crawl at start.
    crawler = get_crawler(
        SiteSpider,
        {**MIDDLEWARE, "SIMHASH_DIR": str(tmp_path / "words" / "simhash"), "SIMHASH_WORKERS": 0},
    )
    with pytest.raises(ValueError, match=r"numbers=False, not True.*SIMHASH_NUMBERS"):
        await crawler.crawl_async(start_url=site.url(start))


def test_the_index_applies_the_rule_and_its_frequency_guard(tmp_path):
    plain = _signature(_plain_layout("Grain terminal to become a market hall", PARAGRAPHS))
    busy = _signature(_busy_layout("Grain terminal to become a market hall", PARAGRAPHS))
    with SimhashIndex(tmp_path / "ix", drop_records=10) as ix:
        assert ix.check_and_insert(plain, "https://a.example/terminal") is None
        match = ix.check_and_insert(busy, "https://b.example/terminal")
        assert match is not None and match.key == "https://a.example/terminal"
        assert match.rule == (
            "hamming" if hamming(plain.fingerprint, busy.fingerprint) <= 3 else "sentences"
        )
        assert match.distance == hamming(plain.fingerprint, busy.fingerprint)
        drop = ix.dropped("https://b.example/terminal")
        assert (drop.kept, drop.rule) == ("https://a.example/terminal", match.rule)
        assert ix.signature("https://a.example/terminal") == plain
        # the dropped page is not stored: no signature
        assert ix.signatures(["https://b.example/terminal", "https://a.example/terminal"]) == [
            None,
            plain,
        ]
        assert ix.verify() == []

    # Sentences that many stored pages hold stop counting: boilerplate is not an article.
    shared = (1, 2, 3)
    far = [0, (1 << 64) - 1, 0x5555_5555_5555_5555, 0xAAAA_AAAA_0000_0000, 0x0F0F_0F0F_0F0F_0F0F]
    page = PageSignature(far[4], (*shared, 999), 500)
    with SimhashIndex(tmp_path / "guard") as ix:
        for i in range(DEFAULT_RULE.guard):
            own = tuple(100 * (i + 1) + j for j in range(5))
            ix.insert(PageSignature(far[i], shared + own, 500), f"p{i}")
            decided = ix.decide(page)
            # held by fewer than `guard` pages, the three sentences count
            assert (decided is not None) == (i + 1 < DEFAULT_RULE.guard)
        assert ix.decide(page) is None
        ix.remove("p1")  # held by two pages again
        assert ix.decide(page).rule == "sentences"


def test_is_near_duplicate_decides_as_an_index_holding_only_the_first(tmp_path):
    texts = [
        _plain_layout("Grain terminal", PARAGRAPHS),
        _busy_layout("Grain terminal", PARAGRAPHS),
        _plain_layout("Grain terminal", PARAGRAPHS[:3]),
        _plain_layout("Grain terminal", PARAGRAPHS[:8]),
        _busy_layout("Railway path", OTHER),
        _plain_layout("Railway path", OTHER[:5]),
    ]
    signatures = [_signature(t) for t in texts]
    for i, a in enumerate(signatures):
        with SimhashIndex(tmp_path / f"ix{i}") as ix:
            ix.insert(a, "stored")
            for j, b in enumerate(signatures):
                decided = ix.decide(b, f"page{j}")
                assert (decided is not None) == a.is_near_duplicate(b), (i, j)


def test_a_damaged_signature_is_reported_by_verify(tmp_path):
    import lmdb

    path = tmp_path / "ix"
    with SimhashIndex(path) as ix:
        ix.insert(page_signature(TEXTS["page_en"]), "https://a/")
    env = lmdb.open(str(path), max_dbs=80)
    try:
        with env.begin(write=True) as txn:
            sigs = env.open_db(b"sigs", txn=txn, create=False)
            key, value = next(iter(txn.cursor(sigs)))
            txn.put(key, bytes([value[0] ^ 1]) + value[1:], db=sigs)
    finally:
        env.close()
    with SimhashIndex(path) as ix:
        assert any("page signature fails its checksum" in p for p in ix.verify())


def test_a_damaged_count_of_repeated_sentences_is_reported_by_verify(tmp_path):
    import lmdb

    path = tmp_path / "ix"
    SimhashIndex(path).close()
    env = lmdb.open(str(path), max_dbs=80)
    try:
        with env.begin(write=True) as txn:
            repeats = env.open_db(b"repeats", txn=txn, create=False)
            txn.put(bytes(16), b"not 16 bytes", db=repeats)
    finally:
        env.close()
    with SimhashIndex(path) as ix:
        assert any(p.startswith("repeated sentence 000") for p in ix.verify())


PARTNER = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title} - Harbour Post</title></head>
<body><div class="top"><a href="/">Harbour Post</a> | <a href="/world">World</a> |
<a href="/local">Local</a> | <a href="/sport">Sport</a> | <a href="/weather">Weather</a></div>
<div class="crumbs">Home &gt; Partner content &gt; Syndicated</div>
<main><article><h1>{title}</h1><div class="article-text">
<p>Our partners at a regional newspaper report on a story that readers on the coast have been
following closely this week, with comment from the people most closely involved in it.</p>
<p>Republished by arrangement with the regional press network. Photograph: agency pool.</p>
{lead}
<figure><img src="/p.jpg"><figcaption>Readers sent us their own pictures of the scene this
week, and a selection of them appears in our gallery.</figcaption></figure>
{rest}
<p>Read more: Ferry timetable changes from Monday as the winter service begins early</p>
<p>This article first appeared in a partner newspaper and is republished here under an
agreement that lets regional titles share their local reporting with each other.</p>
</div></article>
<aside><h3>More from the Harbour Post</h3><ul>
<li><a href="/a">Lifeboat crew rescues two kayakers off the point</a></li>
<li><a href="/b">New bus route links the estate to the hospital</a></li></ul></aside>
</main>
<footer>Harbour Post. Registered in the harbour district. All rights reserved.</footer>
</body></html>"""


def partner_copies(routes) -> dict[str, tuple[str, str]]:
    """The example site's five articles, then each one's story (headline and paragraphs) in
    another site's page, with that site's standfirst, credit, note and lists around it, served
    under ``/partner/`` and listed after the articles by ``/partner-index.html``: {copy's path:
    (article's path, the rule by which the two pages' signatures make it a near duplicate)}."""
    import lxml.html

    from .test_scrapy_crawl import ARTICLES, SITE

    expected: dict[str, tuple[str, str]] = {}
    for article in ARTICLES:
        html = (SITE / article.lstrip("/")).read_text(encoding="utf-8")
        tree = lxml.html.fromstring(html)
        title = tree.findtext(".//h1")
        paragraphs = [
            lxml.html.tostring(p, encoding="unicode")
            for p in tree.find_class("story-body")[0].iter("p")
        ]
        copy = PARTNER.format(
            title=title, lead="".join(paragraphs[:2]), rest="".join(paragraphs[2:])
        )
        path = article.replace("/news/", "/partner/")
        routes[path] = (200, "text/html; charset=utf-8", copy.encode())
        original = _signature(html)
        moved = _signature(copy)
        rule = DEFAULT_RULE.decide(moved, original, 3)
        assert rule is not None, article
        expected[path] = (article, rule)
    links = "".join(f"<li><a href='{p}'>{p}</a></li>" for p in [*ARTICLES, *expected])
    routes["/partner-index.html"] = (
        200,
        "text/html; charset=utf-8",
        f"<html><body><ul>{links}</ul></body></html>".encode(),
    )
    return expected


@deferred_f_from_coro_f
async def test_a_crawl_drops_articles_copied_into_another_sites_layout(site, routes, tmp_path):
    """Every copy of :func:`partner_copies` is dropped as a near duplicate of its article, by
    the rule that the two pages' signatures give."""
    from .test_scrapy_crawl import ARTICLES, MIDDLEWARE, crawl, paths

    expected = partner_copies(routes)
    result = await crawl(MIDDLEWARE, tmp_path, site, start="/partner-index.html")
    assert paths(site, result.kept) == ARTICLES
    rules = Counter(rule for _, rule in expected.values())
    assert result.simhash["simhash/duplicate"] == len(expected)
    for rule in RULES:
        assert result.simhash.get(f"simhash/duplicate/by/{rule}", 0) == rules[rule]
    # The other site's standfirst and notes move most fingerprints past k: the sentences
    # rule is what catches those.
    assert rules["sentences"] >= 3
    with SimhashIndex(tmp_path / "simhash" / "site") as index:
        for path, (article, rule) in expected.items():
            drop = index.dropped(site.url(path))
            assert (drop.kept, drop.rule) == (site.url(article), rule)


QUOTES = [
    ("Harbour Group", "412.50", "3.2%"),
    ("Northern Rail", "87.15", "1.4%"),
    ("Quay Foods", "23.80", "0.9%"),
    ("Grain Holdings", "156.35", "2.7%"),
    ("Coastal Energy", "64.05", "5.1%"),
    ("Ferry Lines", "18.95", "0.4%"),
    ("Dock Works", "243.10", "1.8%"),
    ("Tidal Power", "9.72", "6.3%"),
    ("Salt Bank", "301.40", "2.2%"),
    ("Pier Hotels", "45.60", "4.6%"),
]


def test_a_copy_whose_layout_adds_numbers_of_its_own_is_not_vetoed_by_them():
    """The numbers veto is for pages of one kind, which carry numbers in like amounts: a copy
    of an article in a layout that shows a table of share prices beside it has several times
    the article's numbers, and those numbers say nothing of the article."""
    paragraphs = [
        *PARAGRAPHS[:4],
        "The conversion will cost 14.5 million euros, of which the port pays 6.2 million.",
        "The hall will have 120 stalls on 3,400 square metres, 35% more than the old square.",
        *PARAGRAPHS[4:],
    ]
    article = _signature(_plain_layout("Grain terminal", paragraphs))
    rows = "".join(f"<tr><td>{n}</td><td>{p}</td><td>{c}</td></tr>" for n, p, c in QUOTES)
    quoted = _plain_layout("Grain terminal", paragraphs).replace(
        "</article>", f"<h2>Markets today</h2><table>{rows}</table></article>"
    )
    copy = _signature(quoted)
    assert article.number_count >= 3 and 2 * article.number_count < copy.number_count
    # The copy holds every number of the article: the numbers it gained do not veto it, even
    # compared in any amounts (version 17: each page must hold numbers the other lacks)...
    assert article.numbers & ~copy.numbers == 0
    assert not Rule(numbers_ratio=0).numbers_differ(copy, article)
    assert not DEFAULT_RULE.numbers_differ(copy, article)
    # ... and the like amounts guard them still when it lost one (a caption left out)
    lost = replace(copy, numbers=copy.numbers & ~(article.numbers & -article.numbers))
    assert Rule(numbers_ratio=0).numbers_differ(lost, article)
    assert not DEFAULT_RULE.numbers_differ(lost, article)
    assert article.is_near_duplicate(copy) and copy.is_near_duplicate(article)


def test_the_numbers_veto_compares_pages_of_like_length():
    """Two pages of one kind (a product's variants, a league's match reports) carry about as
    many words: a page with a fifth more words than the other has text of its own around
    the article (a forum's replies, a layout's lists), whose numbers say nothing of it."""
    assert DEFAULT_RULE.numbers_length == 0.8
    page = PageSignature(1, (), 400, numbers=NUMBERS, number_count=6)
    assert DEFAULT_RULE.numbers_differ(page, PageSignature(1, (), 500, OTHER_NUMBERS, 6))
    assert DEFAULT_RULE.numbers_differ(PageSignature(1, (), 500, OTHER_NUMBERS, 6), page)
    assert not DEFAULT_RULE.numbers_differ(page, PageSignature(1, (), 501, OTHER_NUMBERS, 6))
    longer = PageSignature(1, (), 5000, OTHER_NUMBERS, 6)
    assert Rule(numbers_length=0, numbers_density=0).numbers_differ(page, longer)


def test_the_numbers_veto_asks_a_number_in_200_words():
    """A long text's few numbers (an essay's six in 1,700 words) come mostly from around it,
    a layout's lists or its readers' comments, and a sketch of so few swings with one lost or
    gained: the veto speaks for pages of one content number in 200 words or more (a product
    page, a match report), both of them."""
    assert DEFAULT_RULE.numbers_density == 0.005
    far = OTHER_NUMBERS
    essay = PageSignature(1, (), 1737, numbers=NUMBERS, number_count=6)
    copy = PageSignature(1, (), 1889, numbers=far, number_count=4)
    assert not DEFAULT_RULE.numbers_differ(essay, copy)
    assert not DEFAULT_RULE.numbers_differ(copy, essay)
    assert Rule(numbers_density=0).numbers_differ(essay, copy)
    product = PageSignature(1, (), 800, numbers=NUMBERS, number_count=4)
    assert DEFAULT_RULE.numbers_differ(product, PageSignature(1, (), 800, far, 4))
    assert not DEFAULT_RULE.numbers_differ(product, PageSignature(1, (), 801, far, 4))
    assert not DEFAULT_RULE.numbers_differ(PageSignature(1, (), 801, far, 4), product)


def test_the_numbers_veto_compares_numbers_in_like_amounts():
    fewer = PageSignature(1, (), 500, numbers=NUMBERS, number_count=5)
    more = PageSignature(1, (), 500, numbers=OTHER_NUMBERS, number_count=10)
    assert DEFAULT_RULE.numbers_ratio == 0.5
    assert DEFAULT_RULE.numbers_differ(fewer, more)  # half: still like amounts
    assert not DEFAULT_RULE.numbers_differ(fewer, PageSignature(1, (), 500, OTHER_NUMBERS, 11))
    assert not DEFAULT_RULE.numbers_differ(fewer, PageSignature(1, (), 500, OTHER_NUMBERS, 0))


def test_the_first_rows_of_an_article_that_is_mostly_a_table_are_a_shorter_page() -> None:
    """Version 15. An article that is mostly a data table, and its first 30% (its prose and
    two rows): the table's rows are chrome to the fingerprint, so the two fingerprints are
    equal, but the signature counts the table's words in the page's length, and the first
    30% is not a near duplicate of the whole. Counted as version 14 counted (without the
    table), they were one page. The whole article in another layout (other chrome lines,
    its rows run on under a layout's grid of five links) is still the same page."""
    whole = page_signature(PAGE_DATA_TABLE)
    start = page_signature("\n".join(PAGE_DATA_TABLE.split("\n")[:4]))
    assert whole is not None and start is not None
    assert whole.fingerprint == start.fingerprint
    assert whole.words > 2 * start.words
    assert not start.is_near_duplicate(whole) and not whole.is_near_duplicate(start)
    as_version_14 = replace(whole, words=start.words)
    assert start.is_near_duplicate(as_version_14)

    grid = ["| Home | News | Sport | Weather |"] * 5
    moved = "\n".join(
        [
            "Coastal Gazette | Sport | Football",
            *PAGE_DATA_TABLE.split("\n")[:2],
            *grid,
            *DATA_TABLE_ROWS,
            "Share this article",
            "Sign up for our newsletter",
        ]
    )
    moved_signature = page_signature(moved)
    assert moved_signature is not None and moved_signature.is_near_duplicate(whole)
