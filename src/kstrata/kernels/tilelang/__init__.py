"""Initial TileLang candidates (data files, one per suite task)."""
