"""The methods layer: one package per paper (``tecqa``, ``star_rag``, ``timer4``, ``ia_rag``, ``sar``) and
the tour's semantic baseline (``semantic``), each exposing the paper's steps, one
:class:`~temporag.methods.base.Method` (``retrieve`` and the inherited ``pipeline``) and its registry
``ENTRY``; beside them the layer's own modules: ``base`` (the retrieval interface), ``registry`` (methods
found by name, the kit's and installed ones), ``book_entry`` (what the book shows for a notebook),
``workspace`` (what every method on one KG shares) and ``artifacts`` (what a run trained or sampled, with
its seed and sha256).  CONTRIBUTING.md §3 gives a package's shape."""
