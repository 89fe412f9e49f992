"""Helpers the tests share (not tests themselves, and not fixtures: those live in the conftest.py files).

- ``scans``: the texts and page layout of the OCR tests' scans;
- ``template_model``: just enough CloudFormation to evaluate template.yaml without AWS;
- ``hostile_run``: one indexer batch or one worker run in a fresh process, peak memory included;
- ``worker``: OCR workers on a test stack, and the indexer run that queues their jobs.

What the soak and the bench share with the tests lives in ``devkit`` instead
(sample files, message builders, the fault proxy, the local servers).
"""
