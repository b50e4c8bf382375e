"""Token refresh under load: many users, one token provider per Locust process.

    authzkit sandbox --port 8089 --token-ttl 4 &
    locust -f locustfiles/token_refresh.py --headless -u 100 -r 100 -t 12s \
        --host http://127.0.0.1:8089 --wait-time 0.5-1.5

Every user asks the shared provider for the access token on every call; the ``token`` row
shows how few token calls that makes (one per token lifetime and process, never one per
user), 401s appear in the failures by error type, and the provider's counters (token
calls, refreshes, per process) are logged at exit and written to ``--summary-file``.
"""

from authzkit.loadtest.record.users import TokenRefreshUser

__all__ = ["TokenRefreshUser"]
