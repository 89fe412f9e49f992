"""A real OpenSearch node for the local run, the tests and the benches, built from Maven Central.

``build`` assembles the node's home (the version Amazon OpenSearch Service runs, with k-NN and the
Japanese and ICU analysis docindex uses), ``node`` starts and stops nodes and clusters, ``java``
finds the JDK. ``python -m devkit.opensearch`` builds the home and prints where it is.
"""
