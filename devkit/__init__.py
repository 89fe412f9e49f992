"""Development kit: sample files, the local servers and stack, message builders, fault proxy.

Installed by the dev install only; never shipped in the Lambda layer or the worker image.
"""
