"""Idempotency locks that live exactly as long as a worker holds the job's message.

Outside Lambda, Powertools would never let an in-progress lock expire on its own (it
derives ``in_progress_expiry`` from a Lambda context), so a worker killed mid-job would
block the job until the record's TTL. The "remaining time" registered here is one lease
unrenewed, and every heartbeat pushes each running job's lock one lease further
(``RenewableDynamoDBPersistence.renew``): a killed worker's lock expires together with
its message's invisibility.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer
from botocore.exceptions import ClientError

from docindex.core.aws import is_conditional_check_failure

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import DataRecord

    from docindex.worker.leases import Lease


def lock_seconds(lease_seconds: int) -> int:
    """How long an idempotency lock lives unrenewed: a second less than the message's lease.

    So when a dead worker's message reappears, its lock has already expired
    and the next worker runs the job instead of deferring it.
    """
    return max(1, lease_seconds - 1)


class LeaseContext:
    """What Powertools idempotency reads from a Lambda context: the time a lock may be held unrenewed."""

    def __init__(self, seconds: int) -> None:
        self._millis = seconds * 1000

    def get_remaining_time_in_millis(self) -> int:
        return self._millis


class RenewableDynamoDBPersistence(DynamoDBPersistenceLayer):
    """Powertools' DynamoDB store, remembering each job's in-progress record so heartbeats can renew it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._bound = threading.local()

    @contextmanager
    def bound_to(self, lease: Lease) -> Iterator[None]:
        self._bound.lease = lease
        try:
            yield
        finally:
            self._bound.lease = None

    def _put_record(self, data_record: DataRecord) -> None:
        super()._put_record(data_record)
        lease = getattr(self._bound, "lease", None)
        if lease is not None and data_record.status == "INPROGRESS":
            lease.idempotency_key = data_record.idempotency_key

    def renew(self, leases: list[Lease], seconds: int) -> None:
        """Push the in-progress expiry of these jobs' records ``seconds`` ahead (only while INPROGRESS)."""
        until_ms = int((time.time() + seconds) * 1000)
        for lease in leases:
            key = lease.idempotency_key
            if not key:
                continue
            try:
                self.client.update_item(
                    TableName=self.table_name,
                    Key=self._get_key(key),
                    UpdateExpression="SET #expiry = :until",
                    ConditionExpression="#status = :inprogress",
                    ExpressionAttributeNames={"#expiry": self.in_progress_expiry_attr, "#status": self.status_attr},
                    ExpressionAttributeValues={":until": {"N": str(until_ms)}, ":inprogress": {"S": "INPROGRESS"}},
                )
            except ClientError as exc:
                if not is_conditional_check_failure(exc):
                    raise
