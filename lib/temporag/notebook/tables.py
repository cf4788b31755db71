"""A notebook's styled tables, escaped: the one way a notebook turns a frame into a pandas Styler.

pandas' Styler writes its labels and string cells into HTML as they are (``DataFrame._repr_html_`` escapes,
``.style`` does not), and the labels of the kit's tables are question types read from a user's
``questions_file``: a type named ``<img src=x onerror=…>`` would run in JupyterLab and in every book built
from the run.  :func:`styled` escapes values, row and column labels and the axes' names; numbers are
formatted exactly as ``Styler.format`` would.
"""

from __future__ import annotations

from typing import Any

import pandas as pd


def styled(frame: pd.DataFrame, formatter: Any = None):
    """``frame.style.format(formatter)`` with every value, label and axis name HTML-escaped."""
    styler = frame.style.format(formatter, escape="html")
    for axis in (0, 1):
        styler = styler.format_index(escape="html", axis=axis).format_index_names(escape="html", axis=axis)
    return styler
