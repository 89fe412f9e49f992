"""What the deployment is, read through AWS and OpenSearch: the I/O half of diagnose.

Each ``*_facts`` function reads what one check needs into a frozen dataclass
and judges nothing; a check that cannot run here raises ``Unsupported``.
``reader`` holds the clients and what several checks read (queue attributes,
the event source mappings, the pause state).
"""
