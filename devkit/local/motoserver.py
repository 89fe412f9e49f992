"""moto server as the dev kit runs it: the same server, three look-ups made cheap.

moto's SQS computes every attribute of a queue (each one a scan of all its
messages) once per message it *returns* (to read the retention period) and
three times per attribute asked for in ``GetQueueAttributes``, and reads the
clock through datetime arithmetic for every message of each scan. With a few
thousand messages in a queue that is seconds per ``ReceiveMessage``, and the
soak (or a benchmark) would measure moto, not docindex. And to route each
request, moto lists the directories of its own package (about 170 stat calls)
twice: a quarter of its time per request. These replacements return the same
values; nothing else is touched, except that an action moto does not implement
answers 501 Not Implemented instead of a 500 every client retries (``patch_unimplemented``),
and that DynamoDB's item operations are atomic, as DynamoDB's are (``patch_dynamodb_atomic``).

``python -m devkit.local.motoserver -H 127.0.0.1 -p PORT`` (moto's own
arguments); ``devkit.local.servers.start_moto`` runs it. With
``DEVKIT_EXIT_WITH_PARENT`` set to a pid, the server exits once that process
is gone (a test session or a soak that was killed cannot leave it behind).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any

EXIT_WITH_PARENT_ENV = "DEVKIT_EXIT_WITH_PARENT"


def patch_sqs() -> None:
    from moto.sqs import models

    # The clock, read for each message a queue scans (is it visible? delayed?): moto computes it with
    # datetime arithmetic and an import per call (moto.core.utils.utcnow); time.time() is the same number.
    moto_unix_time, moto_unix_time_millis = models.unix_time, models.unix_time_millis

    def unix_time(dt: Any = None) -> float:
        return time.time() if dt is None else float(moto_unix_time(dt))

    def unix_time_millis(dt: Any = None) -> float:
        return time.time() * 1000.0 if dt is None else float(moto_unix_time_millis(dt))

    models.unix_time, models.unix_time_millis = unix_time, unix_time_millis

    def is_message_valid_based_on_retention_period(self: Any, queue_name: str, message: Any) -> bool:
        queue = self.get_queue(queue_name)
        retain_until = int(queue.message_retention_period) + message.sent_timestamp / 1000
        return bool(retain_until > unix_time())

    original = models.SQSBackend.get_queue_attributes

    def get_queue_attributes(self: Any, queue_name: str, attribute_names: list[str]) -> dict[str, Any]:
        if not attribute_names or "All" in attribute_names:
            return dict(original(self, queue_name, attribute_names))
        queue = self.get_queue(queue_name)
        valid = ["All", *queue.BASE_ATTRIBUTES, *queue.FIFO_ATTRIBUTES, *queue.KMS_ATTRIBUTES]
        if any(name not in valid for name in attribute_names):
            return dict(original(self, queue_name, attribute_names))  # moto's own error
        everything = queue.attributes  # one scan instead of three per name
        return {name: everything[name] for name in attribute_names if everything.get(name) is not None}

    models.SQSBackend.is_message_valid_based_on_retention_period = (  # type: ignore[method-assign]
        is_message_valid_based_on_retention_period
    )
    models.SQSBackend.get_queue_attributes = get_queue_attributes  # type: ignore[method-assign]


def patch_dispatch() -> None:
    """What moto works out again for every request, from things that do not change while it runs.

    It lists its own package directory (a stat per entry) twice per request to route it, lists the
    methods of the response class to find the action's, and turns each attribute and action name
    into snake case character by character.
    """
    import functools
    import types

    from moto import backends
    from moto.core import utils

    modules = tuple(backends.list_of_moto_modules())
    backends.list_of_moto_modules = lambda: modules

    snake = functools.lru_cache(maxsize=4096)(utils.camelcase_to_underscores)
    methods = functools.cache(utils.method_names_from_class)

    def method_names_from_class(clazz: object) -> list[str]:
        return list(methods(clazz))

    replacements = {
        utils.camelcase_to_underscores: snake,
        utils.method_names_from_class: method_names_from_class,
    }
    # Modules already imported hold the originals under their own names; later ones import these.
    for name, module in list(sys.modules.items()):
        if name == "moto" or name.startswith("moto."):
            for attribute, value in list(vars(module).items()):
                if isinstance(value, types.FunctionType) and value in replacements:
                    setattr(module, attribute, replacements[value])


def patch_unimplemented() -> None:
    """An action moto does not implement answers 501 Not Implemented, as its server's HTTP error page.

    moto raises ``NotImplementedError`` for it, which its server turns into a 500: clients retry a
    500 (botocore's standard mode five times, with back-off: ~1 s per call), then see the same page.
    501 says what it is, and no client retries it (docindex's redrive reads either as "unsupported by
    this endpoint").
    """
    from moto.core.responses import BaseResponse

    call_action = BaseResponse.call_action

    def answering_501(self: BaseResponse) -> Any:
        try:
            return call_action(self)
        except NotImplementedError as exc:
            return 501, {"Content-Type": "text/plain"}, f"Not Implemented: {exc}"

    BaseResponse.call_action = answering_501  # type: ignore[method-assign]


def patch_dynamodb_atomic() -> None:
    """Each DynamoDB request answered whole before the next one starts, as DynamoDB applies each write.

    moto's server answers requests on threads, evaluates a write's condition and applies the write as
    two steps, and reads the item again for ``ReturnValues``, all unguarded: two conditional updates of
    one item sent at the same moment could both pass ``attribute_not_exists``, or one could return the
    other's result. DynamoDB never lets that happen (each write is atomic, conditions and returned
    values included), and docindex's ordering ledger and idempotency stand on it: the soak saw two
    changes of one new object both claim generation 1. One lock around moto's DynamoDB requests gives
    back the guarantee (``tests/integration/test_ledger.py``); they are a small share of moto's work.
    """
    from moto.dynamodb.responses import DynamoHandler

    lock = threading.RLock()
    call_action = DynamoHandler.call_action  # BaseResponse's, with patch_unimplemented's answer

    def one_at_a_time(self: Any) -> Any:
        with lock:
            return call_action(self)

    DynamoHandler.call_action = one_at_a_time  # type: ignore[method-assign]


def exit_with_parent(pid: int, interval: float = 1.0) -> None:
    """Exit this process (from a daemon thread) once process ``pid``, its parent, is gone."""

    def watch() -> None:
        # A process whose parent died is re-parented (to init or a subreaper): the parent pid changes.
        while os.getppid() == pid:
            time.sleep(interval)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def main(argv: list[str] | None = None) -> None:
    import logging

    parent = os.environ.get(EXIT_WITH_PARENT_ENV)
    if parent:
        exit_with_parent(int(parent))
    patch_dispatch()
    patch_sqs()
    patch_unimplemented()
    patch_dynamodb_atomic()  # after patch_unimplemented: it wraps the call that one made
    # One log line per request would cost the server more than some requests do.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    from moto.server import main as moto_main

    moto_main(argv if argv is not None else sys.argv[1:])


if __name__ == "__main__":
    main()
