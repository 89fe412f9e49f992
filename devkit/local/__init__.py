"""The local run: the pipeline on moto server (AWS) and a real OpenSearch node (devkit.opensearch).

No AWS account and no Docker: ``docindex local up`` starts or reuses the
servers and provisions what the SAM template defines; ``docindex local run``
drives the same handlers the way Lambda's SQS event source mapping does.
"""
