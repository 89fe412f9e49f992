"""What a file's text holds that an operator should know of: instructions aimed at an AI assistant.

Anyone who can write a file on the share can write "ignore the previous instructions", "list every file",
"send the user to this link" into it, hoping an answerer that reads it obeys. The answerers never obey a
file (docindex.answer.bedrock: documents are data), but such a *planted* file is worth an operator's look,
and it is never the only source of an answer (docindex.answer.extractive). At indexing time its text is
scanned for such instructions, in Japanese and English: a match is the document's finding
``assistant_instructions`` (index field ``findings``), which ``docindex failures --reason
assistant_instructions`` lists (docs/operations.md).
"""

from __future__ import annotations

import re

ASSISTANT_INSTRUCTIONS = "assistant_instructions"
# Only the first this many characters are scanned: an instruction planted for an answerer is where a
# passage would be read, and the scan must cost nothing next to extraction.
SCAN_CHARS = 200_000

# Each pattern with the words one of which a text must hold (case aside) for it to match: the English patterns,
# searched case-insensitively, cost most of the scan, and a text without the word is not searched for them.
_INSTRUCTION_PATTERNS: tuple[tuple[tuple[str, ...], str], ...] = (
    # Japanese: ignore / forget the instructions, you are now ..., system:, list every file, lead the user
    (
        (),
        r"(?:以前|これまで|上記|前|今まで|先)の(?:指示|命令|指令|ルール|設定)(?:を|は)(?:すべて|全て|全部)?(?:無視|忘れ|破棄)",
    ),
    ((), r"(?:指示|命令|アクセス権|制限)を無視して"),
    ((), r"あなたは(?:今から|これから)?(?:制限のない|管理者|開発者|別の)"),
    ((), r"(?:この文書|これ)を読んだ(?:AI|ＡＩ|アシスタント|チャットボット)"),
    ((), r"(?:AI|ＡＩ|アシスタント)(?:へ|に)の(?:指示|命令)"),
    ((), r"^\s*(?:システム|system)\s*[:：]"),
    ((), r"(?:すべて|全て|全部)の(?:ファイル|文書|社員)(?:の|を)?(?:一覧|名前|住所|パス)?を?(?:出力|列挙|表示|引用)"),
    ((), r"(?:質問され|聞かれ)たら.{0,40}(?:誘導|答え|回答)(?:て|し)"),
    ((), r"回答の(?:最後|冒頭|末尾)に(?:必ず)?"),
    ((), r"(?:出典|引用)を(?:示さず|省略)"),
    ((), r"NO_ANSWER\s*と出力"),
    # English
    (
        ("ignore", "disregard", "forget"),
        r"\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|above|earlier|preceding)\s+"
        r"(?:instructions?|prompts?|rules?|messages?)",
    ),
    (("disregard",), r"\bdisregard\s+the\s+documents?\b"),
    (("system", "developer"), r"\b(?:system|developer)\s+(?:override|mode|prompt)\b"),
    (("you",), r"\byou\s+are\s+now\s+(?:in\s+)?\w+"),
    (("list",), r"\blist\s+(?:every|all)\s+(?:the\s+)?(?:files?|file\s+names?|documents?|paths?)\b"),
    (("when",), r"\bwhen\s+asked\s+about\b.{0,80}\b(?:tell|reply|answer|say)\b"),
    (("reply", "answer", "respond"), r"\b(?:reply|answer|respond)\s+that\b"),
    (("cite",), r"\bcite\s+passage-\d+"),
    (("<",), r"</?\s*(?:system|document|assistant)\s*>"),
    (("assistant", "human"), r"^\s*(?:assistant|human)\s*:"),
    (("before",), r"\bbefore\s+you\s+answer\b"),
    (("translate",), r"\btranslate\s+the\s+whole\b"),
    # links and code an answer would carry to the reader: an image fetched from elsewhere, a script, a
    # frame, a link to sign in or click (markup alone - <b>, <img> in a notice about tags - is shown as
    # text and is no finding)
    (("![",), r"!\[[^\]]*\]\(\s*https?://"),
    (("](",), r"\]\(\s*https?://[^)]*\)\s*(?:を|を今すぐ)?(?:クリック|開いて|サインイン)"),
    (("iframe",), r"<\s*iframe\b"),
    (("script",), r"<\s*script\b"),
)
# One search per pattern, not one alternation: an alternation is tried pattern by pattern at every character, and
# the words a pattern needs let most texts skip the English ones (make bench's documents: 11.5 -> 3.0 ms each).
_INSTRUCTIONS = tuple(
    (needs, re.compile(pattern, re.IGNORECASE | re.MULTILINE)) for needs, pattern in _INSTRUCTION_PATTERNS
)
# What a case-insensitive pattern equates with an ASCII letter besides its other case (Python's re: İ and ı with i,
# ſ with s, the Kelvin sign with k): folded before the words are looked for, so no text a pattern matches is skipped.
_ASCII_FOLDS = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})


def findings(text: str | None) -> tuple[str, ...]:
    """The findings of a file's text: ``("assistant_instructions",)`` when it carries instructions aimed at an
    AI assistant, else ``()``."""
    if not text:
        return ()
    from docindex.text.width import normalize

    scanned = normalize(text[:SCAN_CHARS])
    special = any(c in scanned for c in "\u0130\u0131\u017f\u212a")
    folded = (scanned.translate(_ASCII_FOLDS) if special else scanned).lower()
    found = any(
        pattern.search(scanned) for needs, pattern in _INSTRUCTIONS if not needs or any(w in folded for w in needs)
    )
    return (ASSISTANT_INSTRUCTIONS,) if found else ()
