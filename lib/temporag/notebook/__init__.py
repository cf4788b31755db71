"""The notebook harness, above the methods it runs: ``start()`` right after the parameters cell (the
notebook's declared parameters found through the registry), the Results recorder and the output-folder
rules.  The parameter vocabulary and the house plots a method package uses live below, in
:mod:`temporag.methods.params` and :mod:`temporag.methods.plots`."""

from temporag.notebook.session import start

__all__ = ["start"]
