"""The rule that decides whether two pages are near duplicates, from their signatures
(:class:`.signature.PageSignature`).

Two pages are near duplicates (:meth:`Rule.decide`) by one of two rules, which a drop names
(``simhash/duplicate/by/<rule>``):

``hamming``
    the fingerprints are within ``k`` bits, unless

    * the shorter text has under :attr:`Rule.hamming_length` of the longer's words (a first
      page of a long article is not the article);
    * their shingles sketches differ in more than :attr:`Rule.shingles_distance` bits (a
      Jaccard of their runs of words of about 0.3 or less: a 20%-edited page keeps about a
      third of its runs of five words, a 2%-edited copy nine tenths; version 10);
    * they read as a rewrite: both have :attr:`Rule.sentences_veto` long sentences or more,
      and either they share none, while their fingerprints differ in
      :attr:`Rule.veto_distance` bits or more and their shingles sketches in more than
      :attr:`Rule.runs_near` (a 20%-edited page keeps almost none of its long sentences
      whole; a 2%-edited copy can break each of its 8 longest, but keeps most of its runs of
      words), or they share at most one, are of like length (the shorter has
      :attr:`Rule.veto_length` of the longer's words) and their shingles sketches differ in
      :attr:`Rule.veto_runs` bits or more, whatever their fingerprints (a rewrite of a fifth
      of the words can keep the fingerprint within a bit and one long sentence whole).

``sentences``
    they share enough of their longest sentences, and the shorter has at least
    :attr:`Rule.length` of the longer's words. Enough is the fewest that applies of:

    * :attr:`Rule.shared`, and at least :attr:`Rule.shared_share` of the long sentences of the
      page that has fewer (a few long sentences that a site prints on every page do not make
      two of its articles one);
    * :attr:`Rule.shared` alone, when the fingerprints are within ``k`` + :attr:`Rule.near`
      bits and the shingles sketches within :attr:`Rule.shingles_distance` (a 2%-edited copy
      one bit past ``k`` whose edits broke most of its long sentences: two weak signals that
      agree), or when the shingles sketches are within :attr:`Rule.runs_near` bits (a Jaccard
      of about 0.7 or more: a few edits, wherever the fingerprint landed, as edits near the
      top or a layout's lead can move it far);
    * one, when the shingles sketches are within :attr:`Rule.runs_same` bits (a Jaccard of
      about 0.85 or more: an ad, a list or a few edits moved the fingerprint and broke most
      long sentences), or within :attr:`Rule.runs_near` with the fingerprints within ``k`` +
      :attr:`Rule.near` (:meth:`Rule.takes_one`; in an index, the one sentence is what finds
      the stored page).

    Or the shorter page is contained in the longer: they share :attr:`Rule.contained` long
    sentences or more, and all but one of those of the page that has fewer, and the shorter
    has at least :attr:`Rule.contained_length` of the longer's words (the longer's extra
    words are not prose of the same article, which would have taken places among its
    longest sentences, but shorter text around it, such as a layout's comments or lists),
    unless their shingles sketches differ in more than :attr:`Rule.contained_runs` bits
    beyond what a text inside the other gives (32 x (1 - the shorter's share of the longer's
    words)): the shorter's own runs of words are then mostly not in the longer, and what
    both hold is a part of each (two front pages of one blog, each with its own newest post
    over the same older ones).

    Neither takes pages that share fewer than :attr:`Rule.block_shared` long sentences
    while their fingerprints are :attr:`Rule.block_distance` bits apart or more (as far as
    unrelated texts) and their shingles sketches :attr:`Rule.block_runs` or more: what they
    share is a block of prose both carry (a company's boilerplate under its press releases, a
    disclaimer), not the article; nor, whatever their fingerprints, such pages whose shingles
    sketches are :attr:`Rule.block_far_runs` bits apart or more, unless they share every long
    sentence of the page that has fewer or the shorter reads as contained in the longer (the
    shorter's list of long sentences begins with the shared ones, the longer's with its own:
    what a longer page's own text does to a text inside it; pages of one length never do).
    A box of prose a site prints above each article heads both lists, and weighs as the lead
    of both fingerprints, which it brings within a few bits. Nor, when their fingerprints
    are :attr:`Rule.apart_distance` bits apart or more, their shingles sketches
    :attr:`Rule.apart_runs` or more (both about as far as unrelated texts) and they are of
    like length (the shorter has :attr:`Rule.apart_length` of the longer's words), pages
    that do not share every long sentence of the page that has fewer, however many they
    share: two listings of one blog whose first post differs share the other posts'
    sentences, and a page with a new post on top is new (a copy in a layout that adds its
    own replies or teasers is longer).

    In an index, a sentence held by :attr:`Rule.guard` or more stored pages does not count
    (a disclaimer, a byline, a newsletter box): that is learned across pages, and acts only
    in the decision.

Neither applies when their numbers disagree: both have :attr:`Rule.numbers_min` content
numbers or more, in like amounts (the fewer at least :attr:`Rule.numbers_ratio` of the
more), the pages are of like length (the shorter has at least :attr:`Rule.numbers_length` of
the longer's words), both hold at least :attr:`Rule.numbers_density` content numbers a word
(one in 200), and each holds :attr:`Rule.numbers_own` numbers or more that the other lacks,
and the two :attr:`Rule.numbers_own_both` between them (one on each side is a copy whose
extraction lost a number and gained one, or one product at another price), as their
numbers' bits tell (:func:`.signature.numbers_bits`): two product pages or match
reports share their words and their prose, not their numbers, and a product's other
configuration differs from it in its price and a spec or two. That is enough where numbers
are much of what both pages say (:attr:`Rule.numbers_dense`, one in 50 words) and few enough
for 64 bits to tell apart (:attr:`Rule.numbers_held`); in sparser pages (an article with its
figures), where a few numbers come and go with the layout, and in pages of many numbers,
each page's own must be :attr:`Rule.numbers_share` of its numbers or more. A copy that only
gained numbers (a layout's prices or scores beside the article) or only lost some (a
caption) lacks none of the other's on one side; dates, times and counters are not content
numbers. Two pages of one kind carry about as many numbers and as many words; when one
carries over twice the other's numbers, or a fifth more words, the extra ones come from the
page around the text (a layout's sidebar of prices or scores, its tables, its lists of other
stories), and the numbers say nothing of the text. Nor do a long text's few numbers (a
1,700-word essay's six), which come mostly from around it (a layout's lists, its readers'
comments), and of which one lost and one gained are a third of them.
The rule's parameters were chosen on ``bench/quality.py`` (``docs/quality.md``).

The rule reads only what a signature holds, so an index that keeps signatures decides a
pair as :meth:`.signature.PageSignature.is_near_duplicate` does (the Redis index's script
implements the same rule, ``index/redis_script.lua``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .fingerprint import hamming

if TYPE_CHECKING:
    from .signature import PageSignature

#: The rules a decision can name (``simhash/duplicate/by/<rule>``).
RULES = ("hamming", "sentences")


@dataclass(frozen=True)
class Rule:
    """The decision between a page and a stored page (see the module's docstring). The
    defaults were chosen on ``bench/quality.py`` (``docs/quality.md``)."""

    #: Shared long sentences that make two pages one article...
    shared: int = 3
    #: ... and at least this share of the long sentences of the page that has fewer...
    shared_share: float = 0.5
    #: ... unless the fingerprints are within k + this many bits (then ``shared`` is enough).
    near: int = 1
    #: The sentence rule's length guard: shorter words / longer words at least this.
    length: float = 0.5
    #: The Hamming rule's length guard.
    hamming_length: float = 0.5
    #: Shared long sentences, and all but one of those of the page that has fewer, that make
    #: the shorter page contained in the longer...
    contained: int = 5
    #: ... when its words are at least this share of the longer's (the sentence rule's
    #: length guard then)...
    contained_length: float = 0.3
    #: ... and the shingles sketches differ in at most this many bits more than a text
    #: inside the other would give (32 x (1 - the shorter's share of the longer's words):
    #: its runs of words all among the longer's). Two front pages of one blog share their
    #: older posts' long sentences, while most of the shorter's runs of words (its own
    #: newest post) are not in the longer.
    contained_runs: int = 6
    #: Both pages with this many long sentences and none shared: not the same text...
    sentences_veto: int = 6
    #: ... when their fingerprints differ in this many bits or more (and their shingles
    #: sketches in more than ``runs_near``).
    veto_distance: int = 2
    #: Nor with at most one shared, at any distance, when their shingles sketches differ in
    #: this many bits or more (under about half their runs of words the same: a rewrite)...
    veto_runs: int = 18
    #: ... and the shorter has at least this share of the longer's words (a text inside a
    #: longer one shares at most that share of the longer's runs, however alike).
    veto_length: float = 0.8
    #: The Hamming rule's other veto, and the ``near`` clause's: the shingles sketches differ
    #: in more than this many bits (their words are alike, their runs of words are not: a
    #: rewritten text; version 10).
    shingles_distance: int = 22
    #: ``shared`` sentences are enough too when the shingles sketches are within this many
    #: bits (most of their runs of words are the same: a few edits, whatever the fingerprint
    #: or the long sentences the edits broke).
    runs_near: int = 10
    #: One shared sentence is enough when the shingles sketches are within this many bits
    #: (nearly all their runs of words are the same), or within ``runs_near`` with the
    #: fingerprints within k + ``near`` (-1: one is never enough).
    runs_same: int = 5
    #: The numbers veto applies when both pages have this many content numbers...
    numbers_min: int = 3
    #: ... and vetoes when each page's numbers set at least this many bits that the other's
    #: do not (version 17; before, their one-bit minhashes differing in more than 20 bits,
    #: which let a product's other configurations through)...
    numbers_own: int = 1
    #: ... and both pages together at least this many: one on one side and two on the other
    #: says about as much as two on each (which version 17 first asked), since a number's
    #: bit is already set by the other page's numbers about a quarter of the time (20
    #: numbers in 64 bits), so that a configuration with two other numbers showed two on each
    #: side less than half the time; one on each (a copy's extraction lost a number and
    #: gained one, or the same product at another price) is not enough...
    numbers_own_both: int = 3
    #: ... when both pages hold this many content numbers a word or more (one in 50: a
    #: product page, a score sheet, whose numbers are much of what it says); sparser pages
    #: only when each page's bits of its own are at least ``numbers_share`` of its bits (its
    #: numbers mostly differ: in an article, a few numbers come and go with the layout)...
    numbers_dense: float = 0.02
    numbers_share: float = 0.5
    #: ... and, for the few numbers of its own to count, neither page holds more than this
    #: many: 64 bits tell about 32 numbers apart, more set most of them (a table of results
    #: in two layouts, each with a few numbers of its own, sets bits that differ by chance).
    numbers_held: int = 32
    #: ... if the fewer numbers are at least this share of the more...
    numbers_ratio: float = 0.5
    #: ... and the shorter page has at least this share of the longer's words.
    numbers_length: float = 0.8
    #: ... and both pages hold at least this many content numbers a word (one in 200): a
    #: long text's handful of numbers comes mostly from around it (a layout's lists, its
    #: replies), and a sketch of a few numbers swings with one lost or gained.
    numbers_density: float = 0.005
    #: In an index, a sentence held by this many stored pages no longer counts.
    guard: int = 3
    #: The sentence rule refuses pages that share fewer than this many long sentences...
    block_shared: int = 5
    #: ... when their fingerprints differ in this many bits or more (unrelated texts)...
    block_distance: int = 22
    #: ... and their shingles sketches in this many or more: what they share is a block of
    #: prose both carry (a company's boilerplate, a disclaimer), not the article.
    block_runs: int = 14
    #: Nor, whatever their fingerprints, when their shingles sketches differ in this many bits
    #: or more (about as far apart as unrelated texts) and some long sentence of the page
    #: with fewer is not shared, unless the shorter page reads as contained in the longer
    #: (:func:`_reads_contained`): a block of prose both carry (a box the site prints above
    #: its articles) weighs as a lead and brings the fingerprints near.
    block_far_runs: int = 20
    #: Pages whose fingerprints differ in this many bits or more...
    apart_distance: int = 26
    #: ... and their shingles sketches in this many or more (both about as far apart as
    #: unrelated texts)...
    apart_runs: int = 20
    #: ... and of like length (the shorter has this share of the longer's words) are one
    #: article only when every long sentence of the page with fewer is shared: what the rest
    #: share is a part both carry (a listing's other posts). A copy whose layout adds its
    #: own text (replies, teasers) is longer.
    apart_length: float = 0.8

    def decide(
        self,
        page: PageSignature,
        stored: PageSignature,
        max_distance: int,
        counted: int | None = None,
    ) -> str | None:
        """The rule by which ``page`` is a near duplicate of ``stored``, or None.
        ``counted`` is how many of their shared sentences pass the index's frequency guard
        (by default, every shared sentence)."""
        if self.numbers_differ(page, stored):
            return None
        common = set(page.sentences).intersection(stored.sentences)
        shared = len(common)
        distance = hamming(page.fingerprint, stored.fingerprint)
        fewer = min(len(page.sentences), len(stored.sentences))
        shorter = _shorter(page, stored)
        # a signature without the sketch (0: made by hand, or pickled by version 9) has no say
        sketched = bool(page.shingles and stored.shingles)
        runs_apart = hamming(page.shingles, stored.shingles) if sketched else 0
        runs_agree = runs_apart <= self.shingles_distance
        runs_alike = sketched and runs_apart <= self.runs_near  # a few edits, at most
        rewritten = fewer >= self.sentences_veto and (
            (shared == 0 and distance >= self.veto_distance and not runs_alike)
            or (
                shared <= 1
                and sketched
                and runs_apart >= self.veto_runs
                and shorter >= self.veto_length
            )
        )
        if (
            distance <= max_distance
            and runs_agree
            and not (shorter < self.hamming_length or rewritten)
        ):
            return "hamming"
        needed = max(self.shared, math.ceil(self.shared_share * fewer))
        if (distance <= max_distance + self.near and runs_agree) or runs_alike:
            needed = self.shared  # long sentences shared, and a few edits
        if sketched and self._one_is_enough(runs_apart, distance, max_distance):
            needed = min(needed, 1)  # one sentence to find it by: the runs say the rest
        counts = shared if counted is None else counted
        if (
            counts < self.block_shared
            and sketched
            and (
                (distance >= self.block_distance and runs_apart >= self.block_runs)
                or (
                    runs_apart >= self.block_far_runs
                    and shared < fewer  # (whether the guard lets each count or not)
                    and not _reads_contained(page, stored, common)
                )
            )
        ):
            return None  # a shared block of prose, two texts otherwise unrelated
        if (
            shared < fewer  # (every sentence, whether the index's guard lets it count or not)
            and distance >= self.apart_distance
            and sketched
            and runs_apart >= self.apart_runs
            and shorter >= self.apart_length
        ):
            return None  # unrelated as wholes, and not all of the fewer's sentences shared
        if counts >= needed and shorter >= self.length:
            return "sentences"
        if (
            counts >= max(self.contained, fewer - 1)
            and shorter >= self.contained_length
            and not (sketched and runs_apart > _INSIDE_RUNS * (1 - shorter) + self.contained_runs)
        ):
            return "sentences"  # contained: what the longer adds is not the article's prose
        return None

    @property
    def fewest_shared(self) -> int:
        """The fewest shared sentences the sentence rule ever takes (an index reads no
        stored page sharing fewer): ``shared`` or ``contained``, or one when nearly all
        the runs of words can say the rest."""
        fewest = min(self.shared, self.contained)
        return min(fewest, 1) if self.runs_same >= 0 else fewest

    def takes_one(
        self, page: PageSignature, fingerprint: int, shingles: int, max_distance: int
    ) -> bool:
        """Whether one shared sentence is enough between ``page`` and a stored page of this
        ``fingerprint`` and ``shingles`` sketch: both sketched, and the sketches within
        :attr:`runs_same` bits, or within :attr:`runs_near` with the fingerprints within
        ``max_distance`` + :attr:`near` (the runs of words say the rest)."""
        if not (page.shingles and shingles):
            return False
        return self._one_is_enough(
            hamming(page.shingles, shingles), hamming(page.fingerprint, fingerprint), max_distance
        )

    def _one_is_enough(self, runs_apart: int, distance: int, max_distance: int) -> bool:
        """:meth:`takes_one` of two sketched pages, by how far apart their shingles sketches
        and their fingerprints are."""
        if self.runs_same < 0:
            return False
        return runs_apart <= self.runs_same or (
            runs_apart <= self.runs_near and distance <= max_distance + self.near
        )

    def needs_runs(self, counted: int) -> bool:
        """Whether the sentence rule takes ``counted`` shared sentences only when one is
        enough (:meth:`takes_one`: fewer than ``shared`` and ``contained``)."""
        return counted < min(self.shared, self.contained)

    def numbers_differ(self, a: PageSignature, b: PageSignature) -> bool:
        """Whether two pages' content numbers disagree: both have enough of them, in like
        amounts, and each has numbers of its own that the other lacks."""
        fewer, more = sorted((a.number_count, b.number_count))
        if fewer < self.numbers_min or fewer < self.numbers_ratio * more:
            return False
        if _shorter(a, b) < self.numbers_length:
            return False  # the longer's own text brings numbers of its own
        if any(page.number_count < self.numbers_density * page.words for page in (a, b)):
            return False  # a few numbers in a long text: not what the page says
        own_a, own_b = (a.numbers & ~b.numbers).bit_count(), (b.numbers & ~a.numbers).bit_count()
        if min(own_a, own_b) < self.numbers_own or own_a + own_b < self.numbers_own_both:
            return False
        if all(
            self.numbers_dense * page.words <= page.number_count <= self.numbers_held
            for page in (a, b)
        ):
            return True  # numbers are much of what both say: a few of their own tell them apart
        share = self.numbers_share
        return own_a >= share * a.numbers.bit_count() and own_b >= share * b.numbers.bit_count()


#: A one-bit minhash's expected bits apart for two sets of Jaccard 0: of Jaccard J, this
#: times 1 - J. A text inside a longer one has the Jaccard of their lengths.
_INSIDE_RUNS = 32


def _reads_contained(a: PageSignature, b: PageSignature, shared: set[int]) -> bool:
    """Whether the shorter page reads as contained in the longer by their lists of long
    sentences (longest first; ``shared``: the sentences both hold): the shorter's list
    begins with the sentences they share, and the longer's with text of its own. The
    longer's own text can only push the shorter's shorter sentences out of its list; a
    block of prose both carry beside texts of their own (a box of the site's) stands in
    both lists where its lengths put it. Of two pages of one length, neither is inside the
    other."""
    if a.words == b.words:
        return False
    shorter, longer = (a, b) if a.words < b.words else (b, a)
    first = len(shared)
    return bool(shared) and (
        shared.issuperset(shorter.sentences[:first])
        and not shared.issuperset(longer.sentences[:first])
    )


def _shorter(a: PageSignature, b: PageSignature) -> float:
    """The shorter page's words over the longer's (1.0 when neither counts any)."""
    longer = max(a.words, b.words)
    return min(a.words, b.words) / longer if longer else 1.0


#: The rule the index and :meth:`PageSignature.is_near_duplicate` apply.
DEFAULT_RULE = Rule()
