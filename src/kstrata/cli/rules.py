"""``kstrata rules [--backend B]``: what a candidate may and may not do there,
as the verifier checks it (the integrity rules the agents' prompts state)."""

from __future__ import annotations

import typer

from kstrata.cli.errors import Console, user_errors

console = Console()


def register(app: typer.Typer) -> None:
    """Add the ``rules`` command to ``app``."""

    @app.command("rules")
    def rules(
        backend: str = typer.Option("pytorch", "--backend", "-b", help="The candidate's backend."),
    ) -> None:
        """The integrity rules a candidate on BACKEND is held to (imports, compute, state, outputs)."""
        from kstrata.agents.prompt import integrity_rules
        from kstrata.backends.registry import get_backend

        with user_errors():
            get_backend(backend)  # an unknown name is one clear error
        console.print(f"a {backend} candidate is rejected (verdict `rejected`, the check named) when it breaks one "
                      "of these (`--preset warn` makes most of them warnings; those marked so stay errors):", highlight=False, markup=False)
        for rule in integrity_rules(backend):
            console.print(f"  - {rule}", highlight=False, markup=False, soft_wrap=True)
