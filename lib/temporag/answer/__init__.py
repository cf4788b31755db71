"""Answering and scoring: readers, the template reader, and every metric once."""
