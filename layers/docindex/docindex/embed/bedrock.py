"""Amazon Bedrock as the embedder: Titan Text Embeddings v2 or Cohere Embed Multilingual v3.

A configured alternative to the local model (``EMBEDDINGS=bedrock``,
``EMBEDDING_MODEL``): no model in the layer and no CPU spent on vectors, at Bedrock's
price per token and within its quotas. Vectors are scaled to length 1 here whatever the
model returns, so the index's cosine space is the same for every embedder.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from docindex.embed import EmbedderUnavailable

TITAN_V2 = "amazon.titan-embed-text-v2:0"
COHERE_MULTILINGUAL = "cohere.embed-multilingual-v3"
# Titan v2 reads at most 8,192 tokens (50,000 characters); passages are far shorter.
TITAN_DIMENSIONS = 1024
COHERE_DIMENSIONS = 1024
COHERE_BATCH = 96  # texts per request (the model's limit)
MAX_INPUT_CHARS = 2048


def dimension_of(model: str) -> int:
    """The vector length a supported Bedrock model returns (ValueError for any other model)."""
    if model == TITAN_V2:
        return TITAN_DIMENSIONS
    if model == COHERE_MULTILINGUAL:
        return COHERE_DIMENSIONS
    raise ValueError(f"EMBEDDING_MODEL: {model!r} is not one of {TITAN_V2}, {COHERE_MULTILINGUAL}")


def _unit(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [float(x) / norm for x in vector]


class BedrockEmbedder:
    """Embeddings from a Bedrock model through ``bedrock-runtime`` ``InvokeModel``; thread-safe."""

    def __init__(self, client: Any, model: str = TITAN_V2) -> None:
        self.dimension = dimension_of(model)
        self._client = client
        self._model = model
        self.model_id = f"bedrock:{model}"

    def passages(self, texts: Sequence[str]) -> list[list[float]]:
        if self._model == TITAN_V2:
            return [self._titan(text) for text in texts]
        vectors: list[list[float]] = []
        for first in range(0, len(texts), COHERE_BATCH):
            vectors.extend(self._cohere(texts[first : first + COHERE_BATCH], "search_document"))
        return vectors

    def query(self, text: str) -> list[float]:
        if self._model == TITAN_V2:
            return self._titan(text)
        return self._cohere([text], "search_query")[0]

    def _titan(self, text: str) -> list[float]:
        body = {"inputText": text[:MAX_INPUT_CHARS], "dimensions": TITAN_DIMENSIONS, "normalize": True}
        return _unit(self._invoke(body)["embedding"])

    def _cohere(self, texts: Sequence[str], input_type: str) -> list[list[float]]:
        body = {"texts": [t[:MAX_INPUT_CHARS] for t in texts], "input_type": input_type, "truncate": "END"}
        return [_unit(v) for v in self._invoke(body)["embeddings"]]

    def _invoke(self, body: dict[str, Any]) -> dict[str, Any]:
        try:
            response = self._client.invoke_model(
                modelId=self._model,
                body=json.dumps(body, ensure_ascii=False).encode("utf-8"),
                contentType="application/json",
                accept="application/json",
            )
            payload: dict[str, Any] = json.loads(response["body"].read())
            return payload
        except (ClientError, BotoCoreError, KeyError, ValueError) as exc:
            raise EmbedderUnavailable(f"Bedrock {self._model}: {exc}") from exc
