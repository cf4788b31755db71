"""The methods layer: one package per paper (``tecqa``, ``star_rag``, ``timer4``, ``ia_rag``, ``sar``) and
the tour's semantic baseline (``semantic``), each exposing the paper's steps, one
:class:`~temporag.methods.base.Method` (``retrieve`` and the inherited ``pipeline``) and its registry
``ENTRY``; beside them the modules every method declares itself with: ``base`` (the retrieval interface),
``params`` (the parameter vocabulary), ``registry`` (methods found by name, the kit's and installed ones,
and the lookups that find a method's notebook and declarations), ``book_entry`` (what the book shows for a
notebook), ``workspace`` (what every method on one KG shares), ``artifacts`` (what a run trained or
sampled, with its seed and sha256) and ``plots`` (the house style).  CONTRIBUTING.md §3 gives a package's
shape."""
