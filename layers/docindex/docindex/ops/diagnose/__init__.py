"""Diagnose: check a deployment for every cause of the queue-that-never-drains incident (docs/architecture.md).

Each check reports OK, WARN, FAIL or SKIP with its evidence and, when
something is wrong, the exact fix. Three layers, one direction:

- ``facts/``   what the deployment is, read through AWS and OpenSearch (the only I/O). Nothing
  changes, except that sampling a queue receives a few messages and makes them visible again at
  once (their receive count goes up by one).
- ``checks/``  the verdicts: pure functions of the facts (``judge_*``), unit-tested on their own.
- ``report``   ``Check``, ``Diagnosis``, statuses and the exit code, for the CLI to render.

``run.Diagnoser`` gathers and judges each check in turn. Checks, in report order:

``notifications``     exactly one path from the bucket to the ingest queue (incident cause 1)
``visibility``        ingest visibility timeout ≥ 6 × function timeout + batching window (cause 3)
``redrive-*``         redrive policy, maxReceiveCount, DLQ retention (cause 2)
``event-source``      the mapping reports batch item failures, is enabled, bounded concurrency (causes 2, 4)
``dlq-*``             DLQ depth and a sample summarised by message shape
``backlog-*``         queue depth against the consumer's throughput: drains in N hours, or grows
``permissions``       IAM: resources named by URL instead of ARN, policy simulation (cause 5)
``index``             the index exists, its mapping matches, cluster health
``ocr-worker``        the OCR worker service and its scaling bounds
"""
