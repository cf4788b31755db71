"""One leaderboard for every method of the kit under one protocol.

None of the five papers compares the methods under one protocol: each uses its own embedder, reader,
sample and scoring rule.  Here every MultiTQ method runs through the retrieval interface on the same
questions with the same embedder (all-MiniLM-L6-v2) and is scored the same way:

* :mod:`.roster` builds every row the method packages register (:mod:`temporag.methods.registry`: the semantic
  baseline, STAR-RAG as printed and the released code's retrieval, TimeR4, TECQA paper-faithful and the
  kit's improved variant, SAR's offline policy, and any installed package's rows);
* :mod:`.scores` turns each method's native context into answer recall@k, the LLM-free template reader's
  Hits@1 (strict and lenient, :mod:`temporag.answer.template_reader`), context tokens, latency, bootstrap
  intervals and breakdowns, plus the embedded reader on a small sample;
* :mod:`.documents` puts Vanilla RAG beside IA-RAG on the document data sets;
* :mod:`.submission` scores a researcher's own predictions file under the same protocol
  (``temporag score``);
* :mod:`.report` makes the tables (leaderboard, breakdowns, the papers' headlines beside the kit's under
  both protocols, paper vs released code vs kit) and the summary figure.
* :mod:`.experiments` holds the notebook's loops (scoring every entry, the ceilings, the breakdowns), so
  each cell is a step of a few lines;
* :mod:`.record` is the one module that writes into the run's results: every metric, table and
  per-question outcome under the names the committed runs use, with the caption each table is saved with.

``notebooks/leaderboard.ipynb`` calls these in a few lines per cell.
"""

from temporag.leaderboard import documents, report, roster, scores, submission

__all__ = ["documents", "report", "roster", "scores", "submission"]
