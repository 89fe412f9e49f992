"""The judgements of diagnose: pure functions from facts to a ``Check`` (status, evidence, fix).

One module per topic, named for the checks it judges; none reads AWS or
OpenSearch, so each verdict is unit-tested on the incident's numbers alone.
"""
