"""Notebook HTML made safe to open: the one allowlist every page of the book and the index passes through.

A book or an index is shared, and what it shows comes from other people's notebooks, grids and question
files: an output's ``<script>`` or ``onerror=`` would run in the reader's browser.  nbconvert's own
sanitiser (``sanitize_html``, bleach) is switched on, but its ``clean_html`` allows only a dozen inline
tags and escapes the rest, so headings, paragraphs, table headers and images would show as text.  This
module is the ``clean_html`` the exporter uses instead: the tags a notebook's tables, markdown and the
kit's own pages need, no event handler or script URL, ``<img>`` only from ``data:image/…`` or a relative
or http(s) address, and the content of ``<script>``, ``<style>`` and the like dropped with them (a
dataframe's own ``<style scoped>`` block included: the page's stylesheet styles its tables).  Images
shown as ``image/png`` or ``image/svg+xml`` outputs are ``<img>`` tags the template writes, untouched.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import bleach
from bleach.css_sanitizer import CSSSanitizer
from bleach.html5lib_shim import Filter

TAGS = frozenset(
    {
        *("a", "abbr", "b", "blockquote", "br", "caption", "cite", "code", "col", "colgroup", "dd", "del"),
        *("details", "div", "dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6"),
        *("hr", "i", "img", "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "s", "samp", "small"),
        *("span", "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead"),
        *("tr", "u", "ul", "var"),
    }
)
#: dropped with everything inside them (their text is code or markup, never something to read)
DROPPED = frozenset({"script", "style", "template", "iframe", "object", "embed", "noscript", "textarea"})
_EVERYWHERE = frozenset({"class", "id", "title", "style"})
_ON_TAG = {
    "a": {"href", "name"},
    "img": {"src", "alt", "width", "height"},
    "td": {"colspan", "rowspan", "align"},
    "th": {"colspan", "rowspan", "align", "scope"},
    "col": {"span"},
    "colgroup": {"span"},
    "ol": {"start"},
}
PROTOCOLS = frozenset({"http", "https", "mailto", "data"})  # data: only for an image, see _allowed


def _allowed(tag: str, name: str, value: str) -> bool:
    """Whether attribute ``name`` of ``tag`` may stay (bleach then checks a URL's protocol)."""
    if tag in DROPPED or not (name in _EVERYWHERE or name in _ON_TAG.get(tag, ())):
        return False
    scheme = value.strip().lower()
    if name == "href" and scheme.startswith("data:"):
        return False
    return not (name == "src" and scheme.startswith("data:") and not scheme.startswith("data:image/"))


class _DropContent(Filter):
    """Removes the elements of :data:`DROPPED` together with their content (bleach keeps the text of a
    tag it strips, so a ``<script>``'s code would show as text)."""

    def __iter__(self) -> Iterator[dict[str, Any]]:
        inside = 0
        for token in Filter.__iter__(self):
            kind = token["type"]
            if kind in ("StartTag", "EndTag", "EmptyTag") and token.get("name") in DROPPED:
                if kind == "StartTag":
                    inside += 1
                elif kind == "EndTag":
                    inside = max(0, inside - 1)
                continue
            if not inside:
                yield token


_CLEANER = bleach.Cleaner(
    tags=TAGS | DROPPED,  # let through to _DropContent, which removes them with their content
    attributes=_allowed,
    protocols=PROTOCOLS,
    strip=True,
    strip_comments=True,
    filters=[_DropContent],
    css_sanitizer=CSSSanitizer(),
)


def clean_html(element: str | bytes) -> str:
    """``element`` with only the allowlisted tags and attributes (nbconvert's ``clean_html`` filter)."""
    return _CLEANER.clean(element.decode() if isinstance(element, bytes) else str(element))


def html_exporter(template_file: str, **traits: Any):
    """nbconvert's lab-template HTML exporter over the kit's offline templates, with the sanitiser on:
    every HTML and markdown output, markdown cell and raw HTML cell passes :func:`clean_html`, and
    JavaScript outputs are left out."""
    from nbconvert import HTMLExporter

    from temporag.batch.index import TEMPLATES

    return HTMLExporter(
        template_name="lab",
        extra_template_paths=[str(TEMPLATES)],
        template_file=template_file,
        sanitize_html=True,
        filters={"clean_html": clean_html},
        **traits,
    )
