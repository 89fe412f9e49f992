"""Text normalization shared by the index settings, the documents and the queries.

``width``: the width and form normalization the index's ``mapping`` char filter applies, as a
Python function too. ``variants``: the spelling-variant normalization (表記ゆれ) docindex applies
itself to documents and queries alike, so that it holds on every engine.
"""
