"""DLQ redrive with guards (the ``redrive`` Lambda and ``docindex redrive``), one concept a module.

Imports go down this list, never up:

``models``    request, per-DLQ result, summary, queue facts; shared constants and the velocity check
``settings``  ``RedriveSettings`` from the environment
``state``     the no-progress state in DynamoDB and the judgement of a round
``probes``    consumer health (OpenSearch) and throughput (CloudWatch)
``errors``    which reason an SQS/DynamoDB failure becomes (the classes are in ``core.exceptions``)
``queues``    queue URL from ARN, attributes, dead-letter sources
``guards``    the checks of a start, in order
``service``   ``RedriveService``: start, status, cancel, reset per DLQ
``wiring``    the service built from the environment, and the Lambda's run with its metrics
"""
