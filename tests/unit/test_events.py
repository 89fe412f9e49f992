from docindex.events import normalize_sequencer


def test_sequencer_padding_compares_like_s3():
    # Given two sequencers of different lengths (S3: right-pad the shorter with zeros)
    short, long_ = normalize_sequencer("0055AED6DCD90281E5"), normalize_sequencer("0055AED6DCD90281E50A")
    # Then string comparison orders them as S3 documents
    assert short is not None
    assert long_ is not None
    assert short < long_
