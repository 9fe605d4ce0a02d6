"""A text's long sentences (:mod:`scrapy_simhash.text.sentences`): where one ends, what it is
known by (its letters and its content numbers, not its dates), how the blocks the
fingerprint read are searched for them, and which are the longest."""

from __future__ import annotations

import random
import re

import pytest

from scrapy_simhash import Fingerprinter, page_signature
from scrapy_simhash.text import sentences as sentences_module
from scrapy_simhash.text.fingerprint import nfkc
from scrapy_simhash.text.sentences import (
    SENTENCES,
    ReadBlocks,
    longest_sentences,
    sentence_hash,
    sentence_key,
)

from .test_signature import PARAGRAPHS


def test_longest_sentences_read_letters_only_and_keep_the_longest():
    text = (
        "The first sentence is fairly long, isn't it? A short one.\n"
        "THE FIRST SENTENCE IS FAIRLY LONG, ISN'T IT!!\n"
        "A sentence of 2024 with digits, counted without them.\n"
        "Tiny.\n"
    )
    found = longest_sentences(text)
    # case, punctuation and white space do not matter: the first two lines are one sentence
    assert len(found) == 2
    assert found == (
        sentence_hash("asentenceofwithdigitscountedwithoutthem"),  # the longest first
        sentence_hash("thefirstsentenceisfairlylongisntit"),
    )
    many = "\n".join(f"Sentence number {'x' * (30 + i)} ends here." for i in range(20))
    kept = longest_sentences(many)
    assert len(kept) == SENTENCES
    assert kept[0] == sentence_hash(f"sentencenumber{'x' * 49}endshere")


def test_longest_sentences_are_the_first_of_all_sentences_by_length_then_hash():
    """The reading stops early (longest first); what it keeps is what sorting every
    sentence would give: texts of many sentences of equal length, repeated sentences, and
    sentences whose punctuation and digits make them longer than their letters."""
    rng = random.Random(11)
    pieces = ["ab", "cd ", "e,", "12 ", "f.g", "H", "ij-", "3"]
    for case in range(600):
        if case % 2:
            sentences = [
                "".join(rng.choice(pieces) for _ in range(rng.randint(6, 20)))
                for _ in range(rng.randint(0, 25))
            ]
        else:  # letters only, of few lengths: many as long as the n-th longest
            sentences = [
                "".join(rng.choice("abc") for _ in range(rng.randint(19, 23)))
                for _ in range(rng.randint(0, 25))
            ]
        sentences += rng.sample(sentences, len(sentences) // 3)  # repeated ones
        text = "\n".join(sentences)
        # each distinct (letters, content numbers) is a sentence, measured by its letters
        known = {}
        for s in sentences:
            letters = "".join(c for c in s.casefold() if c.isalpha())
            known[sentence_key(letters, s)] = len(letters)
        ranked = sorted((-size, sentence_hash(k)) for k, size in known.items() if size >= 20)
        for n in (1, 3, SENTENCES):
            assert longest_sentences(text, n) == tuple(h for _, h in ranked[:n])


def test_a_sentence_is_known_by_its_letters_and_content_numbers_not_its_dates():
    report = (
        "The home side beat the visitors 4-2 in round 8, and 25,074 fans saw "
        "the captain score twice from 12 metres on 19 November."
    )
    letters = "thehomesidebeatthevisitorsinroundandfanssawthecaptainscoretwicefrommetreson" + (
        "november"
    )
    # a score, a round, a crowd and a distance are content numbers; the date is not
    assert sentence_key(letters, report) == f"{letters}\x004 2 8 25 074 12"
    assert longest_sentences(report) == (sentence_hash(f"{letters}\x004 2 8 25 074 12"),)
    # another day, a time and a counter after it: the same sentence
    redated = report.replace("19 November", "23 November") + " Updated 10:45, 1,234 views"
    assert longest_sentences(redated) == longest_sentences(report)
    # another score: another sentence, though its letters are the same
    rescored = report.replace("4-2", "3-1")
    assert longest_sentences(rescored) != longest_sentences(report)
    # without content numbers a sentence is known by its letters alone (as in version 6)
    plain = "The home side beat the visitors in the final round of the season."
    assert longest_sentences(plain) == (
        sentence_hash("thehomesidebeatthevisitorsinthefinalroundoftheseason"),
    )
    assert sentence_key("abc", "abc in 2024, on 3 March") == "abc"
    # two sentences of the same words with other numbers are two sentences of one text
    assert len(longest_sentences(f"{report}\n{rescored}")) == 2


def test_a_sentences_numbers_are_read_where_the_fingerprint_read_them():
    """A date that a sentence end cuts in two ("on the 19. November": German dates put a full
    stop after the day) is a date in the text the fingerprint reads, and no content number
    of either sentence; read alone, the first sentence would end in the number 19."""
    first = (
        "The council will vote on the plan for the new market hall in the old terminal on the 19"
    )
    second = "November meeting the traders will hear what the authority has decided for them"
    text = f"{PARAGRAPHS[0]}\n{first}. {second}."
    signature = page_signature(text)
    assert signature is not None and signature.number_count == 0
    letters = "thecouncilwillvoteontheplanforthenewmarkethallintheoldterminalonthe"
    assert sentence_key(letters, first) == f"{letters}\x0019"  # alone: a number
    assert sentence_hash(letters) in signature.sentences  # in its text: a date
    # where the fingerprint did not read the sentence (numbers left out), its letters alone
    words_only = page_signature(text, Fingerprinter(numbers=False))
    assert words_only is not None and words_only.sentences == signature.sentences


def test_a_catalogues_sentences_are_known_as_a_search_of_the_blocks_read_knows_them(
    monkeypatch,
) -> None:
    """A catalogue of thousands of sentences of one length, each with its numbers, looks each
    one up in the blocks the fingerprint read (which took seconds a page, each search
    reading them all). Past a few searches, a sentence holding a run of characters that no
    block holds is known without the search: every key is the one the search gives, and
    most sentences are not searched for."""
    rng = random.Random(3)
    lines = [  # a German date cut by the sentence's end: a date only where the text is read
        f"Order {rng.randint(10_000, 99_999)} of the catalogue left the depot in "
        f"{rng.randint(2, 9)} boxes on the {rng.randint(1, 28)}. March the buyer was told at once."
        for _ in range(3_000)
    ]
    lines += rng.sample(lines, 300)  # said twice: found in the blocks read
    text = "\n".join(lines)
    fingerprinter = Fingerprinter(max_words=4_000)  # the blocks read end before the text does
    prose = fingerprinter.prose(text)
    read: list[tuple[str, str]] = []
    fingerprinter.prose_words(prose, nfkc(prose), read)
    assert 0 < sum(len(block) for block, _ in read) < len(text) / 2
    blocks = ReadBlocks(read)
    firsts = [line.split(". ")[0] for line in lines]  # "Order ... on the 19"
    keys = [sentence_key("letters", first, blocks) for first in firsts]
    assert keys == [sentence_key("letters", first, read) for first in firsts]
    found = sum(k.count(" ") == 1 for k in keys)  # order and boxes: the day was a date
    assert found > 300 and len(lines) - found > 2_000  # the others: order, boxes and day
    assert blocks.index is not None  # past the first searches, the index of the blocks' runs
    assert blocks.searches == sentences_module._SEARCHES_BEFORE_GRAMS
    signed = page_signature(text, fingerprinter)
    monkeypatch.setattr(sentences_module, "_SEARCHES_BEFORE_GRAMS", 10**9)
    assert page_signature(text, fingerprinter) == signed


def test_sentences_found_in_blocks_read_whole_are_found_where_a_search_finds_them() -> None:
    """A page of thousands of sentences of stop words, each with a time and a number, is
    read whole (its words do not count to the fingerprint's limit), and each sentence is
    in the blocks read: each search from their start read them up to the sentence (4 MB
    took 68 s, and the time grew with its square). Past a few searches, each is looked for
    where the rarest of its runs of characters is: found where a search from the start finds
    it (its first place, a sentence said twice included), or in no block."""
    rng = random.Random(5)
    words = ["the", "of", "and", "to", "in", "for", "on", "with", "at", "by", "from"]
    sentences = []
    for _ in range(12_000):
        rng.shuffle(words)
        time, number = f"{rng.randint(10, 23)}:{rng.randint(10, 59)}", rng.randint(1, 9)
        sentences.append(f"{' '.join(words[:6])} {time} {' '.join(words[6:])} #{number}")
    sentences += rng.sample(sentences, 1_000)
    text = PARAGRAPHS[0] + "\n" + ". ".join(sentences) + "."
    fingerprinter = Fingerprinter()
    prose = fingerprinter.prose(text)
    read: list[tuple[str, str]] = []
    fingerprinter.prose_words(prose, nfkc(prose), read)
    assert sum(len(block) for block, _ in read) > 0.9 * len(text)  # read whole
    normals = [" ".join(s.casefold().split()) for s in sentences]
    normals += [n.replace(" ", "  ", 1) for n in normals[:500]]  # in no block (white space)
    blocks = ReadBlocks(read)
    found = [blocks.first(n) for n in normals]
    # (and a few that two blocks cut)
    assert blocks.index is not None and 500 <= sum(f is None for f in found) < 520
    searched = ReadBlocks(read)  # a search of the blocks from their start (no index yet)
    for i in rng.sample(range(len(normals)), 400):
        assert found[i] == searched.first(normals[i])
        searched.searches = 0


def test_the_corpus_texts_sentences_are_known_as_a_search_knows_them(monkeypatch) -> None:
    """On the reference texts of the corpus's pages (when the corpus is there), the long
    sentences are the same whether every sentence is searched for in the blocks read or
    each is tested against their runs of characters first."""
    import gzip
    import json
    import os
    from pathlib import Path

    corpus = Path(__file__).resolve().parents[2] / "shared" / "corpus"
    references = Path(os.environ.get("SIMHASH_CORPUS", corpus)) / "gt.jsonl.gz"
    if not references.is_file():
        pytest.skip("the corpus (../shared/corpus, or $SIMHASH_CORPUS) is not here")
    with gzip.open(references, "rt", encoding="utf-8") as f:
        texts = [t for t in (json.loads(line).get("gt") for line in f) if t]
    assert len(texts) > 400
    searched = [page_signature(t) for t in texts]
    monkeypatch.setattr(sentences_module, "_SEARCHES_BEFORE_GRAMS", 0)
    assert [page_signature(t) for t in texts] == searched
    assert sum(s is not None and len(s.sentences) == SENTENCES for s in searched) > 300


def test_without_number_features_sentences_are_known_by_their_letters_alone():
    """SIMHASH_NUMBERS = False: pages that differ only in their numbers are one page, by
    either rule."""
    words_only = Fingerprinter(numbers=False)
    sentence = (
        "Model TR-410 costs 129.90 and weighs 245 g, with a drop of 6 mm and a stack of 28 mm."
    )
    other = sentence.replace("129.90", "159.90").replace("245 g", "312 g")
    assert longest_sentences(sentence) != longest_sentences(other)
    assert longest_sentences(sentence, numbers=False) == longest_sentences(other, numbers=False)
    a, b = (
        page_signature(f"{' '.join(PARAGRAPHS[:3])}\n{s}", words_only) for s in (sentence, other)
    )
    assert a is not None and b is not None and a.sentences == b.sentences


def test_a_run_of_tildes_ends_a_sentence():
    """Chinese and Japanese forums and blogs end sentences with tildes ("好看~~"); a reply is
    read as the sentences its writer made, not one (version 9). A single tilde is a range."""
    reply = "今年冬天真的特别冷我们小区的暖气到现在还没有来~~大家出门一定要多穿点衣服注意保暖啊"
    stopped = reply.replace("~~", "。")
    assert longest_sentences(reply) == longest_sentences(stopped)
    assert longest_sentences(reply.replace("~~", "～～")) == longest_sentences(stopped)
    assert longest_sentences(reply.replace("~~", "〜〜〜")) == longest_sentences(stopped)
    assert longest_sentences(reply.replace("~~", "，")) != longest_sentences(stopped)
    ranged = "每年三月到五月是这里的旅游旺季游客一般会停留3~5天左右然后再去下一个城市"
    assert len(longest_sentences(ranged)) == 1


def test_sentences_end_where_the_end_marks_class_ends_them() -> None:
    """The split's alternatives are written one end mark each (so that ``re`` skips to where
    one can begin): the same pieces as the class of end marks and a full stop before white
    space, on random texts of words, marks, full stops, digits and white space."""

    as_class = re.compile(r"[\n。！？!?；;…]|\.\s+")
    pieces = ["word", "字", " ", "  ", "\n", "\t", ".", "..", "3.5", "。", "！", "？", "!", "?"]
    pieces += ["；", ";", "…", "\u3000", "e.g.", "a", "~", "\r"]
    rng = random.Random(9)
    for _ in range(3000):
        text = "".join(rng.choices(pieces, k=rng.randint(0, 30)))
        assert sentences_module._SENTENCE_END.split(text) == as_class.split(text), repr(text)
