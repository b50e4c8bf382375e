"""Authorize load: plain calls and the full challenge round trip, over both Locust clients.

    locust -f locustfiles/authorize.py --headless -u 20 -r 20 -t 30s --host URL AuthorizeUser

Users: ``AuthorizeUser`` / ``FastAuthorizeUser`` (plain authorize) and ``ChallengeUser`` /
``FastChallengeUser`` (authorize → 403 challenge → JWE → authorize with the solution; rows
for each step and one ``FLOW`` row for the whole). The classes live in
`authzkit.loadtest.record.users`, so ``authzkit loadtest`` runs the very same code from an
installed package. authzkit's own options: ``--wait-time 0.5-2``, ``--subjects FILE``,
``--client-id`` / ``--client-secret`` (default ``AUTHZKIT_CLIENT_*``), ``--auth-url``, the
provider's OIDC token endpoint with ``--issuer`` / ``--token-url``, ``--client-auth``
(``client_secret_post``, ``client_secret_basic``, ``private_key_jwt``) and
``--client-key-file`` (default ``AUTHZKIT_ISSUER``/``_TOKEN_URL``/``_CLIENT_AUTH``/
``_CLIENT_KEY_FILE``),
``--action`` / ``--challenge-action`` (default ``AUTHZKIT_PLAIN_ACTION`` /
``AUTHZKIT_CHALLENGE_ACTION``; the sandbox's demo actions only when the users read its world,
so a real environment must name the action its user class sends, or locust exits 2),
``--max-p95-ms``, ``--max-failure-ratio`` and ``--summary-file`` (see the README's "Load
testing"). ``authzkit loadtest`` takes ``--action`` / ``--challenge-action`` itself and asks
once per subject before any load (its preflight).

Open model: ``OpenAuthorizeUser`` / ``OpenChallengeUser`` with ``--rate R`` (requests or
flows per second in total; one user per process: ``-u`` = number of processes),
``--arrivals constant|poisson``, ``--arrivals-seed N`` and ``--max-in-flight N``:

    locust -f locustfiles/authorize.py --headless -u 1 -t 30s --host URL \
        --rate 200 OpenAuthorizeUser
"""

from authzkit.loadtest.record.users import (
    AuthorizeUser,
    ChallengeUser,
    FastAuthorizeUser,
    FastChallengeUser,
    OpenAuthorizeUser,
    OpenChallengeUser,
)

__all__ = ["AuthorizeUser", "ChallengeUser", "FastAuthorizeUser", "FastChallengeUser",
           "OpenAuthorizeUser", "OpenChallengeUser"]
