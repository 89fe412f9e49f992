"""Who may read which file: the access map, the stamp every document carries, and re-stamping.

- :mod:`docindex.access.policy` parses an access map (JSON or YAML) and
  resolves an object key to the principals allowed and denied (pure).
- :mod:`docindex.access.source` loads the map from S3 or a file, cached with a
  TTL, for the indexer and the OCR worker (they stamp every write).
- :mod:`docindex.access.restamp` re-stamps the indexed documents after a map
  change, without re-extracting (``docindex access apply``).
"""

from docindex.access.policy import AccessGrant, AccessMap, AccessMapError, parse_access_map

__all__ = ["AccessGrant", "AccessMap", "AccessMapError", "parse_access_map"]
