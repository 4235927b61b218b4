"""``python -m kstrata``: the ``kstrata`` command, for a checkout on ``PYTHONPATH``
that pip did not install (no ``kstrata`` script on ``PATH``)."""

from kstrata.cli.main import app

app(prog_name="kstrata")
