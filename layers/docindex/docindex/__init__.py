"""docindex: keep an OpenSearch index in step with the documents in an S3 bucket."""

__version__ = "0.1.0"
