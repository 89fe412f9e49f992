"""The employees' search API and page: signed in, and nobody sees a file they may not open.

- :mod:`~docindex.search_api.principals`: the caller (JWT claims → principals)
- :mod:`~docindex.search_api.query`: the request model and the OpenSearch body (permission filter included)
- :mod:`~docindex.search_api.service`: search, document metadata, download URL
- :mod:`~docindex.search_api.routes`: the HTTP routes (Powertools ``APIGatewayHttpResolver``) and the page
"""
