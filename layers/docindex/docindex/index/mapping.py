"""The OpenSearch index's settings and mapping, and its creation behind an alias.

``content``, ``title`` and ``filename`` use kuromoji (Japanese morphological
analysis) after a width and form normalization generated from the Unicode
tables (half-width katakana, full-width letters, compatibility characters), so
text matches however it was typed. A cluster without the kuromoji plugin gets
CJK bigrams instead (logged). ``content.bigram`` and ``title.bigram`` find
words kuromoji splits badly; ``filename.ngram`` finds files by fragments of
their names; ``names`` holds the folder and file names for name search
(``docindex.index.names``). The company's vocabulary (user dictionary, synonyms) comes from
``docindex.index.vocabulary``. ``variants`` holds the document's text with its spelling
variants folded by docindex itself (``docindex.text.variants``); its analyzer is the standard
tokenizer and CJK bigrams of OpenSearch core, so it indexes the same tokens on every engine.
"""

from __future__ import annotations

import copy
import re
from typing import TYPE_CHECKING, Any

from docindex.core.observability import logger
from docindex.index import names
from docindex.text.width import width_table

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

    from docindex.embed import VectorSpec
    from docindex.index.vocabulary import Vocabulary

# The company's vocabulary and the spelling-variant tables load when an index body is built (index
# creation, reindex, validation), not when the indexer starts: most records never build one.

INDEX_VERSION = 1


def _rule_text(text: str) -> str:
    # Letters and digits as they are (readable settings); everything else escaped, because the
    # rule syntax trims whitespace and gives '=', '>', '\\' and quotes a meaning.
    return "".join(ch if ch.isalnum() else f"\\u{ord(ch):04x}" for ch in text)


def width_mappings() -> list[str]:
    """The ``mapping`` char filter's rules: Unicode NFKC for the blocks above, generated from
    the Unicode tables, so every tier normalizes width and form *before* tokenizing."""
    return [f"{_rule_text(source)} => {_rule_text(target)}" for source, target in width_table()]


_TEXT_FILTERS = ["kuromoji_baseform", "docindex_ja_pos", "cjk_width", "ja_stop", "kuromoji_stemmer", "lowercase"]
_BIGRAM: dict[str, Any] = {
    "type": "custom",
    "tokenizer": "standard",
    "filter": ["cjk_width", "lowercase", "cjk_bigram"],
}
_NGRAM: dict[str, Any] = {"type": "custom", "tokenizer": "docindex_ngram", "filter": ["cjk_width", "lowercase"]}
# The standard tokenizer and CJK bigrams of OpenSearch core, with nothing else: the text that
# docindex.text.variants writes holds only ASCII letters and digits, kana and kanji between
# spaces, so its tokens are docindex.text.variants.tokens() of it on any engine. (osmem-server
# answers phrase and AND queries on an ngram-tokenizer field as if any gram were enough.)
VARIANTS_ANALYZER: dict[str, Any] = {"type": "custom", "tokenizer": "standard", "filter": ["cjk_bigram"]}


def _analysis(tier: str, vocabulary: Vocabulary) -> dict[str, Any]:
    """The ``analysis`` settings of a tier: index analyzers, and the search analyzer with synonyms."""
    analysis: dict[str, Any] = {
        "char_filter": {"docindex_width": {"type": "mapping", "mappings": width_mappings()}},
        "tokenizer": {"docindex_ngram": {"type": "ngram", "min_gram": 2, "max_gram": 3}},
        "filter": {},
        "analyzer": {"docindex_bigram": copy.deepcopy(_BIGRAM), "docindex_ngram": copy.deepcopy(_NGRAM)},
    }
    text: dict[str, Any]
    search: dict[str, Any]
    if tier == "cjk":
        text = copy.deepcopy(_BIGRAM)
        search = copy.deepcopy(_BIGRAM)
    else:
        analysis["filter"]["docindex_ja_pos"] = {"type": "kuromoji_part_of_speech"}
        options = vocabulary.tokenizer_options()
        analysis["tokenizer"]["docindex_ja"] = {"type": "kuromoji_tokenizer", "mode": "search", **options}
        # The query side keeps only the parts of a compound: synonym_graph cannot read the
        # token graph search mode makes of it, and the parts match the index all the same.
        analysis["tokenizer"]["docindex_ja_query"] = {
            "type": "kuromoji_tokenizer",
            "mode": "search",
            "discard_compound_token": True,  # nosec B105 - an analyzer option, not a password
            **options,
        }
        text = {"type": "custom", "tokenizer": "docindex_ja", "filter": list(_TEXT_FILTERS)}
        search = {"type": "custom", "tokenizer": "docindex_ja_query", "filter": list(_TEXT_FILTERS)}
    synonyms = vocabulary.synonym_filter()
    if synonyms is not None:
        analysis["filter"]["docindex_synonyms"] = synonyms
        search["filter"].append("docindex_synonyms")
    analysis["analyzer"]["docindex_text"] = text
    analysis["analyzer"]["docindex_search"] = search
    char_filters = ["docindex_width"] + (["icu_normalizer"] if tier == "icu+kuromoji" else [])
    for analyzer in analysis["analyzer"].values():
        analyzer["char_filter"] = list(char_filters)
    # The folded text docindex writes into `variants` needs nothing of the engine but bigrams of
    # its words: no char filter, no plugin, so every engine and every tier makes the same tokens.
    analysis["analyzer"]["docindex_variants"] = copy.deepcopy(VARIANTS_ANALYZER)
    # The same for name search: docindex folds the names itself; the engine only cuts them into grams.
    analysis["tokenizer"]["docindex_names"] = copy.deepcopy(names.TOKENIZER)
    analysis["analyzer"]["docindex_names"] = copy.deepcopy(names.ANALYZER)
    if not analysis["filter"]:
        del analysis["filter"]
    return analysis


MAPPINGS: dict[str, Any] = {
    # Unknown fields are kept in _source but not indexed: a typo never
    # rejects a document, and the mapping stays the contract's.
    "dynamic": False,
    # `variants` is derived from title, file name and content, `names` from the key: every writer
    # computes them again (IndexDocument.source(), docindex reindex), so storing them would only double the text.
    "_source": {"excludes": ["variants", names.FIELD, names.ORDER_FIELD]},
    "properties": {
        "bucket": {"type": "keyword"},
        "key": {"type": "keyword"},
        "filename": {
            "type": "text",
            "analyzer": "docindex_text",
            "search_analyzer": "docindex_search",
            "fields": {
                "keyword": {"type": "keyword", "ignore_above": 1024},
                "ngram": {"type": "text", "analyzer": "docindex_ngram"},
            },
        },
        "extension": {"type": "keyword"},
        "content_type": {"type": "keyword"},
        "size": {"type": "long"},
        "etag": {"type": "keyword"},
        "version_id": {"type": "keyword"},
        "sequencer": {"type": "keyword"},
        "content_sha256": {"type": "keyword"},
        # The document's date: the file server's modification time from the object's metadata, else
        # S3's LastModified; which it is ("file_server", "s3"), why the metadata's was not used, and
        # S3's own (docindex.core.filedates).
        "last_modified": {"type": "date"},
        "last_modified_source": {"type": "keyword"},
        "last_modified_problem": {"type": "keyword", "ignore_above": 256},
        "s3_last_modified": {"type": "date"},
        "indexed_at": {"type": "date"},
        "title": {
            "type": "text",
            "analyzer": "docindex_text",
            "search_analyzer": "docindex_search",
            "fields": {"bigram": {"type": "text", "analyzer": "docindex_bigram"}},
        },
        "content": {
            "type": "text",
            "analyzer": "docindex_text",
            "search_analyzer": "docindex_search",
            "fields": {"bigram": {"type": "text", "analyzer": "docindex_bigram"}},
        },
        "variants": {"type": "text", "analyzer": "docindex_variants"},
        # Name search (docindex.index.names): the key's folder and file names, folded like `variants`.
        names.FIELD: copy.deepcopy(names.MAPPING),
        # Sorting by name as Explorer does (docindex.index.sorting): 第2回 before 第10回.
        names.ORDER_FIELD: copy.deepcopy(names.ORDER_MAPPING),
        "content_truncated": {"type": "boolean"},
        "content_dropped": {"type": "keyword"},
        "author": {"type": "keyword", "ignore_above": 256},
        "last_saved_by": {"type": "keyword", "ignore_above": 256},
        "created": {"type": "date"},
        "modified": {"type": "date"},
        "page_count": {"type": "integer"},
        "ocr_status": {"type": "keyword"},
        "ocr_reason": {"type": "keyword"},
        # What OCR did page by page (issue 26): stored for operators, not indexed.
        "ocr_pages": {"type": "object", "enabled": False},
        "ocr_page_reasons": {"type": "keyword"},
        "ocr_confidence": {"type": "integer"},
        "ocr_version": {"type": "integer"},
        "extraction_error": {"type": "keyword"},
        # Where in the file (issue 28): each page, slide, sheet or attachment as a nested document
        # with its own text, searched with the same analyzers as ``content``; a query's inner hits
        # name the matching pages with a snippet of each (docs/search.md, "Pages").
        # What the text holds that an operator should know of (docindex.extract.findings): docindex failures.
        "findings": {"type": "keyword"},
        "pages": {
            "type": "nested",
            "properties": {
                "n": {"type": "integer"},
                "kind": {"type": "keyword"},
                "label": {"type": "keyword", "index": False},
                "text": {
                    "type": "text",
                    "analyzer": "docindex_text",
                    "search_analyzer": "docindex_search",
                    "fields": {"bigram": {"type": "text", "analyzer": "docindex_bigram"}},
                },
            },
        },
        # The search API: folder facets and filters, and who may read the file (docindex.access).
        "folders": {"type": "keyword", "ignore_above": 1024},
        "allow_principals": {"type": "keyword"},
        "deny_principals": {"type": "keyword"},
    },
}


# Tried in order when creating an index: the best analysis the cluster supports.
ANALYSIS_TIERS = ("icu+kuromoji", "kuromoji", "cjk")


def index_body(
    *,
    tier: str = "kuromoji",
    vocabulary: Vocabulary | None = None,
    vectors: VectorSpec | None = None,
    derived_source: bool = True,
) -> dict[str, Any]:
    """Settings and mappings for a new index with the given analysis tier and vocabulary.

    Every tier rewrites width and form before tokenizing (the ``docindex_width``
    mapping char filter), so ``ｻｰﾊﾞｰ`` is one token ``サーバー`` and ``ＱＵＯＴＥ``
    is ``quote``; ``icu+kuromoji`` adds ``icu_normalizer`` (analysis-icu, bundled
    with Amazon OpenSearch Service); ``cjk`` is bigrams for clusters without the
    Japanese plugin. ``vocabulary`` (default: the shipped ``analysis.toml``) adds
    the user dictionary to kuromoji and the synonyms to the search analyzer.
    ``vectors``: meaning search's fields in ``vectors.encoding``, stored once (the k-NN plugin's
    derived source, unless ``derived_source`` is False: docindex.index.encodings).
    """
    from docindex.index.encodings import DERIVED_SOURCE_SETTING

    if vocabulary is None:
        from docindex.index import vocabulary as vocabulary_module

        vocabulary = vocabulary_module.load()
    body: dict[str, Any] = {
        "settings": {"index": {"analysis": _analysis(tier, vocabulary)}},
        "mappings": copy.deepcopy(MAPPINGS),
    }
    if vectors is not None:
        body["settings"]["index"]["knn"] = True
        if derived_source:
            body["settings"]["index"][DERIVED_SOURCE_SETTING] = True
        body["mappings"]["properties"].update(vector_properties(vectors))
    return body


def vector_properties(vectors: VectorSpec) -> dict[str, Any]:
    """The fields of meaning search (docs/meaning-search.md): each passage's vector, its text and place.

    One nested object per passage, written and deleted with its file in one Lucene block like
    ``pages``, so the permission stamp of the file is the passage's: the vector leg filters on the
    file's ``allow_principals`` before it looks for neighbours. HNSW with cosine similarity (the
    vectors have length 1), in the encoding ``vectors.encoding`` names (docindex.index.encodings);
    the text is kept for the hit's snippet, not indexed.
    """
    from docindex.index.encodings import encoding

    return {
        "embedding_model": {"type": "keyword"},
        "passages": {
            "type": "nested",
            "properties": {
                "vector": encoding(vectors.encoding).field(vectors.dimension),
                "text": {"type": "text", "index": False},
                "start": {"type": "integer", "index": False},
                "end": {"type": "integer", "index": False},
                "page": {"type": "integer", "index": False},
            },
        },
    }


def _vector_variants(vectors: VectorSpec | None) -> list[tuple[VectorSpec | None, bool]]:
    """What to try for the vector fields, best first: the chosen encoding stored once, then without
    derived source, then fp32 likewise, then no vectors (keyword search only)."""
    from dataclasses import replace

    from docindex.index.encodings import FALLBACK_ENCODING

    if vectors is None:
        return [(None, False)]
    specs = [vectors]
    if vectors.encoding != FALLBACK_ENCODING:
        specs.append(replace(vectors, encoding=FALLBACK_ENCODING))
    return [(spec, derived) for spec in specs for derived in (True, False)] + [(None, False)]


def create_index(
    client: OpenSearch,
    concrete: str,
    *,
    alias: str | None = None,
    vocabulary: Vocabulary | None = None,
    meta: dict[str, Any] | None = None,
    vectors: VectorSpec | None = None,
) -> str | None:
    """Create ``concrete`` with the best analysis tier the cluster supports; that tier.

    With ``alias``, the index is created as the alias's write index. None when the
    index already exists (another process created it first). ``vectors``: with the fields of
    meaning search for that model, in its encoding and stored once where the cluster allows
    (a cluster without derived source keeps them in ``_source``; one that refuses the encoding gets
    fp32; one without the k-NN plugin, or a serverless collection of the "search" type, gets the
    index without them: keyword search only; each logged).
    """
    from opensearchpy.exceptions import RequestError

    from docindex.text.variants import NORMALIZATION_VERSION

    attempts = [(tier, variant) for tier in ANALYSIS_TIERS for variant in _vector_variants(vectors)]
    refused: set[str] = set()
    for tier, (with_vectors, derived) in attempts:
        if tier in refused:  # the analyzers are the same whatever the vector field: the next tier
            continue
        body = index_body(tier=tier, vocabulary=vocabulary, vectors=with_vectors, derived_source=derived)
        docindex_meta: dict[str, Any] = {
            "analysis": tier,
            "variants": NORMALIZATION_VERSION,
            "names": names.NAMES_VERSION,
            **(meta or {}),
        }
        if with_vectors is not None:
            docindex_meta["vectors"] = {
                "model": with_vectors.model_id,
                "dimension": with_vectors.dimension,
                "encoding": with_vectors.encoding,
                "derived_source": derived,
            }
        body["mappings"]["_meta"] = {"docindex": docindex_meta}
        if alias:
            body["aliases"] = {alias: {"is_write_index": True}}
        try:
            client.indices.create(index=concrete, body=body)
        except RequestError as exc:
            error_text = str(exc.info) if exc.info else str(exc)
            if "resource_already_exists" in error_text:
                return None
            vector_words = ("knn", "k-NN", "vector", "derived_source", "encoder", "compression", "mode")
            if with_vectors is not None and any(word in error_text for word in vector_words):
                logger.warning(
                    "the cluster refused this vector field; trying the next (fp32, vectors in _source, none)",
                    extra={
                        "index": concrete,
                        "encoding": with_vectors.encoding,
                        "derived_source": derived,
                        "error": error_text[:300],
                    },
                )
                continue
            if not any(word in error_text for word in ("icu", "kuromoji", "analyz", "char_filter", "tokenizer")):
                raise
            refused.add(tier)
            # Without the ICU plugin (the local engine, some self-managed clusters) the kuromoji tier
            # reads Japanese the same way (docs/search.md#analysis-tiers): expected, so info. Only a
            # cluster without kuromoji, whose search gets coarser, is worth a warning.
            log = logger.warning if tier == "kuromoji" else logger.info
            log(
                f"analysis tier {tier} not available on this cluster; trying the next tier",
                extra={"index": concrete, "tier": tier, "error": error_text[:300]},
            )
            continue
        logger.info(
            "created index",
            extra={
                "index": concrete,
                "alias": alias,
                "analysis": tier,
                "vectors": with_vectors.encoding if with_vectors else None,
                "derived_source": derived,
            },
        )
        return tier
    raise RuntimeError(f"could not create index {concrete} with any analysis tier")


def ensure_index(client: OpenSearch, name: str, *, vectors: VectorSpec | None = None) -> str:
    """Create ``{name}-v{N}`` with alias ``name`` unless ``name`` exists.

    Writing through an alias lets ``docindex reindex`` rebuild the index with
    new analysis and switch the alias without touching the pipeline. Returns
    the concrete index behind the name.
    """
    if client.indices.exists(index=name):
        return name
    concrete = f"{name}-v{INDEX_VERSION}"
    create_index(client, concrete, alias=name, vectors=vectors)
    return concrete


def index_vectors(client: OpenSearch, name: str) -> VectorSpec | None:
    """The model and dimension of ``name``'s vectors, from its mapping's ``_meta``; None without vectors."""
    from docindex.embed import VectorSpec

    mappings = client.indices.get_mapping(index=name)
    for body in mappings.values():
        found = ((body.get("mappings") or {}).get("_meta") or {}).get("docindex", {}).get("vectors")
        if isinstance(found, dict) and found.get("model") and found.get("dimension"):
            return VectorSpec(str(found["model"]), int(found["dimension"]), encoding=str(found.get("encoding", "fp32")))
    return None


def vector_storage(client: OpenSearch, name: str, doc_id: str, wanted: VectorSpec) -> dict[str, Any]:
    """How ``name`` keeps its vectors, read back from the cluster: the encoding it accepted (against the
    one ``wanted``), whether they are stored once (derived source), and whether a GET of ``doc_id``
    gives its vector back (what reindex, the access re-stamp and the refresh of an unchanged file need)."""
    mappings = client.indices.get_mapping(index=name)
    meta: dict[str, Any] = {}
    for body in mappings.values():
        meta = ((body.get("mappings") or {}).get("_meta") or {}).get("docindex", {}).get("vectors") or {}
    settings: dict[str, Any] = dict(client.indices.get_settings(index=name))
    first: dict[str, Any] = next(iter(settings.values()), {})
    index_settings: dict[str, Any] = first.get("settings", {}).get("index", {})
    knn = index_settings.get("knn")
    nested = knn.get("derived_source", {}).get("enabled") if isinstance(knn, dict) else None
    derived = index_settings.get("knn.derived_source.enabled", nested)
    passages = (client.get(index=name, id=doc_id).get("_source") or {}).get("passages") or [{}]
    returned = isinstance(passages[0].get("vector"), list) and len(passages[0]["vector"]) == wanted.dimension
    return {
        "encoding": meta.get("encoding", "fp32"),
        "encoding_wanted": wanted.encoding,
        "derived_source": str(derived).lower() == "true" or bool(meta.get("derived_source")),
        "vector_read_back": returned,
    }


# Fields added after INDEX_VERSION 1 was deployed: put on an existing index (adding fields is always allowed).
# Not `variants` nor `names`: their analyzers are not in an older index's settings (adding one closes
# the index), so an older index gets them from `docindex reindex` (docs/search.md#spelling-variants).
ADDED_FIELDS = (
    *("folders", "allow_principals", "deny_principals", "content_sha256", "content_dropped"),
    *("author", "last_saved_by", "created", "modified"),
    *("ocr_pages", "ocr_page_reasons", "ocr_confidence", "ocr_version"),
    "pages",
    "findings",
    # a keyword: no analyzer, so an older index takes it; its documents get it when rewritten (docindex reindex)
    names.ORDER_FIELD,
    # the file server's dates (issue 49): documents get them when rewritten (docindex reprocess --dates)
    *("last_modified_source", "last_modified_problem", "s3_last_modified"),
)


def ensure_added_fields(client: OpenSearch, name: str) -> None:
    """Add :data:`ADDED_FIELDS` to an index created before they existed (idempotent)."""
    properties = {field: MAPPINGS["properties"][field] for field in ADDED_FIELDS}
    client.indices.put_mapping(index=name, body={"properties": properties})


def try_on_cluster(client: Any, vocabulary: Vocabulary) -> dict[str, Any]:
    """Create a throwaway index with the full settings on the cluster, analyze every entry, delete it.

    Index creation is where OpenSearch parses the user dictionary and the synonyms
    (a refusal raises); the tokens show what the search analyzer makes of each entry.
    """
    import uuid

    name = f"docindex-validate-{uuid.uuid4().hex[:12]}"
    analysis = create_index(client, name, vocabulary=vocabulary)
    try:
        texts = [rule.split(",", 1)[0] for rule in vocabulary.dictionary_rules]
        texts += [term.strip() for line in vocabulary.synonym_sets for term in re.split(r",|=>", line)]
        tokens: dict[str, list[str]] = {}
        for text in dict.fromkeys(t for t in texts if t):
            response = client.indices.analyze(index=name, body={"analyzer": "docindex_search", "text": text})
            tokens[text] = [t["token"] for t in response.get("tokens", [])]
        return {"analysis": analysis, "tokens": tokens}
    finally:
        client.indices.delete(index=name, ignore=[404])
