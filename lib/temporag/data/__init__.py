"""Data sets: one module per benchmark, each returning small frozen records or a TemporalKG."""
