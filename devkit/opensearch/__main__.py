"""``python -m devkit.opensearch``: build the local node's home (download, verify, compile) and print its path."""

from devkit.opensearch.build import main

raise SystemExit(main())
