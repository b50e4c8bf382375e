"""The notebook's closing step: stop the sandbox (or close the client) once no form waits."""

from __future__ import annotations

from authzkit.shared.connection import Connection
from authzkit.widgets.form import ChallengeForm


def close_when_done(connection: Connection, *forms: ChallengeForm) -> str:
    """Close ``connection`` now, or once every form waiting for a person is finished.

    A notebook ends by stopping its sandbox, but a form that waits for a click (Voila,
    ``AUTHZKIT_AUTO_SUBMIT=0``) still needs it: then the stop waits for the answer.
    Returns what happened, for the cell to print.
    """
    pending = [form for form in forms if not form.done]
    if not pending:
        connection.close()
        return "sandbox stopped" if connection.is_sandbox else "client closed"
    remaining = set(map(id, pending))

    def one_done(form: ChallengeForm) -> None:
        remaining.discard(id(form))
        if not remaining:
            connection.close()

    for form in pending:
        form.on_done(one_done)
    what = "the sandbox stops" if connection.is_sandbox else "the client closes"
    return f"{len(pending)} form(s) still wait for an answer; {what} once they are answered"


__all__ = ["close_when_done"]
