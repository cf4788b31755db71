"""Reading a question without an LLM: the offline parser and the one cue lexicon."""
