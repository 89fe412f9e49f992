"""What the local OpenSearch node is built from: Maven Central artifacts, pinned by version and SHA-256.

The node is the version Amazon OpenSearch Service runs (2.19) with what every domain bundles that
docindex uses: the core modules of its mapping (analysis-common: ``cjk_width``, ``cjk_bigram``,
``mapping``, ``synonym_graph``, ``ngram``; lang-painless, which analysis-common and k-NN extend;
mapper-extras), the k-NN plugin, and Japanese and ICU analysis.

Coordinates, as Maven Central served them on 2026-12-02:

- ``org.opensearch.distribution.integ-test-zip:opensearch:2.19.1@zip``: the server, its launcher and
  the transport module; the modules above are put beside it from their own jars, each with the
  descriptor OpenSearch's build writes into its distribution (``descriptor``).
- ``org.opensearch.plugin:opensearch-knn:2.19.1.0@zip``: the k-NN plugin, as published (without the
  native Faiss and NMSLIB libraries: the ``lucene`` engine serves; see docs/local-run.md).
- ``org.opensearch.plugin:analysis-kuromoji`` and ``analysis-icu-client`` are **not served for 2.19**
  (2.16.0, then 3.8.0; 2.19.x answers 404), and the k-NN plugin is not served for 3.8. So the node
  carries two small plugins of docindex's own (devkit/opensearch/java) that register
  analysis-kuromoji's and analysis-icu's names and settings on the Lucene classes those plugins use:
  ``org.apache.lucene:lucene-analysis-kuromoji`` and ``lucene-analysis-icu`` at the Lucene version
  OpenSearch 2.19.1 ships (9.12.1), with ``com.ibm.icu:icu4j`` at the version that Lucene names.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

OPENSEARCH_VERSION = "2.19.1"
KNN_VERSION = "2.19.1.0"
LUCENE_VERSION = "9.12.1"
ICU4J_VERSION = "74.2"
# The Maven repository the artifacts come from (a mirror may stand in: MAVEN_REPOSITORY_URL).
MAVEN_CENTRAL = "https://repo1.maven.org/maven2"


def repository() -> str:
    return os.environ.get("MAVEN_REPOSITORY_URL", MAVEN_CENTRAL).rstrip("/")


@dataclass(frozen=True)
class Artifact:
    group: str
    name: str
    version: str
    sha256: str
    extension: str = "jar"

    @property
    def filename(self) -> str:
        return f"{self.name}-{self.version}.{self.extension}"

    @property
    def coordinate(self) -> str:
        return f"{self.group}:{self.name}:{self.version}@{self.extension}"

    def url(self) -> str:
        return f"{repository()}/{self.group.replace('.', '/')}/{self.name}/{self.version}/{self.filename}"


@dataclass(frozen=True)
class Module:
    """A module or plugin directory of the node: its jars and the descriptor OpenSearch reads."""

    name: str
    classname: str
    jars: tuple[Artifact, ...]
    description: str
    extended: tuple[str, ...] = ()
    # a plugin-security.policy, for code that needs more than the server grants every plugin
    policy: str | None = None
    version: str = OPENSEARCH_VERSION
    java_version: str = "11"
    sources: tuple[str, ...] = field(default=())  # docindex's own plugins: Java packages compiled here

    def descriptor(self) -> str:
        return "".join(
            f"{key}={value}\n"
            for key, value in (
                ("description", self.description),
                ("version", self.version),
                ("name", self.name),
                ("classname", self.classname),
                ("java.version", self.java_version),
                ("opensearch.version", OPENSEARCH_VERSION),
                ("extended.plugins", ",".join(self.extended)),
                ("has.native.controller", "false"),
            )
        )


def _opensearch(name: str, sha256: str, group: str = "org.opensearch.plugin") -> Artifact:
    return Artifact(group, name, OPENSEARCH_VERSION, sha256)


DISTRIBUTION = Artifact(
    "org.opensearch.distribution.integ-test-zip",
    "opensearch",
    OPENSEARCH_VERSION,
    "af7152d8b7f6f1cee09d47276b32b70479fe6dd8cdbb61213f84eb7f8098b261",
    "zip",
)
KNN = Artifact(
    "org.opensearch.plugin",
    "opensearch-knn",
    KNN_VERSION,
    "eab8c9818865bc035212eab5068cdacae164baa09d4c152f49b736d6f6b0e85c",
    "zip",
)

_ASM = {
    "asm": "adf46d5e34940bdf148ecdd26a9ee8eea94496a72034ff7141066b3eea5c4e9d",
    "asm-analysis": "7bc6bcbc21379948a0c8c467fb0f864206e5b818f6bc0b546872f5c9f941556f",
    "asm-commons": "389bc247958e049fc9a0408d398c92c6d370c18035120395d4cba1d9d9304b7a",
    "asm-tree": "62f4b3bc436045c1acb5c3ba2d8ec556ec3369093d7f5d06c747eb04b56d52b1",
    "asm-util": "37a6414d36641973f1af104937c95d6d921b2ddb4d612c66c5a9f2b13fc14211",
}

MODULES: tuple[Module, ...] = (
    Module(
        "lang-painless",
        "org.opensearch.painless.PainlessPlugin",
        (
            _opensearch("lang-painless", "3cf5e02efa40ff5b88e74e1ab66a0bc462de3509fab4a6a4ffe90b8d13777a9a"),
            _opensearch(
                "opensearch-scripting-painless-spi", "c2598797a5f6f897ce7e8d05f593ff96de3fbc56c52f299d63cddcae41556dda"
            ),
            Artifact(
                "org.antlr",
                "antlr4-runtime",
                "4.13.1",
                "54665d2838cc66458343468efc539e454fc95b46a8a04b13c6ac43fc9be63505",
            ),
            *(Artifact("org.ow2.asm", name, "9.7", sha) for name, sha in _ASM.items()),
        ),
        "An easy, safe and fast scripting language for OpenSearch",
        # Painless compiles scripts to classes of their own.
        policy='grant {\n  permission java.lang.RuntimePermission "createClassLoader";\n'
        '  permission java.lang.RuntimePermission "getClassLoader";\n};\n',
    ),
    Module(
        "analysis-common",
        "org.opensearch.analysis.common.CommonAnalysisPlugin",
        (_opensearch("analysis-common", "13fdc1071af42946b13153a62491a5e9b0ad214d44f7c8153d3afef60f558821"),),
        'Adds "built in" analyzers to OpenSearch.',
        extended=("lang-painless",),
    ),
    Module(
        "mapper-extras",
        "org.opensearch.index.mapper.MapperExtrasPlugin",
        (_opensearch("mapper-extras-client", "93e85f305ddc3070fea5b83cc8d962bdcd30df20638352b02cf57276cc2bc5d5"),),
        "Adds advanced field mappers",
        extended=("lang-painless",),
    ),
)

KUROMOJI = Module(
    "docindex-analysis-kuromoji",
    "org.docindex.opensearch.kuromoji.KuromojiAnalysisPlugin",
    (
        Artifact(
            "org.apache.lucene",
            "lucene-analysis-kuromoji",
            LUCENE_VERSION,
            "c035ed289413071e88f64d8bac1eba2b9ac6f382e7d1684fedf3b822f23a6495",
        ),
    ),
    "analysis-kuromoji's analysis names on Lucene's kuromoji (docindex's local node)",
    java_version="17",
    sources=("org/docindex/opensearch/kuromoji",),
)
ICU = Module(
    "docindex-analysis-icu",
    "org.docindex.opensearch.icu.IcuAnalysisPlugin",
    (
        Artifact(
            "org.apache.lucene",
            "lucene-analysis-icu",
            LUCENE_VERSION,
            "27dc3353be141e9ae7ed236aeb44b5e7ff35dda45555fcbdd5d8aefb7149ab16",
        ),
        Artifact(
            "com.ibm.icu", "icu4j", ICU4J_VERSION, "95c055080e14c093ebeeba5b733e1a1be7a4af5854668c774cedf070d4240e43"
        ),
    ),
    "analysis-icu's analysis names on Lucene's ICU analysis (docindex's local node)",
    java_version="17",
    sources=("org/docindex/opensearch/icu",),
)
# The k-NN zip has no native library: a Faiss or NMSLIB field would kill the node at its first document.
# This plugin makes the node refuse one instead, as a cluster refuses an encoding it lacks.
LUCENE_VECTORS_ONLY = Module(
    "docindex-lucene-vectors-only",
    "org.docindex.opensearch.lucenevectors.LuceneVectorsOnlyPlugin",
    (),
    "refuses knn_vector fields that need Faiss or NMSLIB, which this node lacks (docindex's local node)",
    java_version="17",
    sources=("org/docindex/opensearch/lucenevectors",),
)
OWN_PLUGINS = (KUROMOJI, ICU, LUCENE_VECTORS_ONLY)


def every_artifact() -> tuple[Artifact, ...]:
    return (DISTRIBUTION, KNN, *(jar for module in (*MODULES, *OWN_PLUGINS) for jar in module.jars))
