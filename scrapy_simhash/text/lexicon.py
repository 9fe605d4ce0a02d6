"""Stop words and inverse document frequencies for feature weights.

Chinese words take their IDF from the table jieba ships (``jieba/analyse/idf.txt``); words
it does not list get its median. Other words get a weight from their length (short words
are frequent words), which needs no table.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from functools import lru_cache

_STOP = """
a about above after again against all also am an and any are as at be because been before
being below between both but by can could did do does doing down during each few for from
further had has have having he her here hers herself him himself his how i if in into is it
its itself just me more most my myself no nor not now of off on once only or other our ours
ourselves out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up very was we were
what when where which while who whom why will with would you your yours yourself yourselves
s t don't it's i'm he's she's that's there's we're they're i've we've you're can't won't
isn't aren't wasn't weren't didn't doesn't said says say one two also may might must shall
der die das und ist nicht ein eine einer eines dem den des zu mit sich auf für von im auch
es an als wie aber noch nach bei aus wird werden hat haben sie er wir ich oder um so dass
le la les un une des du de et est en au aux pour pas par sur dans que qui ne se ce il elle
ils nous vous avec plus son sa ses leur mais ou où été être
el los las lo y es del al por con para una uno como más pero sus su fue ha han se que
o os as um uma do da dos das no na nos nas em com por para não mais foi é ao
il lo gli di che non per una della delle degli nel nella con si sono è anche
的 了 是 在 和 也 就 都 而 及 与 着 或 一个 没有 我们 你们 他们 她们 它们 这个 那个 这些 那些
之 其 又 但 被 把 让 向 从 对 为 以 等 将 于 并 很 还 个 这 那 我 你 他 她 它 中 上 下 不 有 会
要 说 去 来 到 得 地 吗 呢 吧 啊 呀 么 则 即 如 若 因 所 此 已 该 各 每 些 给 由 后 前 时
"""
STOP_WORDS: frozenset[str] = frozenset(_STOP.split())


def is_stop_word(word: str) -> bool:
    return word in STOP_WORDS or (len(word) == 1 and not "\u3040" <= word <= "\U0002ffff")


@lru_cache(maxsize=1)
def _chinese_idf() -> tuple[dict[str, float], float]:
    import jieba

    path = os.path.join(os.path.dirname(jieba.__file__), "analyse", "idf.txt")
    table: dict[str, float] = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            word, _, value = line.strip().partition(" ")
            if value:
                table[word] = float(value)
    values = sorted(table.values())
    return table, values[len(values) // 2]


def idf_weights(words: Iterable[str]) -> list[float]:
    """:func:`idf_weight` of each word, in one loop (a page's few hundred distinct words;
    Chinese ones read from the table without a call each): a word whose first character is
    kana, CJK or in the supplementary ideograph planes weighs its IDF in jieba's table (the
    table's median when it is not there); any other word ``1 + ln(len(word))``."""
    log = math.log
    table: dict[str, float] | None = None
    median = 0.0
    weights: list[float] = []
    for word in words:
        first = word[0]
        if "\u3040" <= first <= "\u9fff" or "\U00020000" <= first <= "\U0002ffff":
            if table is None:
                table, median = _chinese_idf()
            weights.append(table.get(word, median))
        else:
            weights.append(1.0 + log(len(word)))
    return weights


def idf_weight(word: str) -> float:
    """A positive weight for ``word``: high for rare words, low for frequent ones (Chinese
    words from jieba's table, others by their length: :func:`idf_weights`)."""
    return idf_weights((word,))[0]
