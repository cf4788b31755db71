"""One package per paper (plus baselines), each exposing the paper's steps and one ``pipeline()``, and the
modules every method declares itself with: the retrieval interface (``base``), the parameter vocabulary
(``params``), the registry (``registry``: entries, and the lookups that find a method's notebook and
declarations), book entries (``book_entry``), trained artifacts (``artifacts``) and the house plots
(``plots``)."""
