"""Fault-injecting HTTP proxies: real HTTP from the client, real HTTP to the server.

One small forwarding server (``Proxy``, keep-alive on both sides) with a
pluggable ``Behaviour``; the tests, the soak and the bench share it:

- ``OpenSearchFaults`` in front of OpenSearch (the local node). Scripted faults, for tests:
  answer the next ``_bulk`` requests with chosen statuses
  (``bulk_statuses``), or fail chosen documents inside an otherwise
  successful ``_bulk`` response (``item_errors``: those items are not
  forwarded). Random faults, for the soak (``rates``): a share of ``_bulk``
  requests answered 429 or 503 (nothing forwarded), single bulk items
  rejected with 429, single-document writes with 429, other calls failed with
  503. Every write OpenSearch accepted is recorded (``WriteLog``): the soak's
  judge counts them per document version and per change.
- ``AwsFaults`` in front of moto server throttles (503 SlowDown), fails (500
  InternalError), drops (connection closed) or truncates S3 ``GetObject``
  responses, scripted (``scripted``) or at random (``rates``), and records
  every message sent to SQS (``SendLog``), the ground truth of the changes
  announced.
- ``GiantObjects`` in front of moto serves chosen keys from (sparse) local
  files, as big as they are, and counts the body bytes that left.

Random faults apply only while ``FaultSwitch.active`` (the soak turns them off
before its redrive run) and are drawn from seeded generators, so a failing run
can be replayed; scripted faults always apply.

    faults = OpenSearchFaults()
    with Proxy(opensearch_url, faults) as proxy:
        faults.bulk_statuses = [429, 503]
        ...  # a client on proxy.url
"""

from __future__ import annotations

from devkit.faults.aws import AwsFaults, GiantObjects, S3FaultRates, SendLog, SentMessage
from devkit.faults.opensearch import OpenSearchFaultRates, OpenSearchFaults, Write, WriteLog
from devkit.faults.proxy import Behaviour, Draw, FaultCounts, FaultSwitch, Forward, Proxy, Reply, Request

__all__ = [
    "AwsFaults",
    "Behaviour",
    "Draw",
    "FaultCounts",
    "FaultSwitch",
    "Forward",
    "GiantObjects",
    "OpenSearchFaultRates",
    "OpenSearchFaults",
    "Proxy",
    "Reply",
    "Request",
    "S3FaultRates",
    "SendLog",
    "SentMessage",
    "Write",
    "WriteLog",
]
