"""Authorize load: plain calls and the full challenge round trip, over both Locust clients.

    locust -f locustfiles/authorize.py --headless -u 20 -r 20 -t 30s --host URL AuthorizeUser

Users: ``AuthorizeUser`` / ``FastAuthorizeUser`` (plain authorize) and ``ChallengeUser`` /
``FastChallengeUser`` (authorize → 403 challenge → JWE → authorize with the solution; rows
for each step and one ``FLOW`` row for the whole). The classes live in
:mod:`authzkit.loadtest`, so ``authzkit loadtest`` runs the very same code from an
installed package; options: ``locust -f locustfiles/authorize.py --help`` (section
"Custom arguments").
"""

from authzkit.loadtest import AuthorizeUser, ChallengeUser, FastAuthorizeUser, FastChallengeUser

__all__ = ["AuthorizeUser", "ChallengeUser", "FastAuthorizeUser", "FastChallengeUser"]
