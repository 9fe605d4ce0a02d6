"""Pages that name no encoding and are not UTF-8: read in the encoding they are written in
(pages written for these tests, decoded by ``decode_html`` and extracted by real
trafilatura)."""

from __future__ import annotations

import codecs

import pytest

from scrapy_simhash import extract_text
from scrapy_simhash.text.charset import _WEB, SAMPLE_BYTES, detect, reads_as, sample
from scrapy_simhash.text.decode import decode_html

ENGLISH = [
    "The harbour’s new ferry terminal — delayed twice by storms — opened on Monday, and the "
    "first passengers said the café on its upper deck was “worth the wait”.",
    "Officials called the €40 million project a “naïve gamble” when it was proposed, but the "
    "terminal now handles twice the traffic of the old pier, they said.",
    "Ticket prices stay the same until spring; the operator’s spokesman said later rises would "
    "follow the cost of fuel, not the cost of the building.",
]
GERMAN = [
    "Die Stadtwerke haben am Montag die neue Fähre in Betrieb genommen; die Überfahrt dauert "
    "künftig nur noch zwölf Minuten, hieß es bei der Eröffnung.",
    "Fahrgäste lobten die großen Fenster und das Café an Bord, kritisierten aber die "
    "Fahrpreise, die für Pendler zu hoch seien.",
    "Der Bürgermeister versprach, die Preise im Frühjahr zu überprüfen, sobald die Zahlen "
    "des ersten Quartals vorliegen.",
]
POLISH = [
    "Nowy prom wypłynął w poniedziałek z portu w Gdańsku; podróż przez zatokę trwa teraz "
    "tylko dwadzieścia minut, powiedział rzecznik przewoźnika.",
    "Pasażerowie chwalili duże okna i kawiarnię na pokładzie, ale skarżyli się na ceny "
    "biletów, które dla dojeżdżających są zbyt wysokie.",
    "Prezydent miasta zapowiedział, że ceny zostaną sprawdzone wiosną, gdy będą znane wyniki "
    "pierwszego kwartału i koszty paliwa.",
]
CZECH = [
    "Nový trajekt vyplul v pondělí z přístavu; cesta přes záliv teď trvá jen dvacet minut, "
    "řekl mluvčí dopravce novinářům.",
    "Cestující chválili velká okna a kavárnu na palubě, ale stěžovali si na ceny jízdenek, "
    "které jsou pro dojíždějící příliš vysoké.",
    "Primátor města slíbil, že ceny budou přezkoumány na jaře, až budou známy výsledky "
    "prvního čtvrtletí a náklady na palivo.",
]
RUSSIAN = [
    "Новый паром вышел в понедельник из порта; переправа через залив теперь занимает всего "
    "двадцать минут, сообщил представитель перевозчика.",
    "Пассажиры хвалили большие окна и кафе на борту, но жаловались на цены билетов, которые "
    "слишком высоки для тех, кто ездит каждый день.",
    "Мэр города пообещал пересмотреть цены весной, когда станут известны итоги первого "
    "квартала и расходы на топливо.",
]
CHINESE = [
    "新的渡轮码头周一正式启用，首批乘客表示，上层甲板的咖啡馆值得等待，航程也比过去缩短了一半。",
    "官员在项目提出时曾称其为一场冒险，但码头如今的客流量已是旧码头的两倍，运营方对此十分满意。",
    "运营方发言人说，票价在明年春天之前保持不变，此后的调整将取决于燃油成本，而不是建设成本。",
]
GREEK = [
    "Το νέο πλοίο ξεκίνησε τη Δευτέρα από το λιμάνι, και οι πρώτοι επιβάτες είπαν ότι το καφέ "
    "στο πάνω κατάστρωμα άξιζε την αναμονή.",
    "Οι αρμόδιοι είχαν χαρακτηρίσει το έργο αφελές στοίχημα, αλλά ο σταθμός εξυπηρετεί τώρα "
    "διπλάσια κίνηση από την παλιά προβλήτα.",
    "Οι τιμές των εισιτηρίων μένουν ίδιες ως την άνοιξη, είπε ο εκπρόσωπος της εταιρείας.",
]
JAPANESE = [
    "新しいフェリーターミナルが月曜日に開業し、最初の乗客は上のデッキにあるカフェが待った甲斐があったと話した。",
    "計画が発表されたとき、当局はこれを無謀な賭けだと呼んだが、ターミナルは今では古い桟橋の二倍の客を運んでいる。",
    "運航会社の広報担当者によると、運賃は来年の春まで据え置かれ、その後の改定は燃料費によって決まるという。",
]


def page(paras: list[str], title: str, lang: str | None, head: str = "") -> str:
    """An article page that names no encoding (``lang`` on ``<html>`` if given), with
    ``head`` (scripts, styles) before its text."""
    opening = f'<html lang="{lang}">' if lang else "<html>"
    body = "".join(f"<p>{p}</p>" for p in paras)
    return (
        f"{opening}<head><title>{title}</title>{head}</head><body>"
        '<nav><a href="/">Home</a> <a href="/news">News</a></nav>'
        f"<article><h1>{title}</h1>{body}</article>"
        "<footer>Harbour Gazette. Contact us.</footer></body></html>"
    )


#: A head of ASCII scripts larger than the detector's old sample (the first 64 KB).
LONG_HEAD = "<script>var tracking = [" + ",".join(str(i) for i in range(14_000)) + "];</script>"

CASES = [
    ("en", ENGLISH, "Ferry terminal opens", "cp1252"),
    ("de", GERMAN, "Neue Fähre in Betrieb", "cp1252"),
    ("pl", POLISH, "Nowy prom wypłynął", "iso-8859-2"),
    ("pl", POLISH, "Nowy prom wypłynął", "cp1250"),
    ("cs", CZECH, "Nový trajekt vyplul", "cp1250"),
    ("ru", RUSSIAN, "Новый паром", "cp1251"),
    ("ru", RUSSIAN, "Новый паром", "koi8-r"),  # read as windows-1251: mostly capitals
    ("el", GREEK, "Νέο πλοίο", "iso-8859-7"),
    ("zh", CHINESE, "新的渡轮码头启用", "gb18030"),
    ("ja", JAPANESE, "新しいフェリーターミナル", "shift_jis"),
]


@pytest.mark.parametrize(("lang", "paras", "title", "encoding"), CASES)
@pytest.mark.parametrize("long_head", [False, True])
def test_a_page_of_no_label_is_read_in_its_encoding(lang, paras, title, encoding, long_head):
    """The page's text, read from its bytes in a legacy encoding without a label, is the
    text of the same page in UTF-8, with its scripts before the text or not."""
    html = page(paras, title, lang, LONG_HEAD if long_head else "")
    data = html.encode(encoding)
    assert data != html.encode("utf-8")  # not read as UTF-8: the case under test
    assert decode_html(data) == html
    assert extract_text(data) == extract_text(html.encode("utf-8"))


@pytest.mark.parametrize(
    ("paras", "title", "encoding"),
    [
        (ENGLISH, "Ferry terminal opens", "cp1252"),
        (GERMAN, "Neue Fähre in Betrieb", "cp1252"),
        (POLISH, "Nowy prom wypłynął", "iso-8859-2"),
        (POLISH, "Nowy prom wypłynął", "cp1250"),
        (CHINESE, "新的渡轮码头启用", "gb18030"),
        (JAPANESE, "新しいフェリーターミナル", "shift_jis"),
        (JAPANESE, "新しいフェリーターミナル", "euc_jp"),
        (RUSSIAN, "Новый паром", "koi8-r"),
        (GREEK, "Νέο πλοίο", "cp1253"),  # the detector's Greek, not the Cyrillic reading
    ],
)
def test_a_page_that_names_no_language_either(paras, title, encoding):
    """Without ``<html lang>``: windows-1252 when the bytes read as Latin text in it (a
    Polish page read so would put ``³`` and ``¿`` inside words), else the detector."""
    html = page(paras, title, None, LONG_HEAD)
    assert decode_html(html.encode(encoding)) == html


def test_the_sample_holds_the_non_ascii_bytes_and_is_bounded():
    data = b"<p>" + b"a" * 100_000 + "café".encode("cp1252") + b" " + b"b" * 1000
    piece = sample(data)
    assert b"caf\xe9" in piece and len(piece) <= 2 * 64 + 5  # the run and its context
    huge = "<p>" + "Fähre " * 1_000_000
    assert len(sample(huge.encode("cp1252"))) == SAMPLE_BYTES
    text = "".join(CHINESE) * 400
    cut = sample(b"<p>" + text.encode("gb18030"))  # 3 bytes of ASCII: a character cut
    assert len(cut) == SAMPLE_BYTES
    with pytest.raises(UnicodeDecodeError):
        cut.decode("gb18030")
    assert reads_as(cut, "gb18030") and not reads_as(cut, "cp1252")
    assert detect(b"<p>" + text.encode("gb18030")) == "gb18030"


def test_the_detector_answers_an_encoding_of_the_web_or_none():
    """Bytes that read as no text in windows-1252 (a run of one accented letter) are given to
    the detector, whose first guesses here are EBCDIC and DOS code pages: an encoding of the
    web is chosen, or none."""
    for data in ("é".encode("cp1252") * 10_000, bytes(range(128, 256)) * 100):
        found = detect(data)
        assert found is None or codecs.lookup(found).name in _WEB
        assert decode_html(data) is not None


@pytest.mark.parametrize(
    ("text", "label", "encoding"),
    [
        ("① 髙橋さんの記事", "shift_jis", "cp932"),  # circled digits, IBM kanji: Windows' Shift_JIS
        ("① 髙橋さんの記事", "x-sjis", "cp932"),  # labels Python does not know
        ("① 髙橋さんの記事", "windows-31j", "cp932"),
        ("Fiyatı 5 € oldu", "iso-8859-9", "cp1254"),  # the euro sign at 0x80
        ("“Quoted” — and dashed", "iso-8859-1", "cp1252"),
    ],
)
def test_a_label_is_read_as_browsers_read_it(text, label, encoding):
    """A label read in the superset browsers read it in (the Encoding Standard), where
    Python's codec of that name cannot read a few of the page's characters (which, among
    many it can read, were read as stray bytes)."""
    filler = "記事" if encoding == "cp932" else "".join(c for c in text if c.isascii())
    body = filler * 3000
    html = f"<p>{text}</p><p>{body}</p>"
    assert decode_html(html.encode(encoding), label) == html


def test_an_ascii_label_on_other_bytes_is_no_label():
    """A body labelled ASCII that holds other bytes is read as if unlabelled: as UTF-8 when
    it is, else as its bytes read (a stray-byte reading of ASCII would lose each letter)."""
    assert decode_html("<p>café “x”</p>".encode(), "us-ascii") == "<p>café “x”</p>"
    latin = page(ENGLISH, "Ferry terminal opens", "en", LONG_HEAD)
    assert decode_html(latin.encode("cp1252"), "us-ascii") == latin
