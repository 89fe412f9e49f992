"""A Lambda context for running handlers outside Lambda."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field


@dataclass
class LocalLambdaContext:
    """Enough of ``LambdaContext`` for Powertools and the deadline logic."""

    function_name: str = "docindex-indexer-local"
    timeout_seconds: float = 60.0
    memory_limit_in_mb: int = 2048
    function_version: str = "$LATEST"
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    _started: float = field(default_factory=time.monotonic)

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:us-east-1:123456789012:function:{self.function_name}"

    @property
    def log_group_name(self) -> str:
        return f"/aws/lambda/{self.function_name}"

    @property
    def log_stream_name(self) -> str:
        return "local"

    def get_remaining_time_in_millis(self) -> int:
        left = self.timeout_seconds - (time.monotonic() - self._started)
        return max(0, int(left * 1000))
